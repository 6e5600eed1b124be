"""Serving capacity: bucket lookup on the shipped Mélange rows, derived capacity and its held-out check."""

from __future__ import annotations

import functools
import math
import statistics
from collections import defaultdict

import msgspec
import pytest

from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.profiles import MeasuredProfile, ServingProfile
from solver.spec.serving import RequestClass, ServingSlo
from solver.spec.workload import ModelSpec, Precision, ResolvedWorkload, Workload, resolve_workload
from solver.throughput.calibration import ProfileIndex
from solver.throughput.capacity import (
    MAX_CONCURRENT_SEQUENCES,
    Capacity,
    CapacityUnavailable,
    bucket_of,
    class_capacity,
    derive_capacity,
    derived_capacity,
    measured_capacity,
)

MELANGE_GPUS = ("l4", "a10g", "a100-80gb-pcie", "h100-sxm")
MAX_MEDIAN_ERROR_FACTOR = 4.0  # per GPU: median of max(derived/measured, measured/derived)
# Derived capacities model an optimized engine (decode calibrated on TensorRT-LLM 2025 and MLPerf rows);
# Mélange measured vLLM of 2023, which spends more per step: the derived side is higher on fast GPUs.
MIN_RANK_CORRELATION = 0.9  # Spearman, derived vs measured over all rows


@functools.cache
def _catalog() -> tuple[list[ServingProfile], list[MeasuredProfile], dict[str, GpuSpec], ProfileIndex]:
    catalog = read_seed_catalog()
    gpus = {gpu.gpu_id: gpu for gpu in catalog.gpus}
    return catalog.serving.items, catalog.profiles.items, gpus, ProfileIndex(catalog.profiles.items, gpus)


def _serving(model: str = "Llama-2-7b", precision: Precision = "bf16") -> ResolvedWorkload:
    return resolve_workload(Workload(kind="serving", model=ModelSpec(name=model), precision=precision))


def _derive(
    gpu_id: str,
    i: int,
    o: int,
    slo: ServingSlo | None = None,
    *,
    model: str = "Llama-2-7b",
    tp: int = 1,
    precision: Precision = "bf16",
) -> Capacity | CapacityUnavailable:
    _, profiles, gpus, index = _catalog()
    interconnect: Interconnect = "none" if tp == 1 else "nvswitch"
    return derive_capacity(
        _serving(model, precision),
        gpus[gpu_id],
        tp,
        i,
        o,
        slo,
        profiles=profiles,
        gpus=gpus,
        interconnect=interconnect,
        index=index,
    )


def _rate(found: Capacity | CapacityUnavailable) -> float:
    assert isinstance(found, Capacity), found
    return found.requests_per_s


def test_the_shipped_rows_form_a_6x6_grid_per_gpu() -> None:
    rows = _catalog()[0]
    assert len(rows) == 144 and {r.gpu_id for r in rows} == set(MELANGE_GPUS)
    for gpu_id in MELANGE_GPUS:
        cells = {(r.input_len_hi_incl, r.output_len_hi_incl) for r in rows if r.gpu_id == gpu_id}
        assert len(cells) == 36


def test_bucket_lookup_finds_the_range_holding_the_lengths() -> None:
    rows = _catalog()[0]
    row = bucket_of(rows, "Llama-2-7b", "l4", 1, 30, 80)
    assert row is not None
    assert (row.input_len_lo_excl, row.input_len_hi_incl) == (25, 100)
    assert (row.output_len_lo_excl, row.output_len_hi_incl) == (25, 100)
    assert bucket_of(rows, "Llama 2 7B", "l4", 1, 30, 80) == row  # names matched through the catalog
    assert bucket_of(rows, "meta-llama/Llama-2-7b-chat-hf", "l4", 1, 30, 80) == row


@pytest.mark.parametrize(
    ("i", "o", "expected"),
    [
        (25, 25, ((0, 25), (0, 25))),  # hi included
        (26, 25, ((25, 100), (0, 25))),  # lo excluded
        (1, 1, ((0, 25), (0, 25))),
        (2000, 2000, ((1000, 2000), (1000, 2000))),
        (1000, 1001, ((500, 1000), (1000, 2000))),
        (2001, 10, None),
        (10, 2001, None),
    ],
)
def test_bucket_edges(i: int, o: int, expected: tuple[tuple[int, int], tuple[int, int]] | None) -> None:
    row = bucket_of(_catalog()[0], "Llama-2-7b", "a10g", 1, i, o)
    if expected is None:
        assert row is None
    else:
        assert row is not None
        got = (
            (row.input_len_lo_excl, row.input_len_hi_incl),
            (row.output_len_lo_excl, row.output_len_hi_incl),
        )
        assert got == expected


def test_no_bucket_for_other_gpus_tp_or_models() -> None:
    rows = _catalog()[0]
    assert bucket_of(rows, "Llama-2-7b", "t4", 1, 30, 80) is None
    assert bucket_of(rows, "Llama-2-7b", "l4", 2, 30, 80) is None
    assert bucket_of(rows, "Llama 3 8B", "l4", 1, 30, 80) is None
    assert bucket_of(rows, "no such model at all", "l4", 1, 30, 80) is None


def test_a_gpu_without_the_precision_has_no_capacity_and_says_what_it_runs() -> None:
    found = _derive("t4", 30, 80)  # bf16 on Turing
    assert isinstance(found, CapacityUnavailable) and found.reason == "throughput_unavailable"
    assert found.detail == "T4 has no bf16 tensor cores; it runs fp32, fp16, int8"


def test_measured_capacity_cites_its_row() -> None:
    rows = _catalog()[0]
    row = bucket_of(rows, "Llama-2-7b", "h100-sxm", 1, 300, 300)
    found = measured_capacity(rows, "Llama-2-7b", "h100-sxm", 1, 300, 300)
    assert row is not None and found is not None
    assert found.provenance == "measured" and found.sources == [row.serving_id]
    assert found.requests_per_s == row.max_requests_per_s and "not stated" in found.method
    assert measured_capacity(rows, "Llama-2-7b", "t4", 1, 300, 300) is None


def test_derived_capacity_has_provenance_and_method() -> None:
    found = _derive("t4", 30, 80, precision="fp16")  # Turing has no bf16
    assert isinstance(found, Capacity)
    assert found.provenance == "derived" and found.sources == [] and found.throughput_sources
    assert found.requests_per_s > 0 and found.confidence in ("medium", "low")
    for term in ("KV room", "decode", "prefill", "R = 1/(t_p + O/D)"):
        assert term in found.method


def test_derived_capacity_falls_with_longer_requests_and_tighter_slos() -> None:
    short, long_out, long_in = (
        _rate(_derive("a10g", 100, 100)),
        _rate(_derive("a10g", 100, 800)),
        _rate(_derive("a10g", 800, 100)),
    )
    assert long_out < short and long_in < short
    free = _rate(_derive("a100-80gb-pcie", 200, 200))
    loose = _rate(_derive("a100-80gb-pcie", 200, 200, ServingSlo(tpot_ms=500, ttft_ms=5000)))
    tight = _rate(_derive("a100-80gb-pcie", 200, 200, ServingSlo(tpot_ms=30)))
    assert tight < loose <= free
    ttft_p99 = _rate(_derive("a100-80gb-pcie", 200, 200, ServingSlo(ttft_ms=60)))
    ttft_p50 = _rate(_derive("a100-80gb-pcie", 200, 200, ServingSlo(ttft_ms=60, percentile=50)))
    assert ttft_p99 < free and ttft_p99 <= ttft_p50


def test_a_model_that_does_not_fit_has_no_capacity_and_says_why() -> None:
    _, profiles, gpus, index = _catalog()
    big = _serving("Llama 2 70B")
    assert (
        derived_capacity(big, gpus["l4"], 1, 30, 80, None, profiles=profiles, gpus=gpus, index=index) is None
    )
    why = derive_capacity(big, gpus["l4"], 1, 30, 80, None, profiles=profiles, gpus=gpus, index=index)
    assert isinstance(why, CapacityUnavailable) and why.reason == "no_kv_room" and "GiB" in why.detail
    assert isinstance(_derive("h100-sxm", 30, 80, model="Llama 2 70B", tp=2), Capacity)


def test_other_reasons_for_no_capacity() -> None:
    too_long = _derive("h100-sxm", 3000, 2000)
    assert isinstance(too_long, CapacityUnavailable) and too_long.reason == "context_too_long"
    _, profiles, gpus, index = _catalog()
    unlinked = derive_capacity(
        _serving(), gpus["l4"], 2, 30, 80, None, profiles=profiles, gpus=gpus, index=index
    )
    assert isinstance(unlinked, CapacityUnavailable) and unlinked.reason == "tp_invalid"
    hopeless = _derive("l4", 30, 80, ServingSlo(tpot_ms=1.0))
    assert isinstance(hopeless, CapacityUnavailable) and hopeless.reason == "slo_unreachable"


def test_the_batch_never_exceeds_the_kv_cache_or_the_engine_limit() -> None:
    found = _derive("l4", 1500, 1500)
    assert isinstance(found, Capacity)
    batch = int(found.method.split("; batch ")[1].split(" ")[0])
    sequences = int(found.method.split(" sequences;")[0].rsplit("= ", 1)[1])
    assert 1 <= batch <= min(sequences, MAX_CONCURRENT_SEQUENCES)


def test_class_capacity_prefers_the_measured_bucket_and_derives_elsewhere() -> None:
    serving, profiles, gpus, index = _catalog()
    rw = _serving()

    def cap(gpu_id: str, i: int, o: int, slo: ServingSlo | None = None, precision: str = "bf16") -> Capacity:
        work = msgspec.structs.replace(rw, precision=precision)
        request = RequestClass(input_tokens=i, output_tokens=o, share=1.0)
        return class_capacity(
            serving, work, gpus[gpu_id], 1, request, slo, profiles=profiles, gpus=gpus, index=index
        )

    measured = cap("l4", 30, 80)
    assert measured.provenance == "measured" and len(measured.sources) == 1
    assert cap("l4", 3000, 50).provenance == "derived"  # outside the grid
    assert cap("t4", 30, 80, precision="fp16").requests_per_s > 0  # no rows for the GPU: derived
    assert cap("t4", 30, 80, precision="fp16").provenance == "derived"
    assert cap("l4", 30, 80, precision="int4").provenance == "derived"  # the rows are 16-bit runs
    slo = ServingSlo(tpot_ms=60)
    scaled = cap("a100-80gb-pcie", 200, 200, slo)
    assert scaled.provenance == "derived" and scaled.sources == measured_sources("a100-80gb-pcie", 200, 200)
    assert 0 < scaled.requests_per_s < cap("a100-80gb-pcie", 200, 200).requests_per_s
    assert cap("l4", 30, 80, ServingSlo(tpot_ms=1.0)).requests_per_s == 0.0


def measured_sources(gpu_id: str, i: int, o: int) -> list[int]:
    found = measured_capacity(_catalog()[0], "Llama-2-7b", gpu_id, 1, i, o)
    assert found is not None
    return found.sources


def _spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        for rank, position in enumerate(order):
            out[position] = float(rank)
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def test_derived_capacity_against_the_held_out_melange_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """Derive every measured cell (at its bucket's midpoint, no SLO) and compare.

    The derivation never reads serving rows (only the throughput and memory models), so every row
    is held out: hiding a GPU's rows changes nothing. The rows' own SLO is not stated.
    """
    rows = _catalog()[0]
    logs: dict[str, list[float]] = defaultdict(list)
    by_output: dict[int, list[float]] = defaultdict(list)
    derived, measured = [], []
    for row in rows:
        i = max(1, (row.input_len_lo_excl + row.input_len_hi_incl) // 2)
        o = max(1, (row.output_len_lo_excl + row.output_len_hi_incl) // 2)
        found = _derive(row.gpu_id, i, o)
        assert isinstance(found, Capacity) and found.sources == []
        error = math.log(found.requests_per_s / row.max_requests_per_s)
        logs[row.gpu_id].append(error)
        by_output[row.output_len_hi_incl].append(error)
        derived.append(found.requests_per_s)
        measured.append(row.max_requests_per_s)
    rho = _spearman(derived, measured)
    lines = [
        "",
        "derived vs measured Mélange capacity (Llama-2-7b, 1 GPU, bucket midpoints, no SLO; ratio = derived/measured)",
        f"{'GPU / output bucket':<22}{'rows':>5}{'median ratio':>14}{'median error':>14}{'worst error':>13}",
    ]
    groups = [(g, logs[g]) for g in MELANGE_GPUS] + [
        (f"output ≤ {k}", v) for k, v in sorted(by_output.items())
    ]
    for name, errors in groups:
        median_factor = math.exp(statistics.median(abs(e) for e in errors))
        worst = math.exp(max(abs(e) for e in errors))
        lines.append(
            f"{name:<22}{len(errors):>5}{math.exp(statistics.median(errors)):>13.2f}×"
            f"{median_factor:>13.2f}×{worst:>12.2f}×"
        )
    lines.append(f"Spearman rank correlation over {len(rows)} rows: {rho:.3f}")
    with capsys.disabled():
        print("\n".join(lines))
    for gpu_id in MELANGE_GPUS:
        assert math.exp(statistics.median(abs(e) for e in logs[gpu_id])) < MAX_MEDIAN_ERROR_FACTOR, gpu_id
    assert rho >= MIN_RANK_CORRELATION
