"""Plans leave memory headroom and use only the parallelism the job's stack has (issue 24)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

LORA_8B = {
    "kind": "fine_tune",
    "model": {"name": "meta-llama/Llama-3.1-8B"},
    "method": "lora",
    "micro_batch": 4,
    "seq_len": 2048,
    "recompute": "selective",
    "tokens": 2_000_000_000,
}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def test_the_8b_lora_keeps_ten_percent_headroom_by_default(client: Client) -> None:
    kept = _plan(client, LORA_8B)["estimate"]["memory"]
    assert kept["per_gpu_gib"] <= 0.9 * kept["capacity_gib"]
    assert kept["band"]["high_gib"] <= kept["capacity_gib"]
    edge = _plan(client, {**LORA_8B, "constraints": {"memory_headroom": 0}})
    memory = edge["estimate"]["memory"]
    # without headroom the planner takes the cheaper layout at the edge of memory (97 % on 2 × L40S)
    assert memory["per_gpu_gib"] / memory["capacity_gib"] > kept["per_gpu_gib"] / kept["capacity_gib"]
    assert edge["cost"]["total_usd"] < _plan(client, LORA_8B)["cost"]["total_usd"]


def test_a_headroom_out_of_range_is_refused_naming_the_field(client: Client) -> None:
    response = client.post("/v1/plans", json={**LORA_8B, "constraints": {"memory_headroom": 0.6}})
    assert response.status_code == 400, response.text
    assert "memory_headroom" in response.text


def test_no_qlora_at_tensor_parallel_on_the_standard_stack(client: Client) -> None:
    qlora = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3 70B"},
        "method": "qlora",
        "precision": "nf4",
        "seq_len": 2048,
        "tokens": 100_000_000,
    }
    plan = _plan(client, qlora)
    layout = plan["choice"]["layout"]
    assert (layout["tp"], layout["pp"], layout["cp"]) == (1, 1, 1)
    assert plan["choice"]["gpu_count"] == layout["dp"]
    assert "(nf4 weights, bf16 matmuls)" in plan["estimate"]["throughput"]["method"]  # not plain "bf16"


def test_the_front_shows_what_the_headroom_costs(client: Client) -> None:
    """Beside the front at 10 % headroom, the configurations that fit only below it: the plan at 0 %
    headroom (2 × L40S at 97 % of their memory) is one of them, at its own cost and hours."""
    kept = _plan(client, LORA_8B)
    edge = _plan(client, {**LORA_8B, "constraints": {"memory_headroom": 0}})
    below = kept["pareto_below_headroom"]
    assert below and edge["pareto_below_headroom"] == []  # nothing is below a headroom of 0
    for point in below:
        assert point["per_gpu_gib"] <= point["capacity_gib"]  # fits the GPU, not the headroom
        assert (
            point["per_gpu_gib"] > 0.9 * point["capacity_gib"]
            or point["band_high_gib"] > point["capacity_gib"]
        )
        assert point["headroom"] == pytest.approx(1 - point["per_gpu_gib"] / point["capacity_gib"])
        assert point["usd_below_choice"] == pytest.approx(kept["cost"]["total_usd"] - point["cost_usd"])
        # each would join the front: no point on it is as cheap and as fast
        assert not any(
            p["cost_usd"] <= point["cost_usd"] and p["hours"] <= point["hours"] for p in kept["pareto"]
        )
    choice = edge["choice"]
    same = [
        p
        for p in below
        if (p["gpu"], p["gpu_count"], p["instance_type"])
        == (choice["gpu"], choice["gpu_count"], choice["offer"]["instance_type"])
    ]
    assert len(same) == 1
    assert same[0]["cost_usd"] == pytest.approx(edge["cost"]["total_usd"])
    assert same[0]["hours"] == pytest.approx(edge["estimate"]["hours"])
    assert same[0]["per_gpu_gib"] == pytest.approx(edge["estimate"]["memory"]["per_gpu_gib"])
    assert same[0]["usd_below_choice"] > 0  # "at 0 % headroom this would cost $X less"


def test_what_the_headroom_costs_follows_the_amount_of_work(client: Client) -> None:
    """The L40S runs the 8B LoRA only below the headroom at every count; twice the tokens take about
    twice its hours (the plan cache keys those hours by the work, as it does the front's)."""

    def l40s_hours(tokens: int) -> dict[tuple[int, str | None], float]:
        below = _plan(client, {**LORA_8B, "tokens": tokens})["pareto_below_headroom"]
        return {(p["gpu_count"], p["instance_type"]): p["hours"] for p in below if p["gpu"] == "l40s"}

    once, twice = l40s_hours(2_000_000_000), l40s_hours(4_000_000_000)
    shared = once.keys() & twice.keys()
    assert shared, (once, twice)
    for key in shared:
        assert 1.9 < twice[key] / once[key] < 2.1, (key, once[key], twice[key])
