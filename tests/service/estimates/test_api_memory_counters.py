"""POST /v1/memory end to end: the three counters, the checkpointing echoed, the peak phase, the host
memory offload needs, and the fit list against the catalog's capacities."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

LEVELS = ("none", "selective", "full")
PHASES = {"forward_backward", "optimizer_step", "inference"}
ALLOCATED_PARTS = (
    "weights",
    "master_weights",
    "gradients",
    "optimizer_state",
    "activations",
    "logits",
    "kv_cache",
    "buffers",
)
FULL_FT_8B = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "batch_size": 2, "seq_len": 2048}

WORKLOADS = [
    FULL_FT_8B,
    FULL_FT_8B | {"recompute": "full", "offload": "optimizer"},
    FULL_FT_8B | {"method": "lora", "recompute": "selective", "gpu_count": 4, "sharding": "zero3"},
    {"kind": "train", "model": {"name": "Llama 3 8B"}, "gpu_count": 8, "tp": 2, "recompute": "full"},
    {"kind": "batch_inference", "model": {"name": "Llama 3.1 8B"}, "batch_size": 8},
    {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "method": "qlora", "precision": "nf4"},
]


def memory(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/memory", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


@pytest.mark.parametrize("body", WORKLOADS)
def test_counters_nest_and_add_up_from_the_breakdown(client: Client, body: dict[str, Any]) -> None:
    result = memory(client, body)
    assert result["fit_counter"] == "per_gpu_gib"
    assert 0 < result["allocated_gib"] <= result["reserved_gib"] <= result["per_gpu_gib"]
    parts = result["breakdown"]
    assert sum(parts[name] for name in ALLOCATED_PARTS) == pytest.approx(result["allocated_gib"])
    assert result["allocated_gib"] + parts["fragmentation"] == pytest.approx(result["reserved_gib"])
    assert result["reserved_gib"] + parts["cuda_context"] + parts["nccl"] == pytest.approx(
        result["per_gpu_gib"]
    )
    assert result["band"]["low_gib"] <= result["per_gpu_gib"] <= result["band"]["high_gib"]
    assert result["peak_phase"] in PHASES
    assert result["host_ram_gib"] >= 0


def test_inference_peaks_in_inference_and_training_does_not(client: Client) -> None:
    assert memory(client, WORKLOADS[4])["peak_phase"] == "inference"
    assert memory(client, FULL_FT_8B)["peak_phase"] in {"forward_backward", "optimizer_step"}


@pytest.mark.parametrize("level", LEVELS)
def test_recompute_is_echoed(client: Client, level: str) -> None:
    assert memory(client, FULL_FT_8B | {"recompute": level})["recompute"] == level


def test_recompute_left_out_without_a_gpu_is_none(client: Client) -> None:
    left_out = memory(client, FULL_FT_8B)
    assert left_out["recompute"] == "none"
    assert left_out["per_gpu_gib"] == memory(client, FULL_FT_8B | {"recompute": "none"})["per_gpu_gib"]


def test_more_checkpointing_keeps_fewer_activations(client: Client) -> None:
    body = FULL_FT_8B | {"seq_len": 4096}
    runs = [memory(client, body | {"recompute": level}) for level in LEVELS]
    activations = [r["breakdown"]["activations"] for r in runs]
    assert activations[0] > activations[1] > activations[2] > 0
    per_gpu = [r["per_gpu_gib"] for r in runs]
    assert per_gpu == sorted(per_gpu, reverse=True)


def test_offload_needs_host_memory_and_frees_gpu_memory(client: Client) -> None:
    body = FULL_FT_8B | {"recompute": "full"}
    plain = memory(client, body)
    optimizer = memory(client, body | {"offload": "optimizer"})
    everything = memory(client, body | {"offload": "optimizer_and_params"})
    assert plain["host_ram_gib"] == 0
    assert 0 < optimizer["host_ram_gib"] < everything["host_ram_gib"]
    assert everything["per_gpu_gib"] < optimizer["per_gpu_gib"] < plain["per_gpu_gib"]
    # the master copy and the optimizer state are what moves to the host
    assert optimizer["breakdown"]["optimizer_state"] == 0 < plain["breakdown"]["optimizer_state"]
    assert optimizer["host_ram_gib"] >= plain["breakdown"]["optimizer_state"]


def test_each_fit_is_the_per_gpu_counter_against_the_catalog_capacity(client: Client) -> None:
    result = memory(client, FULL_FT_8B | {"recompute": "full"})
    capacity = {
        g["gpu_id"]: g["memory_gib"] for g in client.get("/v1/gpus", params={"limit": 1000}).json()["items"]
    }
    fits = result["fits"]
    assert {f["gpu_id"] for f in fits} == set(capacity)
    need, high = result["per_gpu_gib"], result["band"]["high_gib"]
    for fit in fits:
        assert fit["counter"] == result["fit_counter"] == "per_gpu_gib"
        assert fit["capacity_gib"] == capacity[fit["gpu_id"]]
        assert fit["margin_gib"] == pytest.approx(fit["capacity_gib"] - need)
        assert fit["margin_fraction"] == pytest.approx(fit["margin_gib"] / fit["capacity_gib"])
        assert fit["fits"] == (need <= fit["capacity_gib"])
        assert fit["high_end_fits"] == (high <= fit["capacity_gib"])
        assert not fit["high_end_fits"] or fit["fits"]
    assert any(f["fits"] for f in fits) and not all(f["fits"] for f in fits)
    margins = [f["margin_gib"] for f in fits]
    assert margins == sorted(margins, reverse=True)


def test_fit_on_one_gpu_agrees_with_the_catalog_wide_list(client: Client) -> None:
    body = FULL_FT_8B | {"method": "lora", "recompute": "full"}
    everywhere = {f["gpu_id"]: f for f in memory(client, body)["fits"]}
    alone = memory(client, body | {"gpu": "rtx-4090"})["fits"]
    assert alone == [everywhere["rtx-4090"]]


LORA_LONG_ON_H100 = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "batch_size": 4,
    "seq_len": 4096,
    "gpu": "h100-sxm",
}


def test_on_an_h100_this_lora_fits_with_selective_checkpointing_but_not_without(client: Client) -> None:
    fits = {
        level: memory(client, LORA_LONG_ON_H100 | {"recompute": level})["fits"][0]["fits"] for level in LEVELS
    }
    assert fits == {"none": False, "selective": True, "full": True}


def test_left_out_recompute_is_none_in_a_memory_estimate_as_documented(client: Client) -> None:
    """The schema says: plans and throughput estimates choose the least checkpointing that fits; a
    memory estimate assumes none (state a level to see it)."""
    auto = memory(client, LORA_LONG_ON_H100)
    assert auto["recompute"] == "none"
    assert auto == memory(client, LORA_LONG_ON_H100 | {"recompute": "none"})
    schema = client.get("/schema/openapi.json").json()["components"]["schemas"]["MemoryRequest"]
    assert "a memory estimate assumes none" in schema["properties"]["recompute"]["description"]
