"""The throughput model: measured matches, class-model estimates with provenance, overrides, and the
hardware-order properties every estimate must keep on the shipped data."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.network import Network
from solver.catalog.profiles import MeasuredProfile
from solver.errors import InvalidWorkload, SolverError, ThroughputUnavailable
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.calibration import IndexMemo, ProfileIndex
from solver.throughput.estimate import ThroughputEstimate, Topology, estimate_throughput
from solver.throughput.hardware import hardware_of
from solver.throughput.observations import precision_class
from tests.gpu_facts import facts


@functools.cache
def _catalog() -> tuple[list[MeasuredProfile], dict[str, GpuSpec]]:
    catalog = read_seed_catalog()
    return catalog.profiles.items, {gpu.gpu_id: gpu for gpu in catalog.gpus}


@functools.cache
def _index() -> ProfileIndex:
    profiles, gpus = _catalog()
    return ProfileIndex(profiles, gpus)


def _estimate(
    gpu_id: str,
    count: int = 1,
    interconnect: Interconnect = "none",
    topology: Topology | None = None,
    **fields: Any,
) -> ThroughputEstimate:
    fields.setdefault("kind", "train")
    fields.setdefault("model", {"name": "Qwen2.5-7B"})
    fields.setdefault("gpu_count", max(count, fields.get("tp", 1)))
    workload = resolve_workload(msgspec.convert(fields, Workload))
    profiles, gpus = _catalog()
    return estimate_throughput(
        workload, gpus[gpu_id], count, interconnect, profiles, gpus, index=_index(), topology=topology
    )


def _row(**match: Any) -> MeasuredProfile:
    rows = [p for p in _catalog()[0] if all(getattr(p, k) == v for k, v in match.items())]
    assert len(rows) == 1, rows
    return rows[0]


def test_exact_match_is_measured_and_cites_the_row() -> None:
    row = _row(model="Qwen2.5-7B", gpu_id="h100-sxm", gpu_count=1, precision="bf16")
    estimate = _estimate("h100-sxm", seq_len=1024)
    assert estimate.provenance == "measured" and estimate.route == "measured"
    assert estimate.value == row.value and estimate.unit == "tokens_per_s"
    assert [s.profile_id for s in estimate.sources] == [row.profile_id]
    assert estimate.confidence == "high" and estimate.efficiency.basis == "measured"
    assert estimate.band.low < estimate.value < estimate.band.high


def test_class_model_says_class_stack_efficiency_and_rows() -> None:
    estimate = _estimate("a100-80gb-sxm", model={"name": "Llama 3 8B"}, seq_len=8192)
    assert estimate.provenance == "derived" and estimate.route == "class_model"
    assert estimate.workload_class == "pretrain" and estimate.stack == "optimized"
    assert estimate.efficiency.basis == "calibrated"
    assert estimate.efficiency.mfu is not None and 0.2 < estimate.efficiency.mfu < 0.75
    assert estimate.sources and len(estimate.sources) <= 24
    assert "class pretrain/optimized" in estimate.method and "MAMF" in estimate.method
    tune = _estimate("a100-80gb-sxm", kind="fine_tune", model={"name": "Llama 3 8B"}, method="lora")
    assert tune.workload_class == "lora" and tune.stack == "standard"


def test_an_explicit_efficiency_is_used_and_echoed() -> None:
    given_mfu = _estimate("h100-sxm", model={"name": "Llama 3 8B"}, seq_len=4096, efficiency={"mfu": 0.42})
    assert given_mfu.route == "override" and given_mfu.efficiency.basis == "override"
    assert given_mfu.efficiency.mfu == pytest.approx(0.42, rel=1e-3)
    decode = _estimate(
        "h100-sxm",
        kind="serving",
        model={"name": "Llama 3 8B"},
        seq_len=2048,
        efficiency={"bandwidth_utilization": 0.7},
    )
    assert decode.route == "override"
    assert decode.efficiency.bandwidth_utilization == pytest.approx(0.7, rel=0.05)
    with pytest.raises(InvalidWorkload, match=r"efficiency\.bandwidth_utilization"):
        _estimate("h100-sxm", efficiency={"bandwidth_utilization": 0.5})


def test_nearby_setting_is_converted_and_derived() -> None:
    estimate = _estimate("h100-sxm", seq_len=2048)
    assert estimate.provenance == "derived" and estimate.route == "measured"
    assert "measured setting nearest to 2048" in estimate.method
    assert estimate.value < _estimate("h100-sxm", seq_len=1024).value  # longer sequences cost more per token


def test_lora_is_faster_than_full_and_recompute_slower() -> None:
    for gpu_id in ("h100-sxm", "a100-80gb-sxm", "rtx-4090", "l4"):
        base = {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "recompute": "none"}
        full = _estimate(gpu_id, **base)
        lora = _estimate(gpu_id, **base, method="lora")
        qlora = _estimate(gpu_id, **base, method="qlora", precision="nf4")
        assert lora.value >= full.value, gpu_id
        assert lora.value >= qlora.value, gpu_id
        assert _estimate(gpu_id, **{**base, "recompute": "full"}).value < full.value, gpu_id


def test_small_micro_batches_pay_a_fixed_overhead_per_layer() -> None:
    """Tokens per second grow with the tokens of a micro-batch (fixed per-layer dispatch cost), and the
    standard stack (eager Transformers) pays more of it than the optimized one."""
    lora = {"kind": "fine_tune", "method": "lora", "recompute": "none", "seq_len": 256}
    rates = [_estimate("a100-80gb-sxm", batch_size=batch, **lora).value for batch in (1, 4, 16)]
    assert rates[0] < rates[1] < rates[2]
    estimate = _estimate("a100-80gb-sxm", batch_size=1, **lora)
    assert "per layer of a micro-batch" in estimate.method
    standard = _estimate("a100-80gb-sxm", batch_size=1, stack="standard", **lora).value
    optimized = _estimate("a100-80gb-sxm", batch_size=1, stack="optimized", **lora).value
    big_standard = _estimate("a100-80gb-sxm", batch_size=16, stack="standard", **lora).value
    big_optimized = _estimate("a100-80gb-sxm", batch_size=16, stack="optimized", **lora).value
    assert standard / optimized < big_standard / big_optimized  # the overhead widens the gap


def test_left_out_recompute_is_the_least_that_fits_the_gpu() -> None:
    job = {"kind": "train", "model": {"name": "Llama 3 8B"}, "seq_len": 8192, "sharding": "zero3"}
    small = _estimate("a100-40gb-sxm", 8, "nvswitch", **job)
    large = _estimate("h200-sxm", 8, "nvswitch", **job)
    assert small.method.startswith("recompute full") and large.method.startswith("recompute none")
    stated = _estimate("a100-40gb-sxm", 8, "nvswitch", **job, recompute="none")
    assert "recompute" not in stated.method.split(";")[0] and stated.value > small.value


def test_inference_runs_replicas_of_tp_groups() -> None:
    fields = {"kind": "batch_inference", "model": {"name": "Llama 3.3 70B"}, "precision": "fp8", "tp": 2}
    pair = _estimate("h100-sxm", 2, "nvswitch", **fields)
    eight = _estimate("h100-sxm", 8, "nvswitch", **fields)
    assert eight.value == pytest.approx(4 * pair.value)
    assert "4 independent replicas" in eight.method and eight.provenance == "derived"
    with pytest.raises(InvalidWorkload, match="multiple of tp"):
        _estimate("h100-sxm", 3, "nvswitch", gpu_count=2, **fields)


def test_unsupported_combinations_raise_a_solver_error() -> None:
    with pytest.raises(ThroughputUnavailable, match="no fp8 tensor cores") as info:
        _estimate("a100-80gb-sxm", precision="fp8")
    assert isinstance(info.value, SolverError)
    bare = GpuSpec(
        gpu_id="mystery-gpu",
        name="Mystery GPU",
        vendor="NVIDIA",
        memory_gib=48,
        **facts("a100-80gb-sxm", family="mystery-gpu"),
    )
    profiles, gpus = _catalog()
    workload = resolve_workload(msgspec.convert({"kind": "train", "model": {"name": "ResNet-50"}}, Workload))
    with pytest.raises(ThroughputUnavailable, match="neither its dense peak nor its memory bandwidth"):
        estimate_throughput(workload, bare, 1, "none", profiles, {**gpus, bare.gpu_id: bare}, index=_index())
    proxied = msgspec.structs.replace(bare, memory_bandwidth_tbps=1.0)
    found = estimate_throughput(
        workload, proxied, 1, "none", profiles, {**gpus, proxied.gpu_id: proxied}, index=_index()
    )
    assert found.confidence == "low" and "proxied" in found.method  # the peak rests on a proxy
    with pytest.raises(InvalidWorkload):
        _estimate("h100-sxm", 0)
    with pytest.raises(InvalidWorkload, match="tensor-parallel"):
        _estimate("h100-sxm", 2, "none", kind="serving", model={"name": "Llama 3 8B"}, tp=2)
    with pytest.raises(ThroughputUnavailable, match="does not fit"):
        _estimate("rtx-4090", kind="batch_inference", model={"name": "Llama 3.1 405B"})


def test_precision_spellings_map_to_classes() -> None:
    assert precision_class("fp16_amp") == "bf16"
    assert precision_class("mlperf_closed:fp8") == "fp8"
    assert precision_class("q4_k_m") == "int4"
    assert precision_class("nvfp4") == "fp4"
    assert precision_class("posit8") is None
    assert all(precision_class(p.precision) is not None for p in _catalog()[0])


def test_estimates_are_deterministic_and_cached_by_content() -> None:
    profiles, gpus = _catalog()
    workload = resolve_workload(
        msgspec.convert({"kind": "fine_tune", "model": {"name": "Mistral 7B"}}, Workload)
    )
    first = estimate_throughput(workload, gpus["l40s"], 4, "pcie", profiles, gpus)
    again = estimate_throughput(workload, gpus["l40s"], 4, "pcie", list(profiles), dict(gpus))
    fresh = estimate_throughput(
        workload, gpus["l40s"], 4, "pcie", profiles, gpus, index=ProfileIndex(profiles, gpus)
    )
    assert msgspec.json.encode(first) == msgspec.json.encode(again) == msgspec.json.encode(fresh)


def test_index_memo_is_per_index_and_bounded() -> None:
    profiles, gpus = _catalog()
    memo: IndexMemo[int, str] = IndexMemo(limit=2)
    first, second = ProfileIndex(profiles[:50], gpus), ProfileIndex(profiles[:50], gpus)
    memo.of(first).update({1: "a", 2: "b"})
    assert memo.of(first) == {1: "a", 2: "b"} and memo.of(second) == {}
    memo.of(first)[3] = "c"
    assert memo.of(first) == {}  # emptied once past the limit


# --- the network between instances --------------------------------------------------------------------


def _network(kind: str, gbps: float) -> Network:
    return Network(network_class=kind, gbps=gbps, derived=False, rule="test")  # type: ignore[arg-type]


def test_a_slow_network_costs_multi_instance_training_and_says_why() -> None:
    job = {"kind": "fine_tune", "model": {"name": "Llama 3 70B"}, "seq_len": 4096, "sharding": "zero3"}
    fabric = Topology(gpus_per_instance=8, interconnect="nvswitch", network=_network("infiniband", 3200))
    ethernet = Topology(gpus_per_instance=2, interconnect="nvlink", network=_network("ethernet", 25))
    fast = _estimate("h100-sxm", 16, "nvswitch", topology=fabric, **job)
    slow = _estimate("h100-sxm", 16, "nvlink", topology=ethernet, **job)
    assert fast.scaling is not None and slow.scaling is not None
    assert slow.value < 0.5 * fast.value
    assert slow.scaling.bottleneck == "inter_instance" and slow.scaling.communication_fraction > 0.5
    assert fast.scaling.efficiency > 0.8
    assert "ethernet" in slow.scaling.method
    assert slow.band.high / slow.band.low > fast.band.high / fast.band.low  # more doubt when comms dominate


def test_instances_without_a_network_cannot_train_together() -> None:
    isolated = Topology(gpus_per_instance=1, interconnect="none", network=_network("none", 0))
    with pytest.raises(ThroughputUnavailable, match="cannot run across"):
        _estimate("rtx-4090", 2, "none", topology=isolated, kind="fine_tune", model={"name": "Qwen2.5-0.5B"})


# --- hardware order, on the shipped data -------------------------------------------------------------

SXM_ORDER = ("h100-sxm", "h200-sxm", "b200", "b300")
SAME_CHIP_PCIE = (
    ("a100-40gb-pcie", "a100-40gb-sxm"),
    ("a100-80gb-pcie", "a100-80gb-sxm"),
    ("h100-pcie", "h100-sxm"),
)
JOBS: list[tuple[str, dict[str, Any]]] = [
    ("pretrain", {"kind": "train", "model": {"name": "Llama 3 8B"}, "seq_len": 8192}),
    ("pretrain", {"kind": "train", "model": {"name": "Llama 3 70B"}, "seq_len": 4096}),
    ("pretrain", {"kind": "train", "model": {"name": "Qwen2.5-1.5B"}, "seq_len": 2048}),
    ("full_finetune", {"kind": "fine_tune", "model": {"name": "Mistral 7B"}, "seq_len": 4096}),
    ("full_finetune", {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "stack": "optimized"}),
    ("lora", {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "method": "lora"}),
    ("lora", {"kind": "fine_tune", "model": {"name": "Llama 2 13B"}, "method": "qlora", "precision": "nf4"}),
    ("encoder_vision", {"kind": "fine_tune", "model": {"name": "BERT-large"}, "seq_len": 384}),
    ("encoder_vision", {"kind": "train", "model": {"name": "ResNet-50"}}),
    ("prefill", {"kind": "batch_inference", "model": {"name": "BERT-base"}, "seq_len": 384}),
    ("decode", {"kind": "serving", "model": {"name": "Llama 3 8B"}, "seq_len": 2048, "batch_size": 16}),
    ("decode", {"kind": "serving", "model": {"name": "Qwen2.5-7B"}, "seq_len": 1024}),
    ("offline", {"kind": "batch_inference", "model": {"name": "Llama 3 8B"}, "seq_len": 2048}),
]
PRECISIONS = ("bf16", "fp8", "fp32", "int8", "int4")


def _per_gpu(gpu_id: str, job: dict[str, Any], precision: str | None = None) -> ThroughputEstimate | None:
    """The same job (layout and checkpointing fixed) on ``gpu_id``."""
    fields = {"recompute": "none", **job}
    if precision is not None:
        fields["precision"] = precision
    try:
        return _estimate(gpu_id, **fields)
    except (ThroughputUnavailable, InvalidWorkload):
        return None


def _ordered(low: ThroughputEstimate | None, high: ThroughputEstimate | None, slack: float = 1e-9) -> bool:
    """``low ≤ high``, or the pair is excused: one side missing, or a measured row (cited) breaks it."""
    if low is None or high is None or "measured" in (low.route, high.route):
        return True
    return low.value <= high.value * (1 + slack)


@pytest.mark.parametrize(("work_class", "job"), JOBS, ids=[f"{c}:{j['model']['name']}" for c, j in JOBS])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_hardware_order_holds_for_every_class_and_precision(
    work_class: str, job: dict[str, Any], precision: str
) -> None:
    if job.get("precision") and precision != "bf16":
        pytest.skip("the job fixes its precision")
    chosen = None if job.get("precision") else precision
    a100_40, a100_80 = _per_gpu("a100-40gb-sxm", job, chosen), _per_gpu("a100-80gb-sxm", job, chosen)
    if (
        a100_40
        and a100_80
        and work_class not in ("decode", "offline")
        and "measured" not in (a100_40.route, a100_80.route)
    ):
        assert a100_80.value == pytest.approx(a100_40.value, rel=0.10)
    assert _ordered(a100_40, a100_80)  # generation reads the bandwidth: the 80 GB part is never slower
    chain = [_per_gpu(gpu_id, job, chosen) for gpu_id in SXM_ORDER]
    found = [e for e in chain if e is not None]
    if a100_80 is not None and found:
        assert _ordered(a100_80, found[0], slack=-0.05)  # A100 strictly below H100
    for low, high in itertools.pairwise(chain):
        assert _ordered(low, high), (work_class, precision)
    for pcie, sxm in SAME_CHIP_PCIE:
        assert _ordered(_per_gpu(pcie, job, chosen), _per_gpu(sxm, job, chosen)), (pcie, work_class)


@pytest.mark.parametrize(
    ("work_class", "job"), JOBS[:8], ids=[f"{c}:{j['model']['name']}" for c, j in JOBS[:8]]
)
@pytest.mark.parametrize("gpu_id", ["h100-sxm", "h200-sxm", "b200", "b300", "rtx-4090", "l40s", "mi300x"])
def test_fp8_speeds_up_by_at_most_the_peak_ratio(work_class: str, job: dict[str, Any], gpu_id: str) -> None:
    if job.get("precision"):
        pytest.skip("the job fixes its precision")
    bf16, fp8 = _per_gpu(gpu_id, job, "bf16"), _per_gpu(gpu_id, job, "fp8")
    if bf16 is None or fp8 is None or "measured" in (bf16.route, fp8.route):
        return
    hw = hardware_of(_catalog()[1][gpu_id], _catalog()[1])
    ratio = fp8.value / bf16.value
    assert 1.0 <= ratio <= hw.multipliers["fp8"] + 1e-9, (work_class, gpu_id, ratio)


@settings(max_examples=60, deadline=None)
@given(
    job=st.sampled_from([j for c, j in JOBS if c in ("pretrain", "full_finetune", "lora", "encoder_vision")]),
    gpu_id=st.sampled_from(["h100-sxm", "a100-80gb-sxm", "b200", "l40s", "mi300x"]),
    count=st.sampled_from([1, 2, 4, 8, 16, 64, 512]),
    network=st.sampled_from([("infiniband", 3200.0), ("ethernet", 25.0), ("efa", 400.0)]),
)
def test_twice_the_gpus_never_give_more_than_twice_the_throughput(
    job: dict[str, Any], gpu_id: str, count: int, network: tuple[str, float]
) -> None:
    gpus = _catalog()[1]
    interconnect: Interconnect = "nvswitch" if gpu_id != "l40s" else "pcie"

    def value(n: int) -> float | None:
        topology = Topology(
            gpus_per_instance=min(n, 8), interconnect=interconnect, network=_network(*network)
        )
        try:
            found = _estimate(gpu_id, n, interconnect, topology=topology, **job)
        except (ThroughputUnavailable, InvalidWorkload):
            return None
        return None if found.route == "measured" else found.value  # a measured row may break it, cited

    one, two = value(count), value(2 * count)
    if one is not None and two is not None:
        assert two <= 2 * one * (1 + 1e-9)
    assert gpus[gpu_id]


def test_more_gpus_inside_one_instance_never_give_less() -> None:
    for job in (JOBS[0][1], JOBS[3][1], JOBS[5][1]):
        values = [_estimate("a100-80gb-sxm", n, "nvswitch", **job).value for n in range(1, 9)]
        assert all(b >= a for a, b in itertools.pairwise(values)), job
