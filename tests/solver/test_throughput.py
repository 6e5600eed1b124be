"""The throughput model: measured matches, derived numbers with provenance, its invariants, and a
leave-one-out check against every shipped measured row."""

from __future__ import annotations

import functools
import itertools
import statistics
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.db.seed_files import read_seed_catalog
from solver.calibration import IndexMemo, ProfileIndex
from solver.errors import InvalidWorkload, SolverError, ThroughputUnavailable
from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.observations import Observation, precision_class, setup_of
from solver.profiles import MeasuredProfile
from solver.throughput import (
    ThroughputEstimate,
    estimate_query,
    estimate_throughput,
    query_for_observation,
)
from solver.workload import Workload, resolve_workload

MAX_TRAIN_MEDIAN_ERROR = 0.25
MAX_INFERENCE_MEDIAN_ERROR = 0.30
MIN_COVERAGE = 0.95


@functools.cache
def _catalog() -> tuple[list[MeasuredProfile], dict[str, GpuSpec]]:
    catalog = read_seed_catalog()
    return catalog.profiles.items, {gpu.gpu_id: gpu for gpu in catalog.gpus}


@functools.cache
def _index() -> ProfileIndex:
    profiles, gpus = _catalog()
    return ProfileIndex(profiles, gpus)


def _estimate(
    gpu_id: str, count: int = 1, interconnect: Interconnect = "none", **fields: Any
) -> ThroughputEstimate:
    fields.setdefault("kind", "train")
    fields.setdefault("model", {"name": "Qwen2.5-7B"})
    fields.setdefault("gpu_count", max(count, fields.get("tp", 1)))
    workload = resolve_workload(msgspec.convert(fields, Workload))
    profiles, gpus = _catalog()
    return estimate_throughput(workload, gpus[gpu_id], count, interconnect, profiles, gpus, index=_index())


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
    assert estimate.confidence == "high"


def test_missing_count_is_derived_with_sources_and_method() -> None:
    one = _estimate("h100-sxm", seq_len=1024)
    eight = _estimate("h100-sxm", 8, "nvswitch", seq_len=1024)
    assert eight.provenance == "derived"
    assert eight.sources and "8-GPU scaling" in eight.method
    assert one.value * 6 < eight.value <= one.value * 8
    known = {p.profile_id for p in _catalog()[0]}
    assert {s.profile_id for s in eight.sources} <= known


def test_missing_gpu_is_derived_from_that_gpus_mfu() -> None:
    estimate = _estimate("a100-80gb-sxm", model={"name": "Llama 3 8B"}, kind="fine_tune")
    assert estimate.provenance == "derived" and estimate.route == "physics"
    assert estimate.sources and all(s.gpu_id == "a100-80gb-sxm" for s in estimate.sources)
    assert "MFU" in estimate.method


def test_gpu_without_rows_uses_spec_ratio_with_low_confidence() -> None:
    estimate = _estimate("b300", model={"name": "Llama 3 8B"}, kind="fine_tune")
    assert estimate.provenance == "derived" and estimate.route == "spec_ratio"
    assert estimate.confidence == "low" and estimate.sources


def test_nearby_setting_is_converted_and_derived() -> None:
    estimate = _estimate("h100-sxm", seq_len=2048)
    assert estimate.provenance == "derived"
    assert "measured setting nearest to 2048" in estimate.method
    assert estimate.value < _estimate("h100-sxm", seq_len=1024).value  # longer sequences cost more per token


def test_lora_derives_at_least_full_training() -> None:
    for gpu_id in ("h100-sxm", "a100-80gb-sxm", "rtx-4090", "l4"):
        full = _estimate(gpu_id, kind="fine_tune", model={"name": "Llama 3 8B"})
        lora = _estimate(gpu_id, kind="fine_tune", model={"name": "Llama 3 8B"}, method="lora")
        qlora = _estimate(
            gpu_id, kind="fine_tune", model={"name": "Llama 3 8B"}, method="qlora", precision="nf4"
        )
        assert lora.provenance == "derived"
        assert lora.value >= full.value, gpu_id
        assert qlora.value >= full.value, gpu_id
        recompute = _estimate(gpu_id, kind="fine_tune", model={"name": "Llama 3 8B"}, recompute="full")
        assert recompute.value < full.value, gpu_id


WORKLOADS: list[dict[str, Any]] = [
    {"kind": "train", "model": {"name": "Qwen2.5-7B"}, "seq_len": 1024},
    {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "method": "lora"},
    {"kind": "train", "model": {"name": "ResNet-50"}},
    {"kind": "fine_tune", "model": {"name": "BERT-large"}, "seq_len": 384},
    {
        "kind": "batch_inference",
        "model": {"name": "Llama 3.3 70B"},
        "precision": "fp8",
        "seq_len": 2048,
        "tp": 2,
    },
    {"kind": "serving", "model": {"name": "Llama 3 8B"}, "precision": "int4", "seq_len": 1024, "tp": 2},
]
GPU_IDS = [
    "h100-sxm",
    "a100-80gb-sxm",
    "rtx-4090",
    "l40s",
    "b200",
    "rtx-pro-6000-blackwell-server",
    "v100-16gb",
]
CLASSES: list[Interconnect] = ["none", "pcie", "nvlink", "nvswitch"]


def _derived(gpu_id: str, count: int, interconnect: Interconnect, fields: dict[str, Any]) -> float | None:
    tp = fields.get("tp", 1)
    if count % tp or count < tp:
        return None
    try:
        estimate = _estimate(gpu_id, count, interconnect, **fields)
    except (ThroughputUnavailable, InvalidWorkload):
        return None
    return estimate.value if estimate.provenance == "derived" else None


@settings(max_examples=80, deadline=None)
@given(
    fields=st.sampled_from(WORKLOADS),
    gpu_id=st.sampled_from(GPU_IDS),
    interconnect=st.sampled_from(CLASSES),
    counts=st.lists(
        st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 64, 1024]), min_size=2, max_size=2, unique=True
    ),
)
def test_more_gpus_never_give_less_derived_throughput(
    fields: dict[str, Any], gpu_id: str, interconnect: Interconnect, counts: list[int]
) -> None:
    fewer, more = sorted(counts)
    low, high = _derived(gpu_id, fewer, interconnect, fields), _derived(gpu_id, more, interconnect, fields)
    if low is not None and high is not None:
        assert high >= low * (1 - 1e-9)


@settings(max_examples=80, deadline=None)
@given(
    fields=st.sampled_from(WORKLOADS),
    gpu_id=st.sampled_from(GPU_IDS),
    classes=st.lists(st.sampled_from(CLASSES), min_size=2, max_size=2, unique=True),
    count=st.sampled_from([2, 4, 8, 16]),
)
def test_better_interconnect_never_gives_less_derived_throughput(
    fields: dict[str, Any], gpu_id: str, classes: list[Interconnect], count: int
) -> None:
    worse, better = sorted(classes, key=INTERCONNECT_RANK.__getitem__)
    low, high = _derived(gpu_id, count, worse, fields), _derived(gpu_id, count, better, fields)
    if low is not None and high is not None:
        assert high >= low * (1 - 1e-9)


def test_scaling_sweep_is_monotone_for_a_typical_plan() -> None:
    values = [
        _estimate("a100-80gb-sxm", n, "nvswitch", kind="fine_tune", model={"name": "Llama 3 8B"}).value
        for n in range(1, 33)
    ]
    assert all(b >= a for a, b in itertools.pairwise(values))


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
    bare = GpuSpec(gpu_id="mystery-gpu", name="Mystery GPU", vendor="NVIDIA", memory_gib=48)
    profiles, gpus = _catalog()
    workload = resolve_workload(msgspec.convert({"kind": "train", "model": {"name": "ResNet-50"}}, Workload))
    with pytest.raises(ThroughputUnavailable, match="no measured row or calibration"):
        estimate_throughput(workload, bare, 1, "none", profiles, {**gpus, bare.gpu_id: bare})
    with pytest.raises(InvalidWorkload):
        _estimate("h100-sxm", 0)
    with pytest.raises(InvalidWorkload, match="tensor-parallel"):
        _estimate("h100-sxm", 2, "none", kind="serving", model={"name": "Llama 3 8B"}, tp=2)


def test_precision_spellings_map_to_classes() -> None:
    assert precision_class("fp16_amp") == "bf16"
    assert precision_class("mlperf_closed:fp8") == "fp8"
    assert precision_class("q4_k_m") == "int4"
    assert precision_class("nvfp4") == "fp4"
    assert precision_class("mlperf_closed:{'clip1':'fp16','clip2':'fp16','unet':'fp8','vae':'int8'}") == "fp8"
    assert precision_class("mlperf_closed:fp8,fp16,int8") == "fp8"
    assert precision_class("posit8") is None
    assert all(precision_class(p.precision) is not None for p in _catalog()[0])


def test_suspect_rows_stay_out_of_scaling_fits() -> None:
    index = _index()
    suspect = {o.profile.profile_id for o in index.observations if o.suspect}
    assert len(suspect) >= 20
    for obs in index.observations:
        if obs.profile.gpu_count > 1:
            fit = index.scaling((obs.group, obs.work, obs.hardware, obs.mode), obs.interconnect)
            assert not suspect & set(fit.profile_ids), obs.profile.profile_id


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


def test_remembered_answers_match_fresh_ones_in_any_order() -> None:
    """The per-index caches change no answer: a warm index and a fresh one asked in reverse order agree."""
    profiles, gpus = _catalog()
    classes: tuple[Interconnect, ...] = ("none", "pcie", "nvswitch")
    calls = [
        (resolve_workload(msgspec.convert({"gpu_count": fields.get("tp", 1), **fields}, Workload)), *setup)
        for fields in WORKLOADS
        for setup in itertools.product(("h100-sxm", "l40s", "b200", "v100-16gb"), (1, 2, 4, 8), classes)
    ]

    def answers(index: ProfileIndex, order: list[int]) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        for i in order:
            workload, gpu_id, count, interconnect = calls[i]
            try:
                estimate = estimate_throughput(
                    workload, gpus[gpu_id], count, interconnect, profiles, gpus, index=index
                )
                found[i] = msgspec.json.encode(estimate)
            except SolverError as error:
                found[i] = repr(error).encode()
        return found

    forward = list(range(len(calls)))
    warm = answers(_index(), forward)
    assert answers(_index(), forward) == warm
    assert answers(ProfileIndex(profiles, gpus), forward[::-1]) == warm


def test_index_memo_is_per_index_and_bounded() -> None:
    profiles, gpus = _catalog()
    memo: IndexMemo[int, str] = IndexMemo(limit=2)
    first, second = ProfileIndex(profiles[:50], gpus), ProfileIndex(profiles[:50], gpus)
    memo.of(first).update({1: "a", 2: "b"})
    assert memo.of(first) == {1: "a", 2: "b"} and memo.of(second) == {}
    memo.of(first)[3] = "c"
    assert memo.of(first) == {}  # emptied once past the limit


# --- leave-one-out over the shipped measured rows ---------------------------------------------------


def _leave_out(
    hide: Callable[[Observation], frozenset[int]], only: Callable[[Observation], bool] = lambda _: True
) -> list[tuple[Observation, ThroughputEstimate | None]]:
    """Hide rows, derive the row from the rest (within its source group), never citing a hidden row."""
    index = _index()
    results: list[tuple[Observation, ThroughputEstimate | None]] = []
    for obs in filter(only, index.observations):
        hidden = hide(obs)
        assert obs.profile.profile_id in hidden
        try:
            estimate = estimate_query(query_for_observation(obs), index, hidden)
        except ThroughputUnavailable:
            results.append((obs, None))
            continue
        assert estimate.provenance == "derived" and estimate.sources
        assert not hidden & {s.profile_id for s in estimate.sources}
        results.append((obs, estimate))
    return results


def _table(
    results: list[tuple[Observation, ThroughputEstimate | None]],
    key: Callable[[Observation, ThroughputEstimate | None], str],
) -> tuple[list[str], dict[str, tuple[int, float, float]]]:
    groups: dict[str, list[float | None]] = {}
    for obs, estimate in results:
        error = None if estimate is None else abs(estimate.value / obs.profile.value - 1)
        groups.setdefault(key(obs, estimate), []).append(error)
    lines, stats = [], {}
    for name in sorted(groups):
        errors = sorted(e for e in groups[name] if e is not None)
        coverage = len(errors) / len(groups[name])
        median = statistics.median(errors) if errors else float("nan")
        p90 = errors[int(0.9 * (len(errors) - 1))] if errors else float("nan")
        stats[name] = (len(groups[name]), coverage, median)
        lines.append(f"  {name[:52]:<52} {len(groups[name]):>5} {coverage:>8.1%} {median:>9.1%} {p90:>8.1%}")
    return lines, stats


def _report(
    title: str, results: list[tuple[Observation, ThroughputEstimate | None]]
) -> dict[str, tuple[int, float, float]]:
    header = f"  {'':<52} {'rows':>5} {'derived':>8} {'median|e|':>9} {'p90|e|':>8}"
    by_task, stats = _table(results, lambda o, _: o.profile.task)
    by_source, _ = _table(results, lambda o, _: o.group)
    by_route, _ = _table(results, lambda _, e: e.route if e else "(not derivable)")
    overall, totals = _table(results, lambda o, _: "all rows")
    print(f"\n{title}\n{header}")
    for caption, lines in (
        ("by task", by_task),
        ("by source", by_source),
        ("by route", by_route),
        ("", overall),
    ):
        if caption:
            print(f" {caption}")
        print("\n".join(lines))
    return {**stats, **totals}


def test_leave_one_out_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    index = _index()
    row_results = _leave_out(
        lambda o: frozenset(d.profile.profile_id for d in index.by_exact[o.work, setup_of(o)])
    )
    cells: dict[tuple[object, ...], frozenset[int]] = {}
    for obs in index.observations:
        key = (obs.work, obs.hardware)
        cells[key] = cells.get(key, frozenset()) | {obs.profile.profile_id}
    cell_results = _leave_out(lambda o: cells[o.work, o.hardware])
    models: dict[str, frozenset[int]] = {}
    for obs in index.observations:
        models[obs.work.model] = models.get(obs.work.model, frozenset()) | {obs.profile.profile_id}
    model_results = _leave_out(lambda o: models[o.work.model], only=lambda o: o.cost is not None)
    with capsys.disabled():
        rows = _report(
            "LEAVE-ONE-OUT: each row (and its exact duplicates) hidden, derived from the rest", row_results
        )
        harder = _report(
            "LEAVE-CELL-OUT: every row of the same work on the same GPU and precision hidden", cell_results
        )
        _report(
            "LEAVE-MODEL-OUT: rows with a known work per unit, every row of their model hidden"
            " (exercises the MFU / bandwidth formulas)",
            model_results,
        )
    assert rows["train"][2] <= MAX_TRAIN_MEDIAN_ERROR
    assert rows["inference"][2] <= MAX_INFERENCE_MEDIAN_ERROR
    assert rows["all rows"][1] >= MIN_COVERAGE
    assert harder["train"][2] <= MAX_TRAIN_MEDIAN_ERROR
