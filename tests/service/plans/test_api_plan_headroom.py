"""Plans leave memory headroom and use only the parallelism the job's stack has (issue 24)."""

from __future__ import annotations

from typing import Any

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
