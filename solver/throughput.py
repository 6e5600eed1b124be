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
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from solver.calibration import ProfileIndex, scaling_factor
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.models import ModelArch
from solver.observations import HardwareKey, Mode, Observation, WorkKey, supports_precision, weighted_median
from solver.profiles import MeasuredProfile
from solver.transfer import ALL_ROUTES, Route, ThroughputQuery, derive, measured_rows
from solver.workcost import (
    PrecisionClass,
    decode_bytes_per_token,
    forward_flops,
    offline_flops_per_output_token,
    train_flops_per_token,
)
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

WORKLOAD_PRECISION_CLASS: Final[dict[str, PrecisionClass]] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "int8": "int8",
    "int4": "int4",
    "nf4": "int4",
}

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


def _source(obs: Observation) -> ProfileSource:
    p = obs.profile
    return ProfileSource(
        profile_id=p.profile_id,
        gpu_id=p.gpu_id,
        gpu_count=p.gpu_count,
        model=p.model,
        metric=p.metric,
        value=p.value,
        source=p.source,
    )


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
            sources=[_source(obs) for obs in measured],
            confidence="high",
            confidence_score=0.9 if query.adjustment else 1.0,
            method=f"{prefix}measured: median of {len(measured)} matching row(s) for {query.label} on {where}",
        )
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
    ranked = sorted(estimate.rows, key=lambda item: (-item[0], item[1]))[:_MAX_SOURCES]
    return ThroughputEstimate(
        value=value,
        unit=query.work.metric,
        provenance="derived",
        route=estimate.route,
        sources=[_source(index.by_id[pid]) for _, pid in ranked],
        confidence=_label(score),
        confidence_score=round(score, 3),
        method=f"{prefix}derived for {query.label} on {where}: {estimate.text}{implied}{scaling_text}; "
        f"{len(estimate.rows)} rows used, {len(ranked)} cited",
    )


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
    counts: dict[str, int] = {}
    for work in index.groups_of:
        if (work.model, work.variant, work.metric) == (model, variant, metric):
            counts[work.setting] = counts.get(work.setting, 0) + 1
    return min(counts, key=lambda s: (-counts[s], s)) if counts else ""


def _numbers(setting: str) -> tuple[int, ...] | None:
    parts = setting.split("/")
    return tuple(int(part) for part in parts) if all(part.isdigit() for part in parts) else None


def _cost_at(workload: ResolvedWorkload, mode: Mode, metric: str, setting: str) -> float | None:
    """Work per unit of ``workload`` at a setting text (``"2048"``, ``"1000/1000"``, ``"0/1024"``)."""
    arch, numbers = workload.arch, _numbers(setting)
    if not arch.is_transformer or numbers is None:
        return None
    precision = WORKLOAD_PRECISION_CLASS[workload.precision]
    if mode == "train" and len(numbers) == 1:
        per_token = train_flops_per_token(arch, numbers[0], workload.method, workload.recompute)
        return per_token * numbers[0] if metric == "sequences_per_s" else per_token
    if mode == "decode" and len(numbers) == 2 and numbers[1] > 0:
        return decode_bytes_per_token(arch, precision, workload.batch_size, numbers[0] + numbers[1] / 2)
    if mode == "offline" and len(numbers) == 2 and numbers[1] > 0:
        return offline_flops_per_output_token(arch, numbers[0], numbers[1])
    if mode == "offline" and len(numbers) == 1:
        return forward_flops(arch, numbers[0])
    return None


def _nearest_setting(index: ProfileIndex, work: WorkKey, mode: Mode) -> str | None:
    """The measured setting of the same model and task closest to ``work.setting`` (within 2×, 4× train)."""
    wanted = _numbers(work.setting)
    if wanted is None or work in index.groups_of:
        return None
    limit = math.log(4.0 if mode == "train" else 2.0)
    best: tuple[float, str] | None = None
    for other in index.groups_of:
        numbers = _numbers(other.setting)
        if other[:3] != work[:3] or numbers is None or len(numbers) != len(wanted):
            continue
        distance = sum(abs(math.log((a + 1) / (b + 1))) for a, b in zip(wanted, numbers, strict=True))
        if distance <= limit and (best is None or (distance, other.setting) < best):
            best = (distance, other.setting)
    return best[1] if best else None


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
    if not supports_precision(gpu.gpu_id, precision):
        raise ThroughputUnavailable(f"{gpu.name} has no {precision} tensor cores")
    if not setting:
        setting = _measured_setting(index, arch.name, variant, metric)
    work = WorkKey(arch.name, variant, metric, setting)
    cost = _cost_at(workload, mode, metric, setting)
    scale, adjustment = 1.0, ""
    nearest = _nearest_setting(index, work, mode)
    near_cost = _cost_at(workload, mode, metric, nearest) if nearest else None
    if nearest and near_cost and cost:
        scale = near_cost / cost
        adjustment = (
            f"{arch.name} at {nearest} (measured setting nearest to {setting}) × work ratio {scale:.3f}"
        )
        work, cost = work._replace(setting=nearest), near_cost
    return ThroughputQuery(
        work=work,
        hardware=HardwareKey(gpu.gpu_id, precision),
        gpu_count=gpu_count,
        interconnect=interconnect,
        mode=mode,
        label=arch.name,
        arch=arch,
        cost=cost,
        scale=scale,
        adjustment=adjustment,
    )


_MEMO: weakref.WeakKeyDictionary[
    ProfileIndex, dict[tuple[ThroughputQuery, bool], ThroughputEstimate | None]
] = weakref.WeakKeyDictionary()


def _memo_estimate(query: ThroughputQuery, index: ProfileIndex, at_count: bool) -> ThroughputEstimate | None:
    """:func:`estimate_query` with nothing left out, remembered per index; ``None`` when unavailable."""
    memo = _MEMO.setdefault(index, {})
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    key = (query, at_count)
    if key not in memo:
        try:
            memo[key] = estimate_query(query, index, at_count=at_count)
        except ThroughputUnavailable:
            memo[key] = None
    return memo[key]


def _weaker_setups(query: ThroughputQuery, index: ProfileIndex) -> list[tuple[int, Interconnect]]:
    """Measured setups of this GPU and precision with no more GPUs and no better interconnect than
    the query's (one GPU always included), the query's own setup left out."""
    rank = INTERCONNECT_RANK[query.interconnect]
    found: set[tuple[int, Interconnect]] = {(1, "none")}
    for _group, setup in index.per_setup.work_on:
        if (
            (setup.gpu_id, setup.precision) == query.hardware
            and 1 < setup.gpu_count <= query.gpu_count
            and INTERCONNECT_RANK[setup.interconnect] <= rank
        ):
            found.add((setup.gpu_count, setup.interconnect))
    found.discard((query.gpu_count, query.interconnect))
    return sorted(found)


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
    candidates = [c for c in (raw, _memo_estimate(query, index, False)) if c is not None]
    for count, interconnect in _weaker_setups(query, index):
        smaller = _memo_estimate(
            msgspec.structs.replace(query, gpu_count=count, interconnect=interconnect), index, True
        )
        if smaller is not None:
            candidates.append(
                msgspec.structs.replace(
                    smaller,
                    provenance="derived",
                    method=f"at least what {count} of the {query.gpu_count} GPUs ({interconnect}) achieve: "
                    f"{smaller.method}",
                )
            )
    if not candidates:
        return estimate_query(query, index)
    return max(candidates, key=lambda estimate: estimate.value)


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
