"""owned_inventory (issue 24, "Every price kind"): GPUs already owned are priced at their marginal
running cost (the capital is spent), used up to their count, and a job needing more goes elsewhere with
the reason; the full-cost owned basis (owned_utilization) stays for GPUs not in the inventory."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.plans.test_api_plans import LORA_8B

Client = TestClient[Any]
PRETRAIN_8B = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "micro_batch": 8, "seq_len": 2048,
               "tokens": 100_000_000_000, "constraints": {"deadline_hours": 70}}  # fmt: skip


def _plan(client: Client, body: dict[str, Any]) -> Any:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_owned_gpus_that_exist_cost_their_running_cost_only(client: Client) -> None:
    market = _plan(client, LORA_8B)
    owned = _plan(
        client, {**LORA_8B, "owned_inventory": [{"gpu": "H100 SXM", "count": 2, "usd_per_gpu_hour": 0.5}]}
    )
    choice = owned["choice"]
    assert (choice["acquisition"], choice["gpu"]) == ("own", "h100-sxm") and choice["gpu_count"] <= 2
    assert choice["owned"]["usd_per_busy_gpu_hour"] == pytest.approx(0.5)
    assert (
        "already owned" in choice["owned"]["assumptions"][0]
        and "capital is spent" in choice["owned"]["assumptions"][0]
    )
    assert owned["cost"]["total_usd"] < market["cost"]["total_usd"]
    derived = _plan(client, {**LORA_8B, "owned_inventory": [{"gpu": "H100 SXM", "count": 2}]})
    assert 0 < derived["choice"]["owned"]["usd_per_busy_gpu_hour"] < 0.5  # the sheet's busy-hour energy


def test_a_job_needing_more_than_the_inventory_rents_and_says_why(client: Client) -> None:
    plan = _plan(client, {**PRETRAIN_8B, "owned_inventory": [{"gpu": "H100 SXM", "count": 16}]})
    assert plan["choice"]["acquisition"] == "rent" and plan["choice"]["gpu_count"] > 16
    messages = [w["message"] for w in plan["warnings"] if w["code"] == "availability_cap"]
    assert any("more than the 16 owned (owned_inventory)" in m for m in messages)


def test_an_inventory_gpu_is_a_400_naming_its_field_when_unknown(client: Client) -> None:
    response = client.post(
        "/v1/plans", json={**LORA_8B, "owned_inventory": [{"gpu": "no such gpu", "count": 1}]}
    )
    assert response.status_code == 400 and "owned_inventory[0].gpu" in response.text
