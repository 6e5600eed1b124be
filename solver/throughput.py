"""Throughput of a workload on ``n`` GPUs of one type: measured where a row matches, else derived.

:func:`estimate_throughput` is the entry point. A measured row that matches the model, task, metric,
setting, GPU, precision class, GPU count and interconnect class is used as it is (the median if
several, all cited). Otherwise the number is derived by the routes of :mod:`solver.transfer` with the
multi-GPU scaling of :mod:`solver.calibration`, and the estimate says how (route, rows, the MFU or
bandwidth share it implies, the scaling efficiency and where that came from). On top of the routes:

- a workload measured at a nearby setting (sequence length within 4× for training, prompt/output
  lengths within 2× for inference) is answered at that setting × the ratio of work per unit;
- inference runs ``gpu_count / tp`` independent replicas of a ``tp``-GPU group;
- a derived multi-GPU number is never below what fewer GPUs or a worse interconnect achieve
  (:func:`estimate_at_least`), so throughput never falls as GPUs are added or links improve.

Every estimate carries ``provenance`` (measured | derived), its ``route``, the rows it rests on
(``sources``, the 24 weightiest when more were used) and a confidence: a score in ``[0, 1]`` and a
label (``high`` ≥ 0.75, ``medium`` ≥ 0.45, else ``low``). The score is 1.0 measured (0.9 when converted
from a nearby setting), 0.85 same cell, 0.7 two-way with three paths or more (0.55 fewer), 0.5
physics, 0.3 spec ratio; × 0.6 across precisions; × 0.9 when the scaling efficiency comes from other
work or GPUs and × 0.8 when it is a default. Everything is deterministic.

A planner asks for one workload on many GPUs, counts and interconnects, so what does not depend on
them is worked out once per index: the workload's query terms, the count-independent routes per GPU
and precision, and every estimate with nothing left out (bounded caches kept on the index).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal, NamedTuple

import msgspec

from solver.calibration import IndexMemo, ProfileIndex, scaling_factor
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.models import ModelArch
from solver.observations import HardwareKey, Mode, Observation, WorkKey, supports_precision, weighted_median
from solver.profiles import MeasuredProfile
from solver.transfer import ALL_ROUTES, Route, ThroughputQuery, derive, measured_rows
from solver.workcost import WORKLOAD_PRECISION_CLASS, PrecisionClass, setting_numbers, work_at_setting
from solver.workload import ResolvedWorkload

__all__ = [
    "WORKLOAD_PRECISION_CLASS",
    "ProfileSource",
    "Route",
    "ThroughputEstimate",
    "ThroughputQuery",
    "estimate_at_least",
    "estimate_query",
    "estimate_throughput",
    "query_for_observation",
    "query_for_workload",
]

_CONFIDENCE: Final[dict[str, float]] = {"measured": 1.0, "same_cell": 0.85, "physics": 0.5, "spec_ratio": 0.3}
_SCALING_CONFIDENCE: Final = (1.0, 0.9, 0.9, 0.8)  # by ScalingFit.level
_MAX_SOURCES: Final = 24
_MEMO_LIMIT: Final = 50_000


class ProfileSource(msgspec.Struct, frozen=True, kw_only=True):
    """A measured row an estimate rests on, as published (``value`` is the total over ``gpu_count``)."""

    profile_id: int
    gpu_id: str
    gpu_count: int
    model: str
    metric: str
    value: float
    source: str


class ThroughputEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """A throughput (total over all GPUs) with its provenance, the rows behind it and a confidence."""

    value: float
    unit: str
    provenance: Literal["measured", "derived"]
    route: Route
    sources: list[ProfileSource]
    confidence: Literal["high", "medium", "low"]
    confidence_score: float
    method: str


_SOURCES: IndexMemo[int, ProfileSource] = IndexMemo(_MEMO_LIMIT)


def _sources(index: ProfileIndex, rows: Iterable[Observation]) -> list[ProfileSource]:
    """The citations of rows (each made once per index and row: they are immutable)."""
    memo = _SOURCES.of(index)
    cited: list[ProfileSource] = []
    for obs in rows:
        p = obs.profile
        source = memo.get(p.profile_id)
        if source is None:
            source = memo[p.profile_id] = ProfileSource(
                profile_id=p.profile_id,
                gpu_id=p.gpu_id,
                gpu_count=p.gpu_count,
                model=p.model,
                metric=p.metric,
                value=p.value,
                source=p.source,
            )
        cited.append(source)
    return cited


def _label(score: float) -> Literal["high", "medium", "low"]:
    return "high" if score >= 0.75 else "medium" if score >= 0.45 else "low"


def _implied(query: ThroughputQuery, gpu: GpuSpec | None, one_gpu: float) -> str:
    """The efficiency a 1-GPU value implies: MFU of the bf16 dense peak, or share of memory bandwidth."""
    if query.cost is None or gpu is None:
        return ""
    rate = one_gpu * query.cost
    if query.mode == "decode" and gpu.memory_bandwidth_tbps:
        share, peak = rate / (gpu.memory_bandwidth_tbps * 1e12), f"{gpu.memory_bandwidth_tbps:g} TB/s"
        return f"; 1 GPU = {share:.2f} of {peak} at {query.cost:.3g} bytes per token"
    if query.mode != "decode" and gpu.bf16_tflops:
        share, peak = rate / (gpu.bf16_tflops * 1e12), f"{gpu.bf16_tflops:g} bf16 TFLOPS"
        unit = query.work.metric.removesuffix("_per_s").removesuffix("s")
        return f"; 1 GPU = MFU {share:.2f} of {peak} at {query.cost:.3g} FLOPs per {unit}"
    return ""


def estimate_query(
    query: ThroughputQuery,
    index: ProfileIndex,
    exclude: frozenset[int] = frozenset(),
    *,
    routes: frozenset[Route] = ALL_ROUTES,
    at_count: bool = True,
) -> ThroughputEstimate:
    """Estimate ``query`` from the indexed rows, never using the rows whose ids are in ``exclude``.

    ``routes`` limits the routes tried (to test one route alone); ``at_count=False`` asks for the
    count-independent base (1-GPU equivalent × scaling, no measured row). Raises
    :class:`~solver.errors.ThroughputUnavailable` when no allowed route has data.
    """
    return _estimate(query, index, exclude, routes, at_count)[0]


def _estimate(
    query: ThroughputQuery,
    index: ProfileIndex,
    exclude: frozenset[int],
    routes: frozenset[Route],
    at_count: bool,
) -> tuple[ThroughputEstimate, bool]:
    """:func:`estimate_query`, and whether its answer is also the count-independent base's (no
    measured row and no route that answers at the GPU count itself)."""
    where = f"{query.gpu_count}× {query.hardware.gpu_id} ({query.hardware.precision})"
    prefix = f"{query.adjustment}; " if query.adjustment else ""
    measured = measured_rows(query, index, exclude) if "measured" in routes and at_count else []
    if measured:
        value = weighted_median((obs.profile.value, 1.0) for obs in measured)
        return ThroughputEstimate(
            value=value * query.scale,
            unit=query.work.metric,
            provenance="derived" if query.adjustment else "measured",
            route="measured",
            sources=_sources(index, measured),
            confidence="high",
            confidence_score=0.9 if query.adjustment else 1.0,
            method=f"{prefix}measured: median of {len(measured)} matching row(s) for {query.label} on {where}",
        ), False
    estimate = derive(query, index, exclude, routes, at_count=at_count)
    if estimate is None:
        raise ThroughputUnavailable(
            f"no measured row or calibration covers {query.label} ({query.work.variant}, "
            f"{query.work.metric}) on {query.hardware.gpu_id} at {query.hardware.precision}"
        )
    score = _CONFIDENCE.get(estimate.route, 0.7 if estimate.paths >= 3 else 0.55)
    score *= 0.6 if estimate.cross_precision else 1.0
    value = math.exp(estimate.log_value)
    implied = "" if estimate.at_count else _implied(query, index.gpus.get(query.hardware.gpu_id), value)
    value *= query.scale
    scaling_text = ""
    if query.gpu_count > 1 and not estimate.at_count:
        group = query.group or next(iter(index.groups_of.get(query.work, [])), "")
        fit = index.scaling((group, query.work, query.hardware, query.mode), query.interconnect, exclude)
        factor = scaling_factor(query.gpu_count, fit.efficiency)
        value *= factor
        score *= _SCALING_CONFIDENCE[fit.level]
        scaling_text = (
            f"; {query.gpu_count}-GPU scaling {factor / query.gpu_count:.2f} "
            f"(efficiency {fit.efficiency:.3f} per doubling, {fit.basis})"
        )
    ranked = estimate.rows[:_MAX_SOURCES]  # weightiest first
    found = ThroughputEstimate(
        value=value,
        unit=query.work.metric,
        provenance="derived",
        route=estimate.route,
        sources=_sources(index, (index.by_id[pid] for _, pid in ranked)),
        confidence=_label(score),
        confidence_score=round(score, 3),
        method=f"{prefix}derived for {query.label} on {where}: {estimate.text}{implied}{scaling_text}; "
        f"{len(estimate.rows)} rows used, {len(ranked)} cited",
    )
    return found, not estimate.at_count


def query_for_observation(obs: Observation) -> ThroughputQuery:
    """The query a measured row answers (used to test the model against the rows themselves)."""
    return ThroughputQuery(
        work=obs.work,
        hardware=obs.hardware,
        gpu_count=obs.profile.gpu_count,
        interconnect=obs.interconnect,
        mode=obs.mode,
        label=obs.profile.model,
        arch=obs.arch,
        cost=obs.cost,
        group=obs.group,
    )


def _unit(arch: ModelArch, training: bool) -> str:
    if arch.family in ("vision", "diffusion"):
        return "images_per_s" if training else "samples_per_s"
    if arch.family == "encoder":
        return "sequences_per_s" if training else "samples_per_s"
    return "tokens_per_s" if training else "output_tokens_per_s"


def _measured_setting(index: ProfileIndex, model: str, variant: str, metric: str) -> str:
    """The setting the model was measured at for this task (the first in text order); ``""`` if none."""
    settings = [work.setting for work in index.works_of_task.get((model, variant, metric), ())]
    return min(settings) if settings else ""


def _nearest_setting(index: ProfileIndex, work: WorkKey, mode: Mode) -> str | None:
    """The measured setting of the same model and task closest to ``work.setting`` (within 2×, 4× train)."""
    wanted = setting_numbers(work.setting)
    if wanted is None or work in index.groups_of:
        return None
    limit = math.log(4.0 if mode == "train" else 2.0)
    best: tuple[float, str] | None = None
    for other in index.works_of_task.get(work[:3], ()):
        numbers = setting_numbers(other.setting)
        if numbers is None or len(numbers) != len(wanted):
            continue
        distance = sum(abs(math.log((a + 1) / (b + 1))) for a, b in zip(wanted, numbers, strict=True))
        if distance <= limit and (best is None or (distance, other.setting) < best):
            best = (distance, other.setting)
    return best[1] if best else None


class _WorkloadTerms(NamedTuple):
    """The part of a workload's query that does not depend on the GPU, its count or interconnect."""

    work: WorkKey
    mode: Mode
    precision: PrecisionClass
    cost: float | None
    scale: float
    adjustment: str


_TERMS: IndexMemo[tuple[ResolvedWorkload, int | None], _WorkloadTerms] = IndexMemo(4096)


def _workload_terms(
    workload: ResolvedWorkload, index: ProfileIndex, output_len: int | None
) -> _WorkloadTerms:
    """What a workload asks for in the index's terms (remembered per index and workload)."""
    memo = _TERMS.of(index)
    found = memo.get((workload, output_len))
    if found is not None:
        return found
    arch = workload.arch
    precision = WORKLOAD_PRECISION_CLASS[workload.precision]
    seq = workload.seq_len
    training = workload.kind in ("train", "fine_tune")
    metric = _unit(arch, training)
    mode: Mode
    setting = ""
    if training:
        mode, variant = "train", "train"
        if workload.method != "full" or workload.recompute == "full":
            variant = f"train:{workload.method}:{workload.recompute}"
        precision = "bf16" if precision in ("int8", "int4") else precision  # dequantised to 16-bit compute
        setting = str(seq) if arch.is_transformer else ""
    elif workload.kind == "serving" and arch.family == "decoder" and arch.is_transformer:
        mode = "decode"
        batch = workload.batch_size
        variant = "inference" if batch == 1 else f"inference:batch={batch}"
        setting = f"0/{seq}"
    else:
        mode, variant = "offline", "inference"
        if arch.family == "decoder" and arch.is_transformer:
            out = min(seq, output_len) if output_len is not None else max(1, seq // 2)
            setting = f"{seq - out}/{out}"
        elif arch.is_transformer:
            setting = str(seq)
    if not setting:
        setting = _measured_setting(index, arch.name, variant, metric)
    work = WorkKey(arch.name, variant, metric, setting)
    cost = work_at_setting(workload, mode, metric, setting)
    scale, adjustment = 1.0, ""
    nearest = _nearest_setting(index, work, mode)
    near_cost = work_at_setting(workload, mode, metric, nearest) if nearest else None
    if nearest and near_cost and cost:
        scale = near_cost / cost
        adjustment = (
            f"{arch.name} at {nearest} (measured setting nearest to {setting}) × work ratio {scale:.3f}"
        )
        work, cost = work._replace(setting=nearest), near_cost
    found = _WorkloadTerms(work, mode, precision, cost, scale, adjustment)
    memo[workload, output_len] = found
    return found


def query_for_workload(
    workload: ResolvedWorkload,
    gpu: GpuSpec,
    gpu_count: int,
    interconnect: Interconnect,
    index: ProfileIndex,
    *,
    output_len: int | None = None,
) -> ThroughputQuery:
    """Translate a workload on ``gpu_count`` GPUs into a query (see :func:`estimate_throughput`).

    When the model was measured at a nearby setting (sequence or prompt/output lengths within 2×, 4×
    for training) but not at this one, the query asks for that setting and carries the work ratio
    that converts its answer back (``scale``).
    """
    terms = _workload_terms(workload, index, output_len)
    if not supports_precision(gpu.gpu_id, terms.precision):
        raise ThroughputUnavailable(f"{gpu.name} has no {terms.precision} tensor cores")
    return ThroughputQuery(
        work=terms.work,
        hardware=HardwareKey(gpu.gpu_id, terms.precision),
        gpu_count=gpu_count,
        interconnect=interconnect,
        mode=terms.mode,
        label=workload.arch.name,
        arch=workload.arch,
        cost=terms.cost,
        scale=terms.scale,
        adjustment=terms.adjustment,
    )


_ESTIMATES: IndexMemo[tuple[ThroughputQuery, bool], tuple[ThroughputEstimate | None]] = IndexMemo(_MEMO_LIMIT)


def _memo_estimate(query: ThroughputQuery, index: ProfileIndex, at_count: bool) -> ThroughputEstimate | None:
    """:func:`estimate_query` with nothing left out, remembered per index; ``None`` when unavailable."""
    memo = _ESTIMATES.of(index)
    hit = memo.get((query, at_count))
    if hit is not None:
        return hit[0]
    base_too = True  # nothing at the count means no base either
    try:
        found, base_too = _estimate(query, index, frozenset(), ALL_ROUTES, at_count)
    except ThroughputUnavailable:
        found = None
    memo[query, at_count] = (found,)
    if at_count and base_too:
        memo[query, False] = (found,)
    return found


_SETUPS: IndexMemo[tuple[HardwareKey, int, Interconnect], list[tuple[int, Interconnect]]] = IndexMemo(
    _MEMO_LIMIT
)


def _weaker_setups(query: ThroughputQuery, index: ProfileIndex) -> list[tuple[int, Interconnect]]:
    """Measured setups of this GPU and precision with no more GPUs and no better interconnect than
    the query's (one GPU always included), the query's own setup left out."""
    memo = _SETUPS.of(index)
    key = (query.hardware, query.gpu_count, query.interconnect)
    found = memo.get(key)
    if found is None:
        rank = INTERCONNECT_RANK[query.interconnect]
        weaker = {
            (count, interconnect)
            for count, interconnect in index.setups_of.get(query.hardware, ())
            if count <= query.gpu_count and INTERCONNECT_RANK[interconnect] <= rank
        }
        weaker.add((1, "none"))
        weaker.discard((query.gpu_count, query.interconnect))
        found = memo[key] = sorted(weaker)
    return found


def estimate_at_least(query: ThroughputQuery, index: ProfileIndex) -> ThroughputEstimate:
    """:func:`estimate_query`, but a derived multi-GPU number is never below what fewer GPUs achieve.

    ``n`` GPUs can always do what a subset of them does, and a better interconnect what a worse one
    does, so a derived value is the largest of the estimate at ``n``, the count-independent base ×
    ``S(n)``, and the estimates at the setups this GPU was measured at with no more GPUs and no better
    interconnect (and one GPU). The result never falls as GPUs are added or the interconnect improves;
    measured rows are still used as they are.
    """
    raw = _memo_estimate(query, index, True)
    if query.gpu_count == 1 or (raw is not None and raw.provenance == "measured"):
        if raw is None:
            return estimate_query(query, index)  # raises ThroughputUnavailable with its reason
        return raw
    best: ThroughputEstimate | None = None
    for candidate in (raw, _memo_estimate(query, index, False)):
        if candidate is not None and (best is None or candidate.value > best.value):
            best = candidate
    weaker: tuple[int, Interconnect] | None = None  # the setup of ``best`` when it is a weaker one
    for count, interconnect in _weaker_setups(query, index):
        smaller = _memo_estimate(
            msgspec.structs.replace(query, gpu_count=count, interconnect=interconnect), index, True
        )
        if smaller is not None and (best is None or smaller.value > best.value):
            best, weaker = smaller, (count, interconnect)
    if best is None:
        return estimate_query(query, index)
    if weaker is None:
        return best
    return msgspec.structs.replace(
        best,
        provenance="derived",
        method=f"at least what {weaker[0]} of the {query.gpu_count} GPUs ({weaker[1]}) achieve: {best.method}",
    )


@functools.lru_cache(maxsize=4)
def _cached_index(
    profiles: tuple[MeasuredProfile, ...], gpus: tuple[tuple[str, GpuSpec], ...]
) -> ProfileIndex:
    return ProfileIndex(profiles, dict(gpus))


def estimate_throughput(
    workload: ResolvedWorkload,
    gpu: GpuSpec,
    gpu_count: int,
    interconnect: Interconnect,
    profiles: Sequence[MeasuredProfile],
    gpus: Mapping[str, GpuSpec],
    *,
    output_len: int | None = None,
    index: ProfileIndex | None = None,
) -> ThroughputEstimate:
    """Throughput of ``workload`` on ``gpu_count`` × ``gpu`` linked by ``interconnect`` (total, all GPUs).

    Units: training ``tokens_per_s`` (decoders), ``sequences_per_s`` (encoders) or ``images_per_s``
    (vision); ``batch_inference`` of a decoder: generated ``output_tokens_per_s`` for requests of
    ``seq_len`` tokens of which ``output_len`` are generated (default half); ``serving`` of a decoder:
    decode ``output_tokens_per_s`` at ``batch_size`` concurrent sequences of mean context
    ``seq_len / 2``; other inference ``samples_per_s``.

    ``gpu_count`` overrides ``workload.gpu_count`` (candidates vary it). Inference runs
    ``gpu_count / tp`` independent replicas of ``tp`` GPUs each (``gpu_count`` must be a multiple of
    ``tp``); training treats all GPUs as one data-parallel job. Pass a prebuilt ``index`` to skip
    indexing ``profiles`` (otherwise it is built once per distinct content and cached).

    Raises :class:`~solver.errors.InvalidWorkload` for a bad ``gpu_count`` or a tensor-parallel group
    on interconnect ``none``, and
    :class:`~solver.errors.ThroughputUnavailable` when nothing supports an estimate (including a
    precision the GPU has no tensor cores for).
    """
    if gpu_count < 1:
        raise InvalidWorkload("gpu_count", f"must be at least 1, got {gpu_count}")
    if index is None:
        index = _cached_index(tuple(profiles), tuple(sorted(gpus.items())))
    if workload.is_inference and workload.tp > 1 and interconnect == "none":
        raise InvalidWorkload("tp", "a tensor-parallel group needs GPUs linked inside one instance, not none")
    replicas = 1
    if workload.is_inference and workload.tp < gpu_count:
        if gpu_count % workload.tp:
            raise InvalidWorkload("gpu_count", f"must be a multiple of tp ({workload.tp}), got {gpu_count}")
        replicas = gpu_count // workload.tp
        gpu_count, interconnect = workload.tp, interconnect if workload.tp > 1 else "none"
    query = query_for_workload(workload, gpu, gpu_count, interconnect, index, output_len=output_len)
    estimate = estimate_at_least(query, index)
    if replicas == 1:
        return estimate
    return msgspec.structs.replace(
        estimate,
        value=estimate.value * replicas,
        provenance="derived",
        method=f"{replicas} independent replicas of {workload.tp} GPU(s), each: {estimate.method}",
    )
