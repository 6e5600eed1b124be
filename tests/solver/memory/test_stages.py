"""Per-rank memory of pipeline stages and context parallelism (Narayanan et al. 2021, Korthikanti et al. 2022)."""

from __future__ import annotations

import msgspec
import pytest

from solver.memory.peak import estimate_memory, rank_high_gib, rank_point_gib
from solver.memory.stages import pipeline_stages
from solver.spec.workload import ResolvedWorkload, Workload, resolve_workload


def _job(**fields: object) -> ResolvedWorkload:
    base: dict[str, object] = {
        "kind": "train", "model": {"name": "Llama 3 70B"}, "seq_len": 4096, "gpu_count": 64, "tp": 8,
        "recompute": "selective", "gradient_accumulation_steps": 16,
    }  # fmt: skip
    return resolve_workload(msgspec.convert({**base, **fields}, Workload))


def test_a_stage_holds_its_share_of_the_weights() -> None:
    whole = estimate_memory(_job(pp=1)).breakdown.weights
    half = estimate_memory(_job(pp=2)).breakdown.weights
    eighth = estimate_memory(_job(pp=8)).breakdown.weights
    assert half == pytest.approx(whole / 2, rel=0.05)
    assert eighth == pytest.approx(whole / 8, rel=0.15)  # 10 layers of 80 plus the embedding


def test_the_first_stage_holds_p_micro_batches_of_activations_in_flight() -> None:
    stages = pipeline_stages(_job(pp=4))
    assert [s.name for s in stages] == ["first stage", "last stage"]
    assert stages[0].in_flight == 4 and stages[1].in_flight == 1
    interleaved = pipeline_stages(_job(pp=4, vpp=2))[0]
    assert interleaved.in_flight == pytest.approx(4 * (1 + 3 / 8))  # (1 + (p−1)/(p·v))
    few = pipeline_stages(_job(pp=4, gradient_accumulation_steps=2))[0]
    assert few.in_flight == 2  # never more micro-batches than a step has


def test_activations_of_a_pipeline_are_the_whole_models_worth_on_the_first_stage() -> None:
    """p stages × L/p layers × p micro-batches in flight: one micro-batch of every layer (1F1B)."""
    one = estimate_memory(_job(pp=1)).breakdown.activations
    four = estimate_memory(_job(pp=4)).breakdown.activations
    assert four == pytest.approx(one, rel=0.1)


def test_context_parallelism_divides_activations_and_logits() -> None:
    one = estimate_memory(_job(cp=1, seq_len=8192)).breakdown
    two = estimate_memory(_job(cp=2, seq_len=8192)).breakdown
    assert two.activations == pytest.approx(one.activations / 2)
    assert two.logits == pytest.approx(one.logits / 2)


def test_the_fast_path_agrees_with_the_estimate() -> None:
    job = _job(pp=4, vpp=2, sharding="zero1")
    point = rank_point_gib(job)
    high = rank_high_gib(job, point)  # the layout search asks for the band only of peaks that fit
    full = estimate_memory(job)
    assert point == pytest.approx(full.per_gpu_gib) and high == pytest.approx(full.band.high_gib)
