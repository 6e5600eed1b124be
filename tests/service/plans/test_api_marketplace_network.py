"""Issue 24, "networks as they are", through POST /v1/plans: separate marketplace rentals are never one
cluster unless a sheet states their network, and a marketplace host's interruption rate is the stated
marketplace assumption, not a hyperscaler cluster's."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.db.seed_files import read_gpu_specs
from solver.costs.reliability import MARKETPLACE_RATE_MULTIPLE, interruption_rate
from tests.service.admin import AUTH

Client = TestClient[Any]

MARKETPLACES = ("vast", "lium", "spheron", "primeintellect", "shadeform", "hyperbolic", "yotta")

# A 1B pretrain on marketplace GPUs only. Before issue 24 its alternatives included 4 separate
# spheron gpu_1x_6000_ada rentals run as one cluster over an assumed 10 Gbit/s ethernet.
ON_MARKETPLACES = {
    "kind": "train",
    "model": {"name": "Llama 3.2 1B"},
    "micro_batch": 8,
    "seq_len": 2048,
    "tokens": 50_000_000_000,
    "constraints": {"providers": list(MARKETPLACES)},
    "top_k": 20,
}
# An 8B pretrain on B200 whose deadline needs more GPUs than one marketplace instance holds.
MANY_B200 = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "micro_batch": 4,
    "seq_len": 4096,
    "tokens": 300_000_000_000,
    "constraints": {"gpus": ["B200"], "max_gpus": 64, "deadline_hours": 150},
    "top_k": 20,
}
LORA_ON_LIUM = {
    "kind": "fine_tune",
    "model": {"name": "meta-llama/Llama-3.1-8B"},
    "method": "lora",
    "micro_batch": 4,
    "seq_len": 2048,
    "recompute": "selective",
    "tokens": 2_000_000_000,
    "constraints": {"providers": ["lium"]},
}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def _offers(client: Client) -> dict[tuple[str, str], dict[str, Any]]:
    response = client.get("/v1/offers", params={"limit": 1000})
    assert response.status_code == 200, response.text
    return {(o["provider"], o["instance_type"]): o for o in response.json()["items"]}


def _spans_separate_rentals(point: dict[str, Any], offers: dict[tuple[str, str], dict[str, Any]]) -> bool:
    """A point that runs on more GPUs than one instance holds, on an offer whose network the sheet does
    not state, at a marketplace (or on an offer whose network is ``none``)."""
    offer = offers.get((point["provider"], point["instance_type"]))
    if offer is None or point["gpu_count"] <= offer["gpus_per_instance"]:
        return False
    unstated_marketplace = point["provider"] in MARKETPLACES and offer["network"]["derived"]
    return bool(unstated_marketplace or offer["network"]["class"] == "none")


def _points(plan: dict[str, Any]) -> list[dict[str, Any]]:
    choice = plan["choice"]
    offer = choice["offer"]
    chosen = {"provider": offer["provider"], "instance_type": offer["instance_type"], **choice}
    return [chosen, *plan["alternatives"], *plan["pareto"]]


@pytest.mark.parametrize("body", [ON_MARKETPLACES, MANY_B200], ids=["marketplaces-only", "many-b200"])
def test_a_training_plan_never_spans_separate_marketplace_rentals(
    client: Client, body: dict[str, Any]
) -> None:
    plan = _plan(client, body)
    offers = _offers(client)
    spanning = [p for p in _points(plan) if _spans_separate_rentals(p, offers)]
    assert spanning == []
    if plan["choice"]["instances"] > 1:
        assert plan["choice"]["offer"]["network"]["class"] != "none"


def test_restricted_to_marketplace_b200_the_plan_is_refused_with_the_network_rule(client: Client) -> None:
    body = {**MANY_B200, "constraints": {**MANY_B200["constraints"], "providers": ["lium", "spheron"]}}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 422, response.text
    assert "marketplace" in response.text and "network" in response.text


def test_a_marketplace_sheet_that_states_infiniband_admits_multi_instance_training(admin: Client) -> None:
    sheet = (
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,network_class\n"
        "lium,B200_8x_ib,B200,8,US,52.0,infiniband\n"
    )
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "lium-cluster", "format": "rental_csv"},
        content=sheet.encode(),
        headers={**AUTH, "content-type": "text/csv"},
    )
    assert response.status_code == 201, response.text
    body = {**MANY_B200, "constraints": {**MANY_B200["constraints"], "providers": ["lium"]}}
    plan = _plan(admin, body)
    choice = plan["choice"]
    assert choice["instances"] > 1 and choice["offer"]["instance_type"] == "B200_8x_ib"
    network = choice["offer"]["network"]
    assert network["class"] == "infiniband" and network["derived"] is False


def _expected_rate(plan: dict[str, Any], multiple: float) -> float:
    """The rate a plan should report: its GPU generation's cluster rate × ``multiple``, less the
    network's share when the job stays inside one instance."""
    architecture = next(g.architecture for g in read_gpu_specs() if g.gpu_id == plan["choice"]["gpu"])
    row = interruption_rate(architecture)
    inside = 1 - row.network_share if plan["choice"]["instances"] == 1 else 1.0
    return row.per_gpu_hour * multiple * inside


def test_a_marketplace_plan_shows_the_marketplace_interruption_rate(client: Client) -> None:
    plan = _plan(client, LORA_ON_LIUM)
    assert plan["choice"]["offer"]["provider"] == "lium"
    rate = plan["estimate"]["reliability"]["interruptions_per_gpu_hour"]
    assert rate == pytest.approx(_expected_rate(plan, MARKETPLACE_RATE_MULTIPLE))
    failures = plan["cost"]["assumptions"]["failures_usd"]
    assert "ASSUMPTION" in failures and "marketplace" in failures


def test_a_hyperscaler_plan_keeps_the_cluster_rate(client: Client) -> None:
    plan = _plan(client, {**LORA_ON_LIUM, "constraints": {"providers": ["aws"]}})
    rate = plan["estimate"]["reliability"]["interruptions_per_gpu_hour"]
    assert rate == pytest.approx(_expected_rate(plan, 1.0))
    assert "ASSUMPTION" not in plan["cost"]["assumptions"]["failures_usd"]
