"""The memory model's training-stack fields reach plans: they decide which GPUs a plan may use."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]

FULL_FINE_TUNE_7B = {
    "kind": "fine_tune",
    "model": {"name": "Mistral 7B"},
    "method": "full",
    "batch_size": 1,
    "seq_len": 1024,
    "recompute": "full",
    "tokens": 20_000_000,
    "constraints": {"gpus": ["L4", "A10G", "RTX 4090"], "max_gpus": 1},
}
# the "7B-class full fine-tune on one 24 GB card" recipe: pure bf16, paged 8-bit AdamW stepped in backward
ONE_CARD_RECIPE = {"master_weights": "none", "optimizer": "paged_adamw_8bit", "optimizer_in_backward": True}


def test_pure_bf16_paged_optimizer_in_backward_fits_a_24_gb_card(client: Client) -> None:
    mixed = client.post("/v1/plans", json=FULL_FINE_TUNE_7B)
    assert mixed.status_code == 422, mixed.text  # fp32 master copy + AdamW: ~16 B/param, no 24 GB card
    reasons = {reason["reason"] for gpu in mixed.json()["rejected"] for reason in gpu["reasons"]}
    assert "memory" in reasons
    lean = client.post("/v1/plans", json={**FULL_FINE_TUNE_7B, **ONE_CARD_RECIPE})
    assert lean.status_code == 201, lean.text
    plan = lean.json()
    memory = plan["estimate"]["memory"]
    assert plan["choice"]["gpu_count"] == 1 and memory["capacity_gib"] == 24
    assert memory["fit_counter"] == "per_gpu_gib" and memory["per_gpu_gib"] <= memory["capacity_gib"]
    assert memory["allocated_gib"] <= memory["reserved_gib"] <= memory["per_gpu_gib"]
    assert memory["host_ram_gib"] > 0  # the paged optimizer state lives in managed (host) memory
    band_high = memory["band"]["high_gib"]
    codes = {warning["code"] for warning in plan["warnings"]}
    assert ("memory_band_exceeds_capacity" in codes) == (band_high > memory["capacity_gib"])


def test_offload_moves_state_to_host_ram_in_a_plan(client: Client) -> None:
    body = {
        **FULL_FINE_TUNE_7B,
        "offload": "optimizer",
        "constraints": {"gpus": ["L40S", "A6000"], "max_gpus": 1},
    }
    without = client.post("/v1/plans", json={**body, "offload": "none"})
    offloaded = client.post("/v1/plans", json=body)
    assert offloaded.status_code == 201, offloaded.text
    memory = offloaded.json()["estimate"]["memory"]
    assert (
        memory["host_ram_gib"] > 7 * 12
    )  # master copy, optimizer state and an fp32 gradient copy: ~16 B/param
    if without.status_code == 201:
        assert without.json()["estimate"]["memory"]["per_gpu_gib"] > memory["per_gpu_gib"]
    else:
        assert without.status_code == 422


def test_lora_targets_change_the_plan_memory(client: Client) -> None:
    lora = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.1 8B"},
        "method": "lora",
        "batch_size": 2,
        "seq_len": 2048,
        "recompute": "none",
        "tokens": 10_000_000,
        "constraints": {"gpus": ["H100 SXM"], "max_gpus": 1},
    }
    qv = client.post("/v1/plans", json={**lora, "lora_targets": "qv"}).json()["estimate"]["memory"]
    every = client.post("/v1/plans", json={**lora, "lora_targets": "all_linear"}).json()["estimate"]["memory"]
    assert every["allocated_gib"] > qv["allocated_gib"]
