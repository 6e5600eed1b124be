"""The memory model: published measured peaks, and the properties any estimate must have."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.gpus import GpuSpec
from solver.memory import GIB, MemoryEstimate, estimate_memory, fit_on, lora_params
from solver.models import lookup_model
from solver.workload import Workload, resolve_workload

CASES: dict[str, Any] = json.loads((Path(__file__).parent / "fixtures" / "memory_cases.json").read_text())
MEASURED = [c for c in CASES["cases"] if not c.get("oom")]
OOM = [c for c in CASES["cases"] if c.get("oom")]
MAX_MEDIAN_ERROR = 0.15


def _estimate(**fields: Any) -> MemoryEstimate:
    fields.setdefault("kind", "fine_tune")
    fields.setdefault("model", {"name": "Llama 2 7B"})
    return estimate_memory(resolve_workload(msgspec.convert(fields, Workload)))


def _predicted(case: dict[str, Any], estimate: MemoryEstimate) -> float:
    """Like with like: allocated peaks against the allocated estimate, device readings against the total."""
    return estimate.allocated_gib if case["measured"] == "allocated" else estimate.per_gpu_gib


def _gpu(capacity_gib: float, name: str = "test GPU") -> GpuSpec:
    return GpuSpec(gpu_id="test", name=name, vendor="NVIDIA", memory_gib=capacity_gib)


def test_fixture_cases_are_complete() -> None:
    assert len(MEASURED) >= 12
    kinds = {(c["workload"]["kind"], c["workload"].get("method", "full")) for c in MEASURED}
    assert {("fine_tune", "full"), ("fine_tune", "lora"), ("batch_inference", "full")} <= kinds
    for case in CASES["cases"]:
        assert case["source"] in CASES["sources"], case["id"]
        assert case["quote"], case["id"]
        if case.get("oom"):
            assert case["capacity_gib"] > 0 and case["gpu"]
        else:
            assert case["measured"] in {"allocated", "reserved", "nvidia-smi"}
            assert case["measured_gib"] > 0
            if "exclude_from_median" in case:
                assert len(case["exclude_from_median"]) > 20, "an excluded case says why"


def test_published_measured_peaks(capsys: pytest.CaptureFixture[str]) -> None:
    rows, scored = [], []
    for case in MEASURED:
        estimate = _estimate(**case["workload"])
        predicted = _predicted(case, estimate)
        error = (predicted - case["measured_gib"]) / case["measured_gib"]
        excluded = "exclude_from_median" in case
        if not excluded:
            scored.append(abs(error))
        rows.append(
            f"{case['id']:<40} {case['measured']:<10} {case['measured_gib']:>8.2f} {predicted:>9.2f} "
            f"{error:>+7.1%}{'  (not scored)' if excluded else ''}"
        )
    median = statistics.median(scored)
    with capsys.disabled():
        print(f"\n{'case':<40} {'measured':<10} {'GiB':>8} {'predicted':>9} {'error':>7}")
        print("\n".join(rows))
        print(f"median |error| over {len(scored)} scored cases: {median:.1%}")
    assert median <= MAX_MEDIAN_ERROR


@pytest.mark.parametrize("case", OOM, ids=[c["id"] for c in OOM])
def test_documented_out_of_memory_cases_do_not_fit(case: dict[str, Any]) -> None:
    fit = fit_on(_estimate(**case["workload"]), _gpu(case["capacity_gib"], case["gpu"]))
    assert not fit.fits
    assert fit.margin_gib < 0


def test_band_brackets_the_point_estimate() -> None:
    for case in MEASURED:
        estimate = _estimate(**case["workload"])
        assert estimate.band.low_gib <= estimate.per_gpu_gib <= estimate.band.high_gib


def test_breakdown_adds_up() -> None:
    estimate = _estimate(batch_size=2, seq_len=1024)
    b = estimate.breakdown
    parts = b.weights + b.gradients + b.optimizer_state + b.activations + b.logits + b.kv_cache
    assert estimate.allocated_gib == pytest.approx(parts)
    assert estimate.per_gpu_gib == pytest.approx(parts + b.runtime_overhead)
    assert any("allocated" in note for note in estimate.assumptions)


def test_full_mixed_precision_adam_is_16_bytes_per_param() -> None:
    estimate = _estimate(precision="bf16")
    b = estimate.breakdown
    state = (b.weights + b.gradients + b.optimizer_state) * GIB
    assert state == pytest.approx(16 * 6.74e9)


def test_full_fp32_with_each_optimizer() -> None:
    per_param = {"adamw": 16, "adamw_8bit": 10, "sgd": 12}
    for optimizer, expected in per_param.items():
        b = _estimate(precision="fp32", optimizer=optimizer).breakdown
        assert (b.weights + b.gradients + b.optimizer_state) * GIB == pytest.approx(expected * 6.74e9)
    adafactor = _estimate(precision="fp32", optimizer="adafactor").breakdown
    assert adafactor.optimizer_state < 0.01 * adafactor.weights


def test_quantised_weights_keep_embeddings_in_16_bit() -> None:
    arch = lookup_model("Llama 2 7B")
    embeddings = arch.embedding_params
    nf4 = _estimate(kind="batch_inference", precision="nf4").breakdown.weights * GIB
    assert nf4 == pytest.approx((6.74e9 - embeddings) * 4.5 / 8 + embeddings * 2)
    int4 = _estimate(kind="batch_inference", precision="int4").breakdown.weights
    int8 = _estimate(kind="batch_inference", precision="int8").breakdown.weights
    bf16 = _estimate(kind="batch_inference", precision="bf16").breakdown.weights
    assert int4 < nf4 / GIB < int8 < bf16


def test_inference_has_no_gradients_or_optimizer_and_a_kv_cache() -> None:
    b = _estimate(kind="serving", batch_size=4, seq_len=1000).breakdown
    assert b.gradients == b.optimizer_state == 0
    assert b.kv_cache * GIB == pytest.approx(2 * 32 * 32 * 128 * 1000 * 4 * 2)
    gqa = _estimate(kind="serving", model={"name": "Llama 3 8B"}, batch_size=4, seq_len=1000).breakdown
    assert gqa.kv_cache == pytest.approx(b.kv_cache / 4)


def test_moe_holds_every_expert_in_memory() -> None:
    mixtral = _estimate(kind="serving", model={"name": "Mixtral 8x7B"}).breakdown
    assert mixtral.weights * GIB == pytest.approx(46.70e9 * 2)


def test_qlora_below_lora_below_full() -> None:
    full = _estimate(method="full").per_gpu_gib
    lora = _estimate(method="lora").per_gpu_gib
    qlora = _estimate(method="qlora", precision="nf4").per_gpu_gib
    assert qlora < lora < full


def test_lora_adapter_count() -> None:
    rw = resolve_workload(msgspec.convert({"kind": "fine_tune", "model": {"name": "Llama 2 7B"}}, Workload))
    per_layer = (4096 + 4096) * 4 + 3 * (4096 + 11008)
    assert lora_params(rw) == 8 * 32 * per_layer


def test_zero_stages_shard_more_and_more() -> None:
    per_stage = [_estimate(gpu_count=8, sharding=s).per_gpu_gib for s in ("none", "zero1", "zero2", "zero3")]
    assert per_stage == sorted(per_stage, reverse=True)
    assert len(set(per_stage)) == 4


def test_sharding_on_one_gpu_changes_nothing() -> None:
    assert _estimate(sharding="zero3").per_gpu_gib == _estimate().per_gpu_gib


def test_tensor_parallelism_halves_the_sharded_parts() -> None:
    one = _estimate(kind="serving", gpu_count=2, tp=1, batch_size=8, seq_len=2048).breakdown
    two = _estimate(kind="serving", gpu_count=2, tp=2, batch_size=8, seq_len=2048).breakdown
    assert two.weights == pytest.approx(one.weights / 2)
    assert two.kv_cache == pytest.approx(one.kv_cache / 2)
    assert two.activations == pytest.approx(one.activations / 2)
    train_one = _estimate(gpu_count=2, tp=1, batch_size=2).breakdown
    train_two = _estimate(gpu_count=2, tp=2, batch_size=2).breakdown
    assert train_two.optimizer_state == pytest.approx(train_one.optimizer_state / 2)
    assert train_two.activations == pytest.approx(train_one.activations / 2)


def test_recomputation_saves_activations() -> None:
    none, selective, full = (
        _estimate(seq_len=2048, recompute=r).breakdown.activations for r in ("none", "selective", "full")
    )
    assert full < selective < none
    layers, s, b, h, a = 32, 2048, 1, 4096, 32
    korthikanti = layers * (s * b * h * 18 + s * b * 11008 * 8 + 5 * a * s * s * b)
    assert none * GIB == pytest.approx(korthikanti)


def test_cnn_training_scales_with_batch() -> None:
    small = _estimate(model={"name": "ResNet-50"}, batch_size=32, precision="fp16").breakdown.activations
    large = _estimate(model={"name": "ResNet-50"}, batch_size=64, precision="fp16").breakdown.activations
    assert large == pytest.approx(2 * small)
    assert small * GIB == pytest.approx(22.2e6 * 32 * 2)


def test_fit_on_reports_margin() -> None:
    estimate = _estimate(kind="serving")
    roomy = fit_on(estimate, _gpu(80.0))
    assert roomy.fits and roomy.margin_gib == pytest.approx(80.0 - estimate.per_gpu_gib)
    assert roomy.margin_fraction == pytest.approx(roomy.margin_gib / 80.0)
    tight = fit_on(estimate, _gpu(8.0))
    assert not tight.fits and tight.margin_gib < 0 and tight.capacity_gib == 8.0


@given(
    kind=st.sampled_from(["train", "fine_tune", "batch_inference", "serving"]),
    name=st.sampled_from(["Llama 2 7B", "Llama 3 70B", "Mixtral 8x7B", "BERT-base", "ResNet-50", "Qwen3-8B"]),
    batch=st.integers(1, 32),
    seq_len=st.integers(16, 512),
    recompute=st.sampled_from(["none", "selective", "full"]),
)
def test_more_batch_means_more_memory(kind: str, name: str, batch: int, seq_len: int, recompute: str) -> None:
    common = {"kind": kind, "model": {"name": name}, "seq_len": seq_len, "recompute": recompute}
    smaller = _estimate(**common, batch_size=batch)
    larger = _estimate(**common, batch_size=batch + 1)
    assert larger.per_gpu_gib > smaller.per_gpu_gib
    assert smaller.band.low_gib <= smaller.per_gpu_gib <= smaller.band.high_gib
    assert all(value >= 0 for value in msgspec.structs.astuple(smaller.breakdown))
