"""The derivation routes of the throughput model: how a missing number is inferred from measured rows.

Tried in this order by :func:`derive` (the first with data wins):

1. ``same_cell`` — the same work on the same GPU and precision at other GPU counts (1-GPU equivalents),
   first only when the scaling it needs comes from this work's own pairs of measured counts;
2. ``two_way`` at the GPU count — a log-additive (work × hardware) model inside one source,
   ``v(W, H) ≈ v(W, H') · v(W', H) / v(W', H')``, weighted median over every other hardware ``H'`` that
   ran ``W`` and every other work ``W'`` that ran on both (same GPU, same generation and same model weigh
   more). It covers models outside the LLM formulas (ResNet-50, SSD, BERT, GNMT, Transformer-XL);
3. ``same_cell`` with a scaling efficiency borrowed from other work or GPUs;
4. ``two_way`` on 1-GPU equivalents (hardware at any count);
5. ``physics`` — the same GPU and precision, other works with a known work per unit
   (:mod:`solver.workcost`): their achieved FLOP/s (MFU × peak) or byte/s (bandwidth efficiency) divided
   by this work's, so training gives ``tokens/s = MFU · peak · S(n) / (k·P)`` with the MFU of this GPU;
6. ``spec_ratio`` — other GPUs: achieved rate × this GPU's peak ÷ theirs (bf16 dense TFLOPS for
   compute-bound modes, memory bandwidth for decoding, bandwidth standing in where TFLOPS are unknown),
   same generation weighted up;
7. ``physics`` then ``spec_ratio`` across precisions, converted by the speed ratio of works measured at
   both precisions, else :data:`NOMINAL_PRECISION_SPEED`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, Literal, NamedTuple

import msgspec

from solver.calibration import Cell, IndexMemo, ProfileIndex, TwoWayTable
from solver.gpus import GpuSpec, Interconnect
from solver.models import ModelArch, active_params
from solver.observations import (
    HardwareKey,
    Mode,
    Observation,
    Setup,
    WorkKey,
    gpu_generation,
    weighted_median,
)
from solver.workcost import PrecisionClass

__all__ = [
    "ALL_ROUTES",
    "NOMINAL_PRECISION_SPEED",
    "Route",
    "RouteEstimate",
    "ThroughputQuery",
    "derive",
    "measured_rows",
]

Route = Literal["measured", "same_cell", "two_way", "physics", "spec_ratio"]
ALL_ROUTES: Final[frozenset[Route]] = frozenset({"measured", "same_cell", "two_way", "physics", "spec_ratio"})
NOMINAL_PRECISION_SPEED: Final[dict[str, float]] = {
    "fp32": 0.5,
    "bf16": 1.0,
    "fp8": 2.0,
    "int8": 2.0,
    "int4": 1.0,
    "fp4": 4.0,
}
"""Dense tensor-core throughput relative to bf16 (TF32 for fp32; int4 is weight-only, computed in 16 bit),
used only when no work was measured at both precisions."""


class ThroughputQuery(msgspec.Struct, frozen=True, kw_only=True):
    """What to estimate, in the calibration's terms; ``group`` restricts calibration to one source."""

    work: WorkKey
    hardware: HardwareKey
    gpu_count: int
    interconnect: Interconnect
    mode: Mode
    label: str
    arch: ModelArch | None = None
    cost: float | None = None
    group: str | None = None
    scale: float = 1.0
    """Factor applied to the answer (work ratio from the asked setting to the measured one)."""
    adjustment: str = ""
    """How ``scale`` was obtained; non-empty makes even a matching row a derived answer."""


class RouteEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """A derived value (natural log), the route that gave it, the rows behind it and how it was made."""

    log_value: float
    route: Route
    paths: int
    """How many independent estimates the route combined."""
    rows: list[tuple[float, int]]
    """``(weight, profile_id)`` of every row used, weightiest first (ties by profile id)."""
    text: str
    at_count: bool = False
    """Whether ``log_value`` is already at the query's GPU count (else it is a 1-GPU equivalent)."""
    cross_precision: bool = False


# Bounds of the per-index caches below: a plan asks for about 50 (work, hardware) fallbacks of one
# work; an entry of either of the two large caches holds a few hundred rows or cells (10-30 kB).
_FALLBACKS_LIMIT: Final = 2048
_CANDIDATES_LIMIT: Final = 256
_SMALL_LIMIT: Final = 4096
_Fallback = tuple[WorkKey, HardwareKey, Mode, ModelArch | None, float | None, str | None, frozenset[Route]]
_FALLBACKS: IndexMemo[_Fallback, tuple[RouteEstimate | None]] = IndexMemo(_FALLBACKS_LIMIT)
_SHIFTS: IndexMemo[tuple[Mode, PrecisionClass, PrecisionClass], tuple[float, str]] = IndexMemo(_SMALL_LIMIT)
_SPECS: IndexMemo[tuple[bool, str], dict[str, tuple[float, bool] | None]] = IndexMemo(_SMALL_LIMIT)


class _Candidate(NamedTuple):
    """A ``per_gpu`` cell the transfer routes may use for a work, with its GPU-independent terms."""

    cell: Cell
    gpu_id: str
    precision: PrecisionClass
    generation: str | None
    cost_ratio: float
    similarity: float
    value: float | None
    """The cell's log value with nothing left out (:meth:`ProfileIndex.value`), and its rows."""
    used: tuple[int, ...]


class _Candidates(NamedTuple):
    """The candidates of one work in table order: all of them, by GPU and by precision."""

    everything: list[_Candidate]
    by_gpu: dict[str, list[_Candidate]]
    by_precision: dict[PrecisionClass, list[_Candidate]]


_CandidateKey = tuple[Mode, WorkKey, float | None, ModelArch | None]
_CANDIDATES: IndexMemo[_CandidateKey, _Candidates] = IndexMemo(_CANDIDATES_LIMIT)


def _ranked(rows: dict[int, float]) -> list[tuple[float, int]]:
    """``(weight, profile_id)`` pairs, weightiest first (ties by profile id)."""
    return [(-negative, pid) for negative, pid in sorted((-weight, pid) for pid, weight in rows.items())]


def _groups(query: ThroughputQuery, index: ProfileIndex, work: WorkKey) -> list[str]:
    groups = index.groups_of.get(work, [])
    return [g for g in groups if g == query.group] if query.group is not None else groups


def _setup(query: ThroughputQuery) -> Setup:
    return Setup(query.hardware.gpu_id, query.hardware.precision, query.gpu_count, query.interconnect)


def _same_cell(query: ThroughputQuery, index: ProfileIndex, exclude: frozenset[int]) -> RouteEstimate | None:
    found: list[tuple[float, float]] = []
    rows: list[tuple[float, int]] = []
    for group in _groups(query, index, query.work):
        value, used = index.value(index.per_gpu, (group, query.work, query.hardware), exclude)
        if value is not None:
            found.append((value, 1.0))
            rows.extend((1.0, pid) for pid in used)
    if not found:
        return None
    rows.sort(key=lambda item: item[1])  # all weights are 1
    text = f"same work on {query.hardware.gpu_id} at other GPU counts (1-GPU equivalent of {len(rows)} rows)"
    return RouteEstimate(
        log_value=weighted_median(found), route="same_cell", paths=len(rows), rows=rows, text=text
    )


def _generation_match(a: str, b: str) -> bool:
    generation = gpu_generation(a)
    return generation is not None and generation == gpu_generation(b)


def _gpu_weight(target: HardwareKey, other: HardwareKey) -> float:
    if other.gpu_id == target.gpu_id:
        return 3.0
    if other.precision == target.precision:
        return 2.0 if _generation_match(other.gpu_id, target.gpu_id) else 1.0
    return 0.5


def _setup_weight(target: Setup, other: Setup) -> float:
    weight = _gpu_weight(
        HardwareKey(target.gpu_id, target.precision), HardwareKey(other.gpu_id, other.precision)
    )
    return (
        weight
        if (other.gpu_count, other.interconnect) == (target.gpu_count, target.interconnect)
        else weight / 2
    )


def _two_way[K](
    query: ThroughputQuery,
    index: ProfileIndex,
    exclude: frozenset[int],
    table: TwoWayTable[K],
    target: K,
    weigh: Callable[[K, K], float],
) -> RouteEstimate | None:
    paths: list[tuple[float, float]] = []
    rows: dict[int, float] = {}
    for group in _groups(query, index, query.work):
        others = table.work_on.get((group, target), [])
        if not others:
            continue  # no bridge work: no path through this group
        for hardware in table.hardware_of.get((group, query.work), []):
            if hardware == target:
                continue
            anchor, anchor_rows = index.value(table, (group, query.work, hardware), exclude)
            if anchor is None:
                continue
            weight_h = weigh(target, hardware)
            for work in others:
                if work == query.work or (group, work, hardware) not in table.cells:
                    continue
                there, there_rows = index.value(table, (group, work, target), exclude)
                bridge, bridge_rows = index.value(table, (group, work, hardware), exclude)
                if there is None or bridge is None:
                    continue
                weight = weight_h * (3.0 if work.model == query.work.model else 1.0)
                paths.append((anchor + there - bridge, weight))
                for pid in (*anchor_rows, *there_rows, *bridge_rows):
                    rows[pid] = rows.get(pid, 0.0) + weight
    if not paths:
        return None
    at_count = isinstance(target, Setup)
    text = (
        f"two-way (work × {'GPU setup' if at_count else 'GPU'}) transfer within the source, "
        f"weighted median of {len(paths)} paths"
    )
    return RouteEstimate(
        log_value=weighted_median(paths),
        route="two_way",
        paths=len(paths),
        rows=_ranked(rows),
        text=text,
        at_count=at_count,
    )


def _similarity(query: ThroughputQuery, obs: Observation, cost_ratio: float) -> float:
    """How much a cell's rate says about the query: same model ≫ similar size; similar work per unit."""
    if obs.work.model == query.work.model:
        weight = 10.0
    elif query.arch is not None and obs.arch is not None:
        weight = math.exp(-abs(math.log(active_params(obs.arch) / active_params(query.arch))))
    else:
        weight = 0.1
    return weight * (math.exp(-abs(cost_ratio)) if obs.work.metric == query.work.metric else 0.5)


def _precision_shift(
    index: ProfileIndex, mode: Mode, mine: PrecisionClass, theirs: PrecisionClass, exclude: frozenset[int]
) -> tuple[float, str]:
    """Log speed ratio of precision ``mine`` over ``theirs``, from works measured at both, else nominal."""
    memo = _SHIFTS.of(index) if not exclude else None
    if memo is not None and (hit := memo.get((mode, mine, theirs))) is not None:
        return hit
    diffs: list[tuple[float, float]] = []
    for (group, work, hardware), _first in index.cells_of_mode.get(mode, ()):
        if hardware.precision != theirs:
            continue
        twin = (group, work, HardwareKey(hardware.gpu_id, mine))
        if twin not in index.per_gpu.cells:
            continue
        a, _ = index.value(index.per_gpu, twin, exclude)
        b, _ = index.value(index.per_gpu, (group, work, hardware), exclude)
        if a is not None and b is not None:
            diffs.append((a - b, 1.0))
    if diffs:
        result = weighted_median(diffs), f"{mine}/{theirs} speed from {len(diffs)} works measured at both"
    else:
        ratio = NOMINAL_PRECISION_SPEED[mine] / NOMINAL_PRECISION_SPEED[theirs]
        result = math.log(ratio), f"{mine}/{theirs} nominal speed ratio {ratio:g}"
    if memo is not None:
        memo[mode, mine, theirs] = result
    return result


def _candidates(query: ThroughputQuery, index: ProfileIndex) -> _Candidates:
    """The cells of the query's mode a transfer can use, in table order.

    They depend only on the work (its mode, cost and architecture), so they are computed once per
    index and work: a cell of the same work, or of any work with a known cost when the query has one.
    """
    key = (query.mode, query.work, query.cost, query.arch)
    memo = _CANDIDATES.of(index)
    found = memo.get(key)
    if found is not None:
        return found
    found = _Candidates([], {}, {})
    for cell, first in index.cells_of_mode.get(query.mode, ()):
        _group, work, hardware = cell
        if work == query.work:
            cost_ratio = 0.0
        elif query.cost is not None and first.cost is not None:
            cost_ratio = math.log(first.cost / query.cost)
        else:
            continue
        candidate = _Candidate(
            cell,
            hardware.gpu_id,
            hardware.precision,
            gpu_generation(hardware.gpu_id),
            cost_ratio,
            _similarity(query, first, cost_ratio),
            *index.value(index.per_gpu, cell),
        )
        found.everything.append(candidate)
        found.by_gpu.setdefault(hardware.gpu_id, []).append(candidate)
        found.by_precision.setdefault(hardware.precision, []).append(candidate)
    memo[key] = found
    return found


def _transfer(
    query: ThroughputQuery,
    index: ProfileIndex,
    exclude: frozenset[int],
    *,
    same_gpu: bool,
    cross_precision: bool = False,
) -> RouteEstimate | None:
    """Physics (same GPU) or spec-ratio (other GPUs) transfer of achieved rate ÷ work per unit.

    Without a cost for the query (models outside the formulas) only the same work on other GPUs can
    be transferred, by the spec ratio alone. Decoding compares byte rates, so any precision serves;
    compute-bound modes use other precisions only with ``cross_precision`` (a speed ratio applied).
    """
    if query.cost is None and same_gpu:
        return None
    target_id, precision = query.hardware
    found = _candidates(query, index)
    if same_gpu:
        candidates = found.by_gpu.get(target_id, [])
    elif query.mode == "decode" or cross_precision:
        candidates = found.everything
    else:  # the other precisions would be skipped
        candidates = found.by_precision.get(precision, [])
    specs = None if same_gpu else _spec_ratios(index, query.mode == "decode", target_id)
    generation = gpu_generation(target_id)
    shifts: dict[PrecisionClass, tuple[float, str]] = {}
    proxy = False
    paths: list[tuple[float, float]] = []
    rows: dict[int, float] = {}
    for candidate in candidates:
        if not same_gpu and candidate.gpu_id == target_id:
            continue
        shift, weight = 0.0, candidate.similarity
        if candidate.precision != precision:
            if query.mode == "decode":
                weight *= 0.5
            elif not cross_precision:
                continue
            else:
                if candidate.precision not in shifts:
                    shifts[candidate.precision] = _precision_shift(
                        index, query.mode, precision, candidate.precision, exclude
                    )
                shift = shifts[candidate.precision][0]
        ratio = (0.0, False) if specs is None else specs.get(candidate.gpu_id)
        if ratio is None:
            continue
        spec, proxied = ratio
        if proxied:
            weight *= 0.25
            proxy = True
        if exclude:
            value, used = index.value(index.per_gpu, candidate.cell, exclude)
        else:
            value, used = candidate.value, candidate.used
        if value is None:
            continue
        weight *= 2.0 if candidate.cell[0] == query.group else 1.0
        if not same_gpu:
            weight *= 3.0 if generation is not None and candidate.generation == generation else 1.0
        paths.append((value + candidate.cost_ratio + spec + shift, weight))
        for pid in used:
            rows[pid] = rows.get(pid, 0.0) + weight
    if not paths:
        return None
    unit = "byte/s (bandwidth efficiency)" if query.mode == "decode" else "FLOP/s (MFU)"
    if same_gpu:
        route: Route = "physics"
        text = f"achieved {unit} of {len(paths)} measured cells on {target_id} ÷ work per unit"
    else:
        route = "spec_ratio"
        spec_name = "memory bandwidth" if query.mode == "decode" else "bf16 dense TFLOPS"
        text = f"achieved {unit} of {len(paths)} measured cells on other GPUs × {spec_name} ratio ÷ work per unit"
    if proxy:
        text += " (memory bandwidth ratio where bf16 TFLOPS are unknown)"
    if shifts:
        text += "; other precisions converted by " + ", ".join(note for _, note in shifts.values())
    return RouteEstimate(
        log_value=weighted_median(paths),
        route=route,
        paths=len(paths),
        rows=_ranked(rows),
        text=text,
        cross_precision=bool(shifts),
    )


def _spec_ratio(mode: Mode, target: GpuSpec | None, other: GpuSpec | None) -> tuple[float, bool] | None:
    """Log of this GPU's peak over the other's, and whether bandwidth stood in for missing TFLOPS."""
    if target is None or other is None:
        return None
    if mode != "decode" and target.bf16_tflops and other.bf16_tflops:
        return math.log(target.bf16_tflops / other.bf16_tflops), False
    if target.memory_bandwidth_tbps and other.memory_bandwidth_tbps:
        return math.log(target.memory_bandwidth_tbps / other.memory_bandwidth_tbps), mode != "decode"
    return None


def _spec_ratios(index: ProfileIndex, decode: bool, target_id: str) -> dict[str, tuple[float, bool] | None]:
    """:func:`_spec_ratio` of ``target_id`` over every GPU of the index (computed once per index)."""
    memo = _SPECS.of(index)
    hit = memo.get((decode, target_id))
    if hit is None:
        mode: Mode = "decode" if decode else "train"
        target = index.gpus.get(target_id)
        hit = {gpu_id: _spec_ratio(mode, target, other) for gpu_id, other in index.gpus.items()}
        memo[decode, target_id] = hit
    return hit


def measured_rows(query: ThroughputQuery, index: ProfileIndex, exclude: frozenset[int]) -> list[Observation]:
    """Rows that match the query exactly (work, GPU, precision, count, interconnect), within its group."""
    return [
        obs
        for obs in index.by_exact.get((query.work, _setup(query)), ())
        if obs.profile.profile_id not in exclude and (query.group is None or obs.group == query.group)
    ]


def _calibrated_here(
    index: ProfileIndex,
    cell: RouteEstimate,
    scaled: tuple[str, WorkKey, HardwareKey, Mode],
    query: ThroughputQuery,
    exclude: frozenset[int],
) -> bool:
    """Whether the same-cell route's count conversions all use this work's own scaling pairs."""
    if query.gpu_count > 1:
        classes = {query.interconnect}
    else:
        classes = {index.by_id[pid].interconnect for _, pid in cell.rows} - {"none"}
    return all(index.scaling(scaled, ic, exclude).level == 0 for ic in classes)


def derive(
    query: ThroughputQuery,
    index: ProfileIndex,
    exclude: frozenset[int],
    routes: frozenset[Route],
    *,
    at_count: bool = True,
) -> RouteEstimate | None:
    """The first route with data; the same-cell route goes first only with its own scaling pairs.

    ``at_count=False`` leaves out the route that answers at the GPU count itself, so that the result
    is a 1-GPU equivalent that does not depend on the count or the interconnect.
    """
    group = query.group or next(iter(index.groups_of.get(query.work, [])), "")
    scaled = (group, query.work, query.hardware, query.mode)
    cell = _same_cell(query, index, exclude) if "same_cell" in routes else None
    if cell is not None and (not at_count or _calibrated_here(index, cell, scaled, query, exclude)):
        return cell
    if "two_way" in routes and at_count:
        found = _two_way(query, index, exclude, index.per_setup, _setup(query), _setup_weight)
        if found is not None:
            return found
    return cell or _fallback(query, index, exclude, routes)


def _fallback(
    query: ThroughputQuery, index: ProfileIndex, exclude: frozenset[int], routes: frozenset[Route]
) -> RouteEstimate | None:
    """Routes 4-7 of :func:`derive` (first with data); they do not depend on the GPU count or
    interconnect, so with nothing left out the answer is remembered per work and hardware."""
    key = (query.work, query.hardware, query.mode, query.arch, query.cost, query.group, routes)
    memo = None if exclude else _FALLBACKS.of(index)
    if memo is not None and (hit := memo.get(key)) is not None:
        return hit[0]
    found = (
        ("two_way" in routes and _two_way(query, index, exclude, index.per_gpu, query.hardware, _gpu_weight))
        or ("physics" in routes and _transfer(query, index, exclude, same_gpu=True))
        or ("spec_ratio" in routes and _transfer(query, index, exclude, same_gpu=False))
        or ("physics" in routes and _transfer(query, index, exclude, same_gpu=True, cross_precision=True))
        or ("spec_ratio" in routes and _transfer(query, index, exclude, same_gpu=False, cross_precision=True))
        or None
    )
    if memo is not None:
        memo[key] = (found,)
    return found
