"""The complete charge through POST /v1/plans on the shipped data: breakdown, reliability, spot beside
on-demand, overrides, and provider-cost sheets uploaded as versions."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]

LONG_MULTI_NODE = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "batch_size": 4,
    "seq_len": 4096,
    "tokens": 300_000_000_000,
    "constraints": {"gpus": ["H100 SXM"], "max_gpus": 64, "deadline_hours": 300},
}
SPOT = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "batch_size": 4,
    "seq_len": 4096,
    "tokens": 200_000_000_000,
    "constraints": {"spot": True, "deadline_hours": 1000},
}
LORA = {
    "kind": "fine_tune",
    "model": {"name": "meta-llama/Llama-3.1-8B"},
    "method": "lora",
    "batch_size": 4,
    "seq_len": 2048,
    "recompute": "selective",
    "tokens": 2_000_000_000,
}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def test_a_long_multi_node_job_shows_its_interruptions_and_checkpoint_interval(client: Client) -> None:
    plan = _plan(client, LONG_MULTI_NODE)
    choice, estimate, cost = plan["choice"], plan["estimate"], plan["cost"]
    assert choice["instances"] > 1 and choice["gpu_count"] >= 16
    reliability = estimate["reliability"]
    assert reliability["expected_interruptions"] > 0.1
    assert 0 < reliability["checkpoint_interval_hours"] < estimate["compute_hours"]
    assert reliability["interruptions_per_gpu_hour"] == pytest.approx(419 / (54 * 24 * 16_384))
    assert cost["breakdown"]["failures_usd"] > 0 and cost["breakdown"]["checkpoint_usd"] > 0
    assert (
        "Llama 3" in cost["assumptions"]["failures_usd"]
        and "Young/Daly" in cost["assumptions"]["checkpoint_usd"]
    )
    assert cost["total_usd"] == pytest.approx(sum(cost["breakdown"].values()))
    assert estimate["hours"] == pytest.approx(
        estimate["compute_hours"]
        + reliability["setup_hours"]
        + reliability["checkpoint_hours"]
        + reliability["lost_hours"]
    )

    flaky = _plan(client, {**LONG_MULTI_NODE, "reliability": {"interruptions_per_gpu_hour": 5e-4}})
    flaky_reliability = flaky["estimate"]["reliability"]
    assert flaky_reliability["interruptions_per_gpu_hour"] == 5e-4
    assert flaky_reliability["expected_interruptions"] > 10 * reliability["expected_interruptions"]
    assert flaky_reliability["checkpoint_interval_hours"] < reliability["checkpoint_interval_hours"]
    assert flaky["cost"]["total_usd"] > cost["total_usd"]
    assert "given" in flaky["cost"]["assumptions"]["failures_usd"]

    fixed = _plan(client, {**LONG_MULTI_NODE, "data": {"checkpoint_every_hours": 0.25, "checkpoint_gb": 500}})
    assert fixed["estimate"]["reliability"]["checkpoint_interval_hours"] == 0.25
    assert fixed["estimate"]["data"]["checkpoint_gb"] == 500
    assert fixed["cost"]["breakdown"]["checkpoint_usd"] > cost["breakdown"]["checkpoint_usd"]


def test_a_spot_plan_shows_preemption_beside_on_demand(client: Client) -> None:
    plan = _plan(client, SPOT)
    options = {o["pricing"]: o for o in plan["pricing_options"]}
    assert {"on_demand", "spot"} <= set(options)
    spot, on_demand = options["spot"], options["on_demand"]
    assert spot["expected_preemptions"] > 0 and spot["breakdown"]["preemption_usd"] > 0
    assert on_demand["expected_preemptions"] == 0 and on_demand["breakdown"]["preemption_usd"] == 0
    for option in options.values():
        assert option["total_usd"] == pytest.approx(sum(option["breakdown"].values()))
        assert option["hours_band"]["low"] <= option["hours"] <= option["hours_band"]["high"]
    assert sum(o["chosen"] for o in options.values()) == 1
    chosen = next(o for o in options.values() if o["chosen"])
    assert chosen["total_usd"] == pytest.approx(plan["cost"]["total_usd"])
    assert chosen["total_usd"] <= min(o["total_usd"] for o in options.values()) + 1e-6
    # preemption widens the band: the spot option's relative band is wider than on-demand's
    width = {k: (o["hours_band"]["high"] - o["hours_band"]["low"]) / o["hours"] for k, o in options.items()}
    assert width["spot"] > width["on_demand"]

    rarely = _plan(client, {**SPOT, "reliability": {"preemptions_per_hour": 0.001}})
    rare = {o["pricing"]: o for o in rarely["pricing_options"]}["spot"]
    assert rare["expected_preemptions"] < spot["expected_preemptions"]
    without = _plan(client, {**SPOT, "constraints": {**SPOT["constraints"], "spot": False}})
    assert without["pricing_options"] == [] and without["cost"]["breakdown"]["preemption_usd"] == 0


def test_given_data_sizes_are_used_and_labelled(client: Client) -> None:
    plan = _plan(client, {**LORA, "data": {"dataset_gb": 250, "egress_gb": 40}})
    data, assumptions = plan["estimate"]["data"], plan["cost"]["assumptions"]
    assert data["dataset_gb"] == 250 and data["egress_gb"] == 40
    assert "dataset: given" in assumptions["setup_usd"] and "(given)" in assumptions["data_transfer_usd"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"data": {"dataset_gb": -1}}, "data.dataset_gb"),
        ({"data": {"checkpoint_gb": 0}}, "data.checkpoint_gb"),
        ({"data": {"shards": 3}}, '"field":"data.shards"'),
        ({"data": "big"}, '"field":"data"'),
        ({"reliability": {"interruptions_per_gpu_hour": 2}}, "reliability.interruptions_per_gpu_hour"),
        ({"reliability": {"restart_minutes": "ten"}}, "reliability.restart_minutes"),
    ],
)
def test_bad_data_or_reliability_is_a_400_naming_the_field(
    client: Client, body: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/plans", json={**LORA, **body})
    assert response.status_code == 400, response.text
    assert field in response.text


def test_an_uploaded_provider_cost_sheet_is_a_version_and_prices_the_next_plan(admin: Client) -> None:
    body = {**LORA, "constraints": {"providers": ["lium"]}, "data": {"egress_gb": 100}}
    before = _plan(admin, body)
    assert before["cost"]["breakdown"]["data_transfer_usd"] == 0  # lium publishes no egress price
    sheet = (
        "provider,provider_class,egress_usd_per_gb,storage_usd_per_gb_month,source\n"
        "lium,marketplace,0.05,0.5,lium pricing page (test)\n"
    )
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "lium-costs", "format": "provider_costs_csv"},
        content=sheet.encode(),
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    assert response.json()["kind"] == "provider_costs" and response.json()["result"] == "ok"
    after = _plan(admin, body)
    assert after["choice"]["offer"]["provider"] == "lium"
    assert after["cost"]["breakdown"]["data_transfer_usd"] == pytest.approx(100 * 0.05)
    assert "lium's published figure" in after["cost"]["assumptions"]["data_transfer_usd"]
    assert "lium pricing page (test)" in after["cost"]["assumptions"]["provider_costs"]
    assert after["cost"]["breakdown"]["storage_usd"] > before["cost"]["breakdown"]["storage_usd"]
    bad = admin.post(
        "/v1/price-sheets",
        params={"source": "lium-costs", "format": "provider_costs_csv"},
        content=b"provider,provider_class,egress_usd_per_gb,source\nlium,marketplace,-3,x\n",
        headers=AUTH,
    )
    assert bad.status_code == 422 and "egress_usd_per_gb" in bad.text
