"""Reserved prices and owned purchase units through POST /v1/plans (issue 24, "every price kind").

A sheet's 1- and 3-year reserved prices become plan supplies when ``constraints.reserved`` allows
them, billed for whole terms; each kind's best is shown side by side and the cheapest is chosen. Owned
GPUs are bought in whole purchase units (8-GPU boards, 72-GPU NVL72 racks) on a stated utilisation."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]

SHEET = (
    "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,"
    "reserved_1y_price_per_hour_usd,reserved_3y_price_per_hour_usd,network_class\n"
    "termco,termco.h100x8,H100 SXM,8,eu-west,24.00,12.00,8.00,infiniband\n"
)
"""One 8-GPU H100 offer at $24/h on demand, $12/h reserved for a year and $8/h for three."""

SHORT = {
    "kind": "fine_tune",
    "model": {"name": "meta-llama/Llama-3.1-8B"},
    "method": "lora",
    "micro_batch": 4,
    "seq_len": 2048,
    "tokens": 2_000_000_000,
    "constraints": {"providers": ["termco"], "max_gpus": 8},
}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def _upload(admin: Client) -> None:
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "termco", "format": "rental_csv"},
        content=SHEET.encode(),
        headers=AUTH,
    )
    assert response.status_code == 201, response.text


def test_reserved_prices_are_opt_in_billed_for_whole_terms_and_shown_beside_on_demand(admin: Client) -> None:
    _upload(admin)
    unasked = _plan(admin, SHORT)
    assert unasked["choice"]["offer"]["pricing"] == "on_demand"
    assert unasked["pricing_options"] == []  # one kind only: a commitment is never taken unasked
    plan = _plan(admin, {**SHORT, "constraints": {**SHORT["constraints"], "reserved": True}})
    options = {option["pricing"]: option for option in plan["pricing_options"]}
    assert set(options) == {"on_demand", "reserved_1y", "reserved_3y"}
    for kind, price, term in (("reserved_1y", 12.0, 8_760), ("reserved_3y", 8.0, 26_280)):
        option = options[kind]
        units = option["gpu_count"] // 8
        timed = ("compute_usd", "setup_usd", "checkpoint_usd", "failures_usd", "billing_rounding_usd")
        billed = sum(option["breakdown"][part] for part in timed)  # every hour the instances run
        assert billed == pytest.approx(price * units * term)  # the whole term, not the hours used
        assert f"whole {term:,} h terms" in option["price_basis"]
    # a short job: the whole-term bill of a reservation is far dearer, so on demand is chosen
    assert plan["choice"]["offer"]["pricing"] == "on_demand" and options["on_demand"]["chosen"]
    assert plan["cost"]["total_usd"] == min(o["total_usd"] for o in options.values())


def test_a_reservation_is_chosen_when_its_whole_term_is_the_cheapest(admin: Client) -> None:
    """A job of about a year on one 8-GPU instance: one 1-year term at half price beats on demand."""
    _upload(admin)
    long = {**SHORT, "tokens": 1_500_000_000_000, "constraints": {**SHORT["constraints"], "reserved": True}}
    plan = _plan(admin, long)
    options = {option["pricing"]: option for option in plan["pricing_options"]}
    chosen = plan["choice"]["offer"]["pricing"]
    assert chosen in ("reserved_1y", "reserved_3y") and options[chosen]["chosen"]
    assert plan["cost"]["total_usd"] == min(o["total_usd"] for o in options.values())
    term = {"reserved_1y": 8_760, "reserved_3y": 26_280}[chosen]
    assert (
        plan["cost"]["billable_hours"] % term == pytest.approx(0)
        and plan["cost"]["billing_increment_s"] == term * 3600
    )
    assert "whole" in plan["cost"]["assumptions"]["compute_usd"]


PRETRAIN_70B = {"kind": "train", "model": {"name": "Llama 3.1 70B"}, "tokens": 100_000_000_000}


def test_sixteen_gb200_are_bought_as_an_nvl72_rack_or_not_at_all(client: Client) -> None:
    capped = client.post(
        "/v1/plans",
        json={**PRETRAIN_70B, "acquisition": "own", "constraints": {"gpus": ["GB200"], "max_gpus": 64}},
    )
    assert capped.status_code == 422, capped.text
    reasons = {r["gpu"]: r["reasons"] for r in capped.json()["rejected"]}
    assert any("72 GPUs" in r["detail"] for r in reasons["gb200"])
    rack = _plan(
        client, {**PRETRAIN_70B, "acquisition": "own", "constraints": {"gpus": ["GB200"], "max_gpus": 144}}
    )
    choice = rack["choice"]
    assert choice["gpu_count"] % 72 == 0 and choice["owned"]["gpus_per_node"] == 72
    assert any("NVL72" in text for text in choice["owned"]["assumptions"])


def test_owned_gpus_come_in_whole_units_on_a_stated_utilisation(client: Client) -> None:
    plan = _plan(client, {**PRETRAIN_70B, "acquisition": "either", "owned_utilization": 0.5})
    owned = [o for o in plan["pricing_options"] if o["pricing"] == "owned"]
    assert owned, plan["pricing_options"]
    option = owned[0]
    assert option["owned_utilization"] == 0.5
    assert "50% utilisation" in option["price_basis"] and "assumption" in option["price_basis"]
    assert option["gpu_count"] % 8 == 0  # socketed parts: whole 8-GPU boards
    for alternative in [plan["choice"], *plan["alternatives"]]:
        if alternative.get("acquisition") == "own" or alternative.get("pricing") == "owned":
            assert alternative["gpu_count"] % 8 == 0
    if plan["choice"]["acquisition"] == "own":
        assert "one-off job" in plan["cost"]["assumptions"]["compute_usd"]
