"""The memory model: published measured peaks, documented runs and OOMs, and the properties any estimate must have.

``pytest -s tests/solver/memory/test_peak.py -k "measured or held_out"`` prints the per-case tables with the
median and 90th-percentile |error| of the fixture and of the held-out sources.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.catalog.gpus import GpuSpec
from solver.catalog.models import lookup_model
from solver.memory.activations import saved_activation_bytes
from solver.memory.peak import GIB, MemoryEstimate, estimate_memory, fit_on, lora_params
from solver.spec.workload import Workload, resolve_workload
from tests.gpu_facts import facts

CASES: dict[str, Any] = json.loads((Path(__file__).parent / "fixtures" / "memory_cases.json").read_text())
HELD_OUT = {name for name, source in CASES["sources"].items() if source.get("held_out")}
MEASURED = [c for c in CASES["cases"] if "measured" in c]
FIXTURE = [c for c in MEASURED if c["source"] not in HELD_OUT]
HELD = [c for c in MEASURED if c["source"] in HELD_OUT]
OOM = [c for c in CASES["cases"] if c.get("oom")]
RAN = [c for c in CASES["cases"] if c.get("ran")]
FIXTURE_MEDIAN, FIXTURE_P90 = 0.12, 0.30
HELD_OUT_MEDIAN, HELD_OUT_P90 = 0.12, 0.40


def _estimate(**fields: Any) -> MemoryEstimate:
    fields.setdefault("kind", "fine_tune")
    fields.setdefault("model", {"name": "Llama 2 7B"})
    return estimate_memory(resolve_workload(msgspec.convert(fields, Workload)))


def _predicted(case: dict[str, Any], estimate: MemoryEstimate) -> float:
    """Like with like: each measured counter against the estimate of the same counter."""
    counters = {
        "allocated": estimate.allocated_gib,
        "reserved": estimate.reserved_gib,
        "nvidia-smi": estimate.per_gpu_gib,
    }
    return counters[case["measured"]]


def _gpu(capacity_gib: float, name: str = "test GPU") -> GpuSpec:
    return GpuSpec(
        gpu_id="test", name=name, vendor="NVIDIA", memory_gib=capacity_gib, **facts("h100-sxm", family="test")
    )


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _report(title: str, cases: list[dict[str, Any]]) -> tuple[float, float]:
    """Print one table of measured vs predicted and return (median, p90) of the scored |errors|."""
    rows, scored = [], []
    for case in cases:
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
    median, p90 = statistics.median(scored), _p90(scored)
    print(f"\n{title}\n{'case':<40} {'measured':<10} {'GiB':>8} {'predicted':>9} {'error':>7}")
    print("\n".join(rows))
    print(f"{len(scored)} scored cases: median |error| {median:.1%}, p90 |error| {p90:.1%}")
    return median, p90


def test_fixture_cases_are_complete() -> None:
    assert len(FIXTURE) >= 12 and len(HELD) >= 4
    kinds = {(c["workload"]["kind"], c["workload"].get("method", "full")) for c in FIXTURE}
    assert {("fine_tune", "full"), ("fine_tune", "lora"), ("batch_inference", "full")} <= kinds
    assert {c["measured"] for c in MEASURED} == {"allocated", "reserved", "nvidia-smi"}
    for case in CASES["cases"]:
        assert case["source"] in CASES["sources"], case["id"]
        assert CASES["sources"][case["source"]]["url"].startswith("https://"), case["id"]
        assert case["quote"], case["id"]
        assert ("measured" in case) + bool(case.get("oom")) + bool(case.get("ran")) == 1, case["id"]
        if case.get("oom") or case.get("ran"):
            assert case["capacity_gib"] > 0 and case["gpu"]
        else:
            assert case["measured"] in {"allocated", "reserved", "nvidia-smi"}
            assert case["measured_gib"] > 0
            if "exclude_from_median" in case:
                assert len(case["exclude_from_median"]) > 20, "an excluded case says why"
    assert len({c["id"] for c in CASES["cases"]}) == len(CASES["cases"])


def test_published_measured_peaks(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        median, p90 = _report("fixture (calibration sources)", FIXTURE)
    assert median <= FIXTURE_MEDIAN
    assert p90 <= FIXTURE_P90


def test_held_out_sources(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        median, p90 = _report(f"held-out sources ({', '.join(sorted(HELD_OUT))})", HELD)
    assert median <= HELD_OUT_MEDIAN
    assert p90 <= HELD_OUT_P90


@pytest.mark.parametrize("case", OOM, ids=[c["id"] for c in OOM])
def test_documented_out_of_memory_cases_do_not_fit(case: dict[str, Any]) -> None:
    fit = fit_on(_estimate(**case["workload"]), _gpu(case["capacity_gib"], case["gpu"]))
    assert not fit.fits
    assert fit.margin_gib < 0


@pytest.mark.parametrize("case", RAN, ids=[c["id"] for c in RAN])
def test_documented_runs_fit(case: dict[str, Any]) -> None:
    fit = fit_on(_estimate(**case["workload"]), _gpu(case["capacity_gib"], case["gpu"]))
    assert fit.fits
    assert fit.margin_gib >= 0


def test_band_brackets_the_point_estimate() -> None:
    for case in MEASURED + OOM + RAN:
        estimate = _estimate(**case["workload"])
        assert estimate.band.low_gib <= estimate.per_gpu_gib <= estimate.band.high_gib, case["id"]


def test_counters_and_breakdown_add_up() -> None:
    for fields in (
        {"batch_size": 2, "seq_len": 1024},
        {"gpu_count": 8, "sharding": "zero3"},
        {"kind": "serving"},
    ):
        estimate = _estimate(**fields)
        b = estimate.breakdown
        live = (
            b.weights
            + b.master_weights
            + b.gradients
            + b.optimizer_state
            + b.activations
            + b.logits
            + b.kv_cache
            + b.buffers
        )
        assert estimate.allocated_gib == pytest.approx(live)
        assert estimate.reserved_gib == pytest.approx(live + b.fragmentation)
        assert estimate.per_gpu_gib == pytest.approx(live + b.fragmentation + b.cuda_context + b.nccl)
        assert b.runtime_overhead == pytest.approx(b.fragmentation + b.cuda_context + b.nccl)
        assert estimate.allocated_gib <= estimate.reserved_gib <= estimate.per_gpu_gib
        assert estimate.fit_counter == "per_gpu_gib"
    assert any("allocated" in note for note in estimate.assumptions)


def test_nccl_only_with_more_than_one_gpu() -> None:
    assert _estimate().breakdown.nccl == 0
    assert _estimate(gpu_count=2, sharding="zero2").breakdown.nccl > 0


def test_mixed_precision_adamw_is_18_bytes_per_param_at_the_step() -> None:
    estimate = _estimate(precision="bf16", batch_size=1, seq_len=128)
    b = estimate.breakdown
    assert estimate.peak_phase == "optimizer_step"
    # master 4 + gradients 4 + AdamW 8 live at the step; the 2-byte working copy is freed before it
    assert (b.master_weights + b.gradients + b.optimizer_state) * GIB == pytest.approx(16 * 6.74e9)
    assert b.weights == 0
    forward = _estimate(precision="bf16", batch_size=8, seq_len=4096)
    assert forward.peak_phase == "forward_backward"
    assert forward.breakdown.weights * GIB == pytest.approx(2 * 6.74e9)


def test_pure_bf16_keeps_optimizer_state_in_bf16() -> None:
    b = _estimate(precision="bf16", master_weights="none", batch_size=1, seq_len=128).breakdown
    assert b.master_weights == 0
    assert (b.weights + b.gradients + b.optimizer_state) * GIB == pytest.approx(8 * 6.74e9)
    mixed = _estimate(precision="bf16", batch_size=1, seq_len=128)
    assert _estimate(precision="bf16", master_weights="none").per_gpu_gib < mixed.per_gpu_gib


def test_full_fp32_with_each_optimizer() -> None:
    per_param = {"adamw": 16, "sgd": 12, "lion": 12, "adamw_8bit": 8 + 2 * (1 + 4 / 256)}
    for optimizer, expected in per_param.items():
        b = _estimate(precision="fp32", optimizer=optimizer, batch_size=1, seq_len=128).breakdown
        assert (b.weights + b.gradients + b.optimizer_state) * GIB == pytest.approx(expected * 6.74e9)
    adafactor = _estimate(precision="fp32", optimizer="adafactor").breakdown
    assert adafactor.optimizer_state < 0.01 * adafactor.weights


def test_paged_optimizer_state_is_outside_the_counters() -> None:
    plain = _estimate(optimizer="adamw_8bit", batch_size=1, seq_len=128)
    paged = _estimate(optimizer="paged_adamw_8bit", batch_size=1, seq_len=128)
    assert paged.breakdown.optimizer_state == 0
    assert paged.breakdown.paged_optimizer_state == pytest.approx(plain.breakdown.optimizer_state)
    assert paged.per_gpu_gib < plain.per_gpu_gib
    assert paged.host_ram_gib == pytest.approx(paged.breakdown.paged_optimizer_state)
    paged32 = _estimate(optimizer="paged_adamw", master_weights="none", batch_size=1, seq_len=128)
    assert paged32.breakdown.paged_optimizer_state * GIB == pytest.approx(
        8 * 6.74e9
    )  # bnb 32-bit: fp32 state


def test_optimizer_in_backward_keeps_one_gradient() -> None:
    fused = _estimate(
        master_weights="none",
        optimizer="paged_adamw_8bit",
        optimizer_in_backward=True,
        recompute="full",
        batch_size=2,
    )
    arch = lookup_model("Llama 2 7B")
    assert fused.breakdown.gradients * GIB == pytest.approx(2 * arch.vocab_size * arch.hidden_size)
    # the 7B full fine-tune on a 24 GB card: bf16 weights, paged 8-bit AdamW stepped in backward
    assert fused.per_gpu_gib < 22


def test_gradient_accumulation_keeps_gradients_through_the_forward() -> None:
    one = _estimate(master_weights="none", batch_size=4, seq_len=2048)
    many = _estimate(master_weights="none", batch_size=4, seq_len=2048, gradient_accumulation_steps=4)
    assert many.breakdown.gradients * GIB == pytest.approx(2 * 6.74e9)
    assert many.allocated_gib > one.allocated_gib


def test_offload_moves_state_to_host() -> None:
    plain = _estimate(batch_size=1, seq_len=512)
    optimizer = _estimate(batch_size=1, seq_len=512, offload="optimizer")
    everything = _estimate(batch_size=1, seq_len=512, offload="optimizer_and_params")
    assert optimizer.breakdown.optimizer_state == optimizer.breakdown.master_weights == 0
    assert everything.per_gpu_gib < optimizer.per_gpu_gib < plain.per_gpu_gib
    assert plain.host_ram_gib == 0
    # host: fp32 master 4 + AdamW 8 + fp32 gradient copy 4 bytes per parameter (+ 2-byte weights)
    assert optimizer.host_ram_gib * GIB == pytest.approx(16 * 6.74e9)
    assert everything.host_ram_gib * GIB == pytest.approx(18 * 6.74e9)


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
    estimate = _estimate(kind="serving", batch_size=4, seq_len=1000)
    b = estimate.breakdown
    assert b.gradients == b.optimizer_state == b.master_weights == 0
    assert estimate.peak_phase == "inference" and estimate.host_ram_gib == 0
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


def test_lora_adapter_count_follows_the_targets() -> None:
    def params(targets: Any) -> float:
        fields = {
            "kind": "fine_tune",
            "model": {"name": "Llama 2 7B"},
            "method": "lora",
            "lora_targets": targets,
        }
        return lora_params(resolve_workload(msgspec.convert(fields, Workload)))

    h, i = 4096, 11008
    assert params("qv") == 8 * 32 * 2 * (h + h)
    assert params("all_linear") == 8 * 32 * ((h + h) * 4 + 3 * (h + i))
    assert params(["wq", "wv"]) == params("qv")
    assert params("mlp") + params("attention") == params("all_linear")
    full = resolve_workload(msgspec.convert({"kind": "fine_tune", "model": {"name": "Llama 2 7B"}}, Workload))
    assert lora_params(full) == 0


def test_zero_stages_shard_more_and_more() -> None:
    per_stage = [
        _estimate(gpu_count=8, sharding=s, batch_size=1, seq_len=512).per_gpu_gib
        for s in ("none", "zero1", "zero2", "zero3")
    ]
    assert per_stage == sorted(per_stage, reverse=True)
    assert len(set(per_stage)) == 4


def test_ddp_keeps_gradient_buckets() -> None:
    ddp = _estimate(gpu_count=2, batch_size=1, seq_len=128).breakdown
    zero1 = _estimate(gpu_count=2, sharding="zero1", batch_size=1, seq_len=128).breakdown
    assert ddp.buffers >= ddp.gradients > 0
    assert zero1.buffers < ddp.gradients


def test_sharding_on_one_gpu_changes_nothing() -> None:
    assert _estimate(sharding="zero3").per_gpu_gib == _estimate().per_gpu_gib


def test_tensor_parallelism_halves_the_sharded_parts() -> None:
    one = _estimate(kind="serving", gpu_count=2, tp=1, batch_size=8, seq_len=2048).breakdown
    two = _estimate(kind="serving", gpu_count=2, tp=2, batch_size=8, seq_len=2048).breakdown
    assert two.weights == pytest.approx(one.weights / 2)
    assert two.kv_cache == pytest.approx(one.kv_cache / 2)
    assert two.activations == pytest.approx(one.activations / 2)
    train_one = _estimate(gpu_count=2, tp=1, batch_size=2, seq_len=4096).breakdown
    train_two = _estimate(gpu_count=2, tp=2, batch_size=2, seq_len=4096).breakdown
    assert train_two.optimizer_state == pytest.approx(train_one.optimizer_state / 2)
    assert train_two.activations == pytest.approx(train_one.activations / 2)


def _saved(**fields: Any) -> float:
    fields.setdefault("kind", "fine_tune")
    fields.setdefault("model", {"name": "Llama 2 7B"})
    return saved_activation_bytes(resolve_workload(msgspec.convert(fields, Workload)), [])


def test_activations_follow_korthikanti_and_flash_drops_the_scores() -> None:
    layers, s, b, h, a = 32, 2048, 1, 4096, 32
    common = {"seq_len": s, "master_weights": "none"}
    outside = 2 * s * b * h * 2
    one_layer = s * b * h * 18 + s * b * 11008 * 8
    eager = _saved(**common, attention="eager")
    assert eager == pytest.approx(layers * (one_layer + 5 * a * s * s * b) + outside)
    assert _saved(**common, attention="flash") == pytest.approx(layers * one_layer + outside)
    assert _saved(**common, recompute="full") == pytest.approx(layers * s * b * h * 2 + one_layer + outside)
    # autocast mixed precision keeps the residual stream (norm inputs) and an eager softmax in fp32
    autocast = _saved(seq_len=s, attention="eager")
    assert autocast == pytest.approx(layers * (one_layer + 4 * s * b * h + 7 * a * s * s * b) + outside)
    assert _saved(**common, precision="fp32") == pytest.approx(2 * (layers * one_layer + outside))
    shown = _estimate(**common, batch_size=8).breakdown
    assert shown.activations * GIB == pytest.approx(8 * (layers * one_layer + outside))


def test_lora_saves_only_what_adapters_need() -> None:
    s, h, i = 2048, 4096, 11008
    full = _saved(seq_len=s, master_weights="none")
    qv = _saved(seq_len=s, master_weights="none", method="lora", lora_targets="qv")
    # frozen o_proj, gate/up and down projections keep no input
    assert full - qv == pytest.approx(32 * s * (2 * h + 2 * h + 2 * i))
    qlora = _saved(seq_len=s, master_weights="none", method="qlora", precision="nf4", lora_targets="qv")
    assert qlora == pytest.approx(full)  # bitsandbytes 4-bit layers save their input
    dropout = _saved(seq_len=s, master_weights="none", method="lora", lora_targets="qv", lora_dropout=0.1)
    assert dropout - qv == pytest.approx(32 * s * 3 * 2 * h)


def test_recompute_saves_activations_in_order() -> None:
    for attention in ("flash", "eager"):
        none, selective, full = (
            _estimate(seq_len=4096, batch_size=4, attention=attention, recompute=r).breakdown.activations
            for r in ("none", "selective", "full")
        )
        assert full < selective < none


def test_no_s2_term_under_flash_whatever_recompute_says() -> None:
    for recompute in ("none", "selective", "full"):
        short = _estimate(
            seq_len=2048, recompute=recompute, model={"name": "Llama 3 8B"}
        ).breakdown.activations
        long = _estimate(
            seq_len=4096, recompute=recompute, model={"name": "Llama 3 8B"}
        ).breakdown.activations
        assert long == pytest.approx(2 * short)


def test_cnn_training_scales_with_batch() -> None:
    small = _estimate(model={"name": "ResNet-50"}, batch_size=32, precision="fp16").breakdown.activations
    large = _estimate(model={"name": "ResNet-50"}, batch_size=64, precision="fp16").breakdown.activations
    assert large == pytest.approx(2 * small)
    assert small * GIB == pytest.approx(22.2e6 * 32 * 2)


def test_fit_on_reports_margin_counter_and_band() -> None:
    estimate = _estimate(kind="serving")
    roomy = fit_on(estimate, _gpu(80.0))
    assert roomy.fits and roomy.margin_gib == pytest.approx(80.0 - estimate.per_gpu_gib)
    assert roomy.margin_fraction == pytest.approx(roomy.margin_gib / 80.0)
    assert roomy.counter == "per_gpu_gib" and roomy.high_end_fits
    tight = fit_on(estimate, _gpu(8.0))
    assert not tight.fits and tight.margin_gib < 0 and tight.capacity_gib == 8.0
    between = fit_on(estimate, _gpu((estimate.per_gpu_gib + estimate.band.high_gib) / 2))
    assert between.fits and not between.high_end_fits


_MODELS = st.sampled_from(["Llama 2 7B", "Llama 3 8B", "Mixtral 8x7B", "Qwen2.5-7B", "GPT-J 6B", "Gemma 2B"])
_TRAIN = {
    "kind": st.sampled_from(["train", "fine_tune"]),
    "name": _MODELS,
    "batch": st.integers(1, 8),
    "seq_len": st.integers(16, 2048),
    "recompute": st.sampled_from(["none", "selective", "full"]),
    "optimizer": st.sampled_from(["adamw", "adamw_8bit", "paged_adamw_8bit", "lion", "sgd", "adafactor"]),
    "master": st.sampled_from(["fp32", "none"]),
    "dp": st.sampled_from([1, 2, 8]),
    "sharding": st.sampled_from(["none", "zero1", "zero2", "zero3"]),
    "accumulation": st.sampled_from([1, 4]),
}


def _train(
    kind: str,
    name: str,
    batch: int,
    seq_len: int,
    recompute: str,
    optimizer: str,
    master: str,
    dp: int,
    sharding: str,
    accumulation: int,
    **extra: Any,
) -> MemoryEstimate:
    return _estimate(
        kind=kind,
        model={"name": name},
        batch_size=batch,
        seq_len=seq_len,
        recompute=recompute,
        optimizer=optimizer,
        master_weights=master,
        gpu_count=dp,
        sharding=sharding,
        gradient_accumulation_steps=accumulation,
        **extra,
    )


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
def test_flash_never_above_eager(**w: Any) -> None:
    assert _train(**w, attention="flash").per_gpu_gib <= _train(**w, attention="eager").per_gpu_gib


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
def test_more_sharding_never_more_memory(**w: Any) -> None:
    stages = ["none", "zero1", "zero2", "zero3"]
    w["sharding"] = "zero1"
    needs = [_train(**{**w, "sharding": s}).per_gpu_gib for s in stages[1:]]
    assert needs == sorted(needs, reverse=True)


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
def test_offload_never_more_gpu_memory(**w: Any) -> None:
    plain = _train(**w).per_gpu_gib
    optimizer = _train(**w, offload="optimizer").per_gpu_gib
    everything = _train(**w, offload="optimizer_and_params").per_gpu_gib
    assert everything <= optimizer <= plain


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
@example(  # sharded gradients are smaller than the whole first gradient: the step holds the smaller
    kind="train",
    name="Gemma 2B",
    batch=1,
    seq_len=16,
    recompute="none",
    optimizer="adamw",
    master="none",
    dp=8,
    sharding="zero2",
    accumulation=1,
)
def test_optimizer_in_backward_never_more(**w: Any) -> None:
    w["accumulation"] = 1
    assert _train(**w, optimizer_in_backward=True).per_gpu_gib <= _train(**w).per_gpu_gib


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
def test_pure_bf16_never_more_than_fp32_master(**w: Any) -> None:
    assert _train(**{**w, "master": "none"}).per_gpu_gib <= _train(**{**w, "master": "fp32"}).per_gpu_gib


@settings(max_examples=60, deadline=None)
@given(**_TRAIN, method=st.sampled_from(["lora", "qlora"]), dropout=st.sampled_from([0.0, 0.05]))
def test_lora_target_subset_never_more(method: str, dropout: float, **w: Any) -> None:
    w["kind"] = "fine_tune"
    extra = {"method": method, "lora_dropout": dropout, "precision": "nf4" if method == "qlora" else "bf16"}
    chain = ["qv", "qkv", "attention", "all_linear"]
    needs = [_train(**w, **extra, lora_targets=t).per_gpu_gib for t in chain]
    assert needs == sorted(needs)
    assert _train(**w, **extra, lora_targets="mlp").per_gpu_gib <= needs[-1]


@settings(max_examples=60, deadline=None)
@given(**_TRAIN)
def test_more_batch_never_less_and_band_brackets(**w: Any) -> None:
    smaller = _train(**w)
    larger = _train(**{**w, "batch": w["batch"] + 1})
    assert larger.per_gpu_gib >= smaller.per_gpu_gib
    assert smaller.band.low_gib <= smaller.per_gpu_gib <= smaller.band.high_gib
    assert all(value >= 0 for value in msgspec.structs.astuple(smaller.breakdown))


@given(
    kind=st.sampled_from(["batch_inference", "serving"]),
    name=st.sampled_from(["Llama 2 7B", "Llama 3 70B", "Mixtral 8x7B", "BERT-base", "ResNet-50", "Qwen3-8B"]),
    batch=st.integers(1, 32),
    seq_len=st.integers(16, 512),
)
def test_inference_grows_with_batch(kind: str, name: str, batch: int, seq_len: int) -> None:
    common = {"kind": kind, "model": {"name": name}, "seq_len": seq_len}
    smaller = _estimate(**common, batch_size=batch)
    larger = _estimate(**common, batch_size=batch + 1)
    assert larger.per_gpu_gib > smaller.per_gpu_gib
    assert smaller.band.low_gib <= smaller.per_gpu_gib <= smaller.band.high_gib
