"""Max requests/s one serving replica sustains for one request size: measured, or derived.

**Measured.** :func:`bucket_of` finds the serving-profile row whose ``(lo, hi]`` input and output
ranges hold the request's lengths (model names compared through :func:`~solver.catalog.models.lookup_model`,
so ``"Llama-2-7b"`` matches ``"Llama 2 7B"``). The rows state no precision: they are taken as 16-bit
runs (vLLM's default dtype for Llama 2) and used for bf16/fp16 workloads only.

**Derived** (:func:`derive_capacity`) from the memory and throughput models, for one replica of
``tp`` GPUs serving requests of ``I`` prompt and ``O`` output tokens with continuous batching:

1. KV room per GPU = ``memory × MEMORY_FRACTION`` − (weights + one sequence's prefill workspace +
   logits + runtime overhead, from :func:`~solver.memory.peak.estimate_memory` at ``tp``); each sequence
   holds KV for ``I + O`` tokens (its peak), so ``B_kv = ⌊room / KV per sequence⌋``, and the batch is
   ``B ≤ min(B_kv, MAX_CONCURRENT_SEQUENCES)``. ``B_kv < 1``: the model does not fit with any KV cache.
2. Prefill of one request ``t_p``: the throughput model's prompt pass over ``I`` tokens at the
   calibrated ``prefill`` class efficiency (:func:`~solver.throughput.estimate.prompt_seconds`), not at the
   dense peak.
3. Decode tokens/s at batch ``B``: ``D(B)`` = the throughput model's serving decode rate at ``B``
   sequences of mean context ``I + O/2`` (the ``decode`` class: weights and KV cache read per step at
   the calibrated bandwidth share, plus the step's matmuls; asked as ``seq_len = 2I + O``, whose half
   is that context).
4. The GPU alternates prefill and decode steps, so per request it spends ``t_p + O / D(B)``:
   ``R(B) = 1 / (t_p + O / D(B))`` requests/s. In that steady state one decode step comes every
   ``TPOT(B) = B / (R·O) = B / D(B) + B·t_p / O`` seconds (prefill stalls included on average), and
   ``TTFT_q(B) = B / D(B) + t_p + w_q``: the decode step in flight, the request's own prefill, and
   the ``q``-percentile wait behind other prefills (served first, as vLLM schedules them). The
   prefill queue is M/D/1 at load ``ρ_p = R·t_p``; its wait is taken as exponential beyond zero
   (Kingman): ``P(W > w) = ρ_p·exp(−w / W₁)``, ``W₁ = t_p / (2(1 − ρ_p))``, so
   ``w_q = W₁·ln(ρ_p / (1 − q))`` when ``ρ_p > 1 − q``, else 0 (``q`` capped at 99.9 %).
5. The capacity is ``R`` at the largest ``B`` whose TPOT and TTFT meet the SLO (both grow with
   ``B``; found by bisection). No SLO: ``B = min(B_kv, MAX_CONCURRENT_SEQUENCES)``.

Not modelled: the serving engine's CPU overhead per step or request, chunked prefill, preemption,
speculative decoding, prefix caching, TPOT percentiles. The serving rows are never used to derive, so
every measured row is held out from the derivation (tests print the comparison).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal, NamedTuple

import msgspec

from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.models import lookup_model
from solver.catalog.profiles import MeasuredProfile, ServingProfile
from solver.errors import InvalidWorkload, ThroughputUnavailable, UnknownModel
from solver.memory.peak import estimate_memory
from solver.spec.serving import RequestClass, ServingSlo
from solver.spec.workload import ResolvedWorkload
from solver.throughput.calibration import ProfileIndex
from solver.throughput.estimate import ThroughputEstimate, estimate_throughput, profile_index, prompt_seconds

__all__ = [
    "MAX_CONCURRENT_SEQUENCES",
    "MEMORY_FRACTION",
    "Capacity",
    "CapacityUnavailable",
    "Confidence",
    "Provenance",
    "bucket_of",
    "class_capacity",
    "derive_capacity",
    "derived_capacity",
    "measured_capacity",
    "unavailable_capacity",
]

Provenance = Literal["measured", "derived"]
Confidence = Literal["high", "medium", "low"]

MEMORY_FRACTION: Final = 0.9
"""Share of GPU memory the serving engine may use (vLLM's default ``gpu_memory_utilization``)."""
MAX_CONCURRENT_SEQUENCES: Final = 256
"""Most sequences one replica batches (vLLM's default ``max_num_seqs``)."""
_TTFT_PERCENTILE_CAP: Final = 99.9
_MEASURED_PRECISIONS: Final = frozenset({"bf16", "fp16"})
_MAX_THROUGHPUT_SOURCES: Final = 24


class Capacity(msgspec.Struct, frozen=True, kw_only=True):
    """Max requests/s of ONE replica serving only one request size, and where the number comes from.

    ``sources`` are the serving-profile rows used (``serving_id``); ``throughput_sources`` the
    throughput-profile rows (``profile_id``) behind a derived value. ``requests_per_s == 0`` means the
    replica cannot serve that size (``method`` says why).
    """

    requests_per_s: float
    provenance: Provenance
    sources: list[int]
    method: str
    confidence: Confidence
    throughput_sources: list[int] = []


class CapacityUnavailable(msgspec.Struct, frozen=True, kw_only=True):
    """Why no capacity could be derived: a short ``reason`` code and a human ``detail``.

    Reasons: ``not_a_decoder``, ``context_too_long``, ``tp_invalid``, ``no_kv_room``,
    ``throughput_unavailable``, ``slo_unreachable``.
    """

    reason: str
    detail: str


@functools.lru_cache(maxsize=1024)
def _canonical_model(name: str) -> str | None:
    try:
        return lookup_model(name).name
    except UnknownModel:
        return None


def _holds(lo_excl: int, hi_incl: int, value: int) -> bool:
    return lo_excl < value <= hi_incl


def bucket_of(
    profiles: Sequence[ServingProfile],
    model: str,
    gpu_id: str,
    tp: int,
    input_tokens: int,
    output_tokens: int,
) -> ServingProfile | None:
    """The in-grid row of ``model`` on ``gpu_id`` at ``tp`` whose ``(lo, hi]`` ranges hold the lengths."""
    wanted = _canonical_model(model)
    if wanted is None:
        return None
    for row in profiles:
        if (
            row.in_grid
            and row.gpu_id == gpu_id
            and row.tp == tp
            and _holds(row.input_len_lo_excl, row.input_len_hi_incl, input_tokens)
            and _holds(row.output_len_lo_excl, row.output_len_hi_incl, output_tokens)
            and _canonical_model(row.model) == wanted
        ):
            return row
    return None


def _row_capacity(row: ServingProfile) -> Capacity:
    slo = row.slo or "not stated by the source"
    return Capacity(
        requests_per_s=row.max_requests_per_s,
        provenance="measured",
        sources=[row.serving_id],
        method=(
            f"measured: {row.model} on {row.gpu_id} (tp {row.tp}), input ({row.input_len_lo_excl}, "
            f"{row.input_len_hi_incl}] × output ({row.output_len_lo_excl}, {row.output_len_hi_incl}] "
            f"tokens, SLO {slo}; {row.source}"
        ),
        confidence="high",
    )


def measured_capacity(
    profiles: Sequence[ServingProfile],
    model: str,
    gpu_id: str,
    tp: int,
    input_tokens: int,
    output_tokens: int,
) -> Capacity | None:
    """The measured capacity of the bucket holding the lengths (see :func:`bucket_of`); None if none."""
    row = bucket_of(profiles, model, gpu_id, tp, input_tokens, output_tokens)
    return None if row is None else _row_capacity(row)


def unavailable_capacity(why: CapacityUnavailable) -> Capacity:
    """A zero capacity that carries the reason a replica cannot serve a request size."""
    return Capacity(
        requests_per_s=0.0,
        provenance="derived",
        sources=[],
        method=f"unavailable ({why.reason}): {why.detail}",
        confidence="low",
    )


def _replica(resolved: ResolvedWorkload, tp: int, kind: str, batch: int, seq_len: int) -> ResolvedWorkload:
    """The workload of one ``tp``-GPU replica (no validation: ``seq_len`` may be a modelling device)."""
    return msgspec.structs.replace(
        resolved, kind=kind, tp=tp, gpu_count=tp, dp=1, batch_size=batch, seq_len=seq_len
    )


def _check_shape(
    resolved: ResolvedWorkload, tp: int, tokens: int, interconnect: Interconnect
) -> CapacityUnavailable | None:
    arch = resolved.arch
    if arch.family != "decoder" or not arch.is_transformer:
        return CapacityUnavailable(reason="not_a_decoder", detail=f"{arch.name} does not generate tokens")
    if tokens > arch.max_seq_len:
        detail = f"{tokens} tokens exceed {arch.name}'s maximum context of {arch.max_seq_len}"
        return CapacityUnavailable(reason="context_too_long", detail=detail)
    if tp < 1 or arch.attention_heads % tp or (tp > 1 and interconnect == "none"):
        detail = f"tp {tp} must divide {arch.name}'s {arch.attention_heads} heads and (tp > 1) be linked"
        return CapacityUnavailable(reason="tp_invalid", detail=detail)
    return None


class _Point(NamedTuple):
    """The steady state at one batch size: decode tokens/s, requests/s and latencies (seconds)."""

    batch: int
    decode_tps: float
    requests_per_s: float
    tpot_s: float
    ttft_s: float


class _Replica:
    """One replica's serving model for one request size (module docstring, steps 3-5)."""

    def __init__(
        self,
        decode: Callable[[int], ThroughputEstimate],
        t_prefill: float,
        output_tokens: int,
        slo: ServingSlo | None,
    ) -> None:
        self.decode, self.t_prefill = decode, t_prefill
        self.output_tokens, self.slo = output_tokens, slo
        q = min(slo.percentile if slo else 99.0, _TTFT_PERCENTILE_CAP) / 100.0
        self.quantile = q
        self.points: dict[int, _Point] = {}
        self.estimates: list[ThroughputEstimate] = []

    def point(self, batch: int) -> _Point:
        found = self.points.get(batch)
        if found is None:
            estimate = self.decode(batch)
            self.estimates.append(estimate)
            d, t_p, o_len = estimate.value, self.t_prefill, self.output_tokens
            rate = 1.0 / (t_p + o_len / d)
            tpot = batch / d + batch * t_p / o_len
            load = rate * t_p  # prefill queue utilisation, < 1
            wait = (
                t_p / (2.0 * (1.0 - load)) * math.log(load / (1.0 - self.quantile))
                if load > 1.0 - self.quantile
                else 0.0
            )
            ttft = batch / d + t_p + wait
            found = self.points[batch] = _Point(batch, d, rate, tpot, ttft)
        return found

    def meets(self, p: _Point) -> bool:
        slo = self.slo
        return slo is None or (
            (slo.tpot_ms is None or p.tpot_s * 1e3 <= slo.tpot_ms)
            and (slo.ttft_ms is None or p.ttft_s * 1e3 <= slo.ttft_ms)
        )

    def best(self, b_max: int) -> _Point | None:
        """The point with the most requests/s among batches ≤ ``b_max`` that meet the SLO."""
        if not self.meets(self.point(1)):
            return None
        lo, hi = 1, b_max
        if self.meets(self.point(hi)):
            lo = hi
        while hi - lo > 1:  # invariant: lo meets the SLO, hi does not (both grow with the batch)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.meets(self.point(mid)) else (lo, mid)
        return max((p for p in self.points.values() if self.meets(p)), key=lambda p: p.requests_per_s)


def derive_capacity(
    resolved: ResolvedWorkload,
    gpu: GpuSpec,
    tp: int,
    input_tokens: int,
    output_tokens: int,
    slo: ServingSlo | None,
    *,
    profiles: Sequence[MeasuredProfile],
    gpus: Mapping[str, GpuSpec],
    interconnect: Interconnect = "none",
    index: ProfileIndex | None = None,
) -> Capacity | CapacityUnavailable:
    """Requests/s of one ``tp``-GPU replica of ``gpu`` from the memory and throughput models.

    ``resolved`` supplies the architecture and precision (its kind, batch, length and layout are
    replaced). See the module docstring for the formulas; the result's ``method`` states the numbers.
    """
    i_len, o_len, arch = input_tokens, output_tokens, resolved.arch
    bad = _check_shape(resolved, tp, i_len + o_len, interconnect)
    if bad is not None:
        return bad
    memory = estimate_memory(_replica(resolved, tp, "serving", 1, i_len + o_len))
    kv_seq = memory.breakdown.kv_cache
    fixed = memory.per_gpu_gib - kv_seq
    room = gpu.memory_gib * MEMORY_FRACTION - fixed
    b_kv = math.floor(room / kv_seq) if kv_seq > 0 else 0
    if b_kv < 1:
        detail = (
            f"{MEMORY_FRACTION:.0%} of {gpu.memory_gib:g} GiB minus {fixed:.2f} GiB (weights, workspace, "
            f"overhead) leaves {room:.2f} GiB per GPU, less than one sequence's KV cache of "
            f"{kv_seq:.3f} GiB at {i_len + o_len} tokens (tp {tp})"
        )
        return CapacityUnavailable(reason="no_kv_room", detail=detail)

    def throughput(work: ResolvedWorkload, output_len: int | None = None) -> ThroughputEstimate:
        return estimate_throughput(
            work, gpu, tp, interconnect, profiles, gpus, output_len=output_len, index=index
        )

    try:
        found_index = index or profile_index(profiles, gpus)
        t_prefill, prefill_note = prompt_seconds(resolved, gpu, tp, interconnect, found_index, i_len)
        model = _Replica(
            lambda batch: throughput(_replica(resolved, tp, "serving", batch, 2 * i_len + o_len)),
            t_prefill=t_prefill,
            output_tokens=o_len,
            slo=slo,
        )
        b_max = min(b_kv, MAX_CONCURRENT_SEQUENCES)
        best = model.best(b_max)
    except (ThroughputUnavailable, InvalidWorkload) as exc:
        return CapacityUnavailable(reason="throughput_unavailable", detail=str(exc))
    if best is None:
        one = model.point(1)
        detail = (
            f"even one sequence at a time gives TPOT {one.tpot_s * 1e3:.1f} ms and TTFT "
            f"{one.ttft_s * 1e3:.1f} ms on {gpu.gpu_id} (tp {tp})"
        )
        return CapacityUnavailable(reason="slo_unreachable", detail=detail)
    estimates = model.estimates
    measured = all(e.provenance == "measured" for e in estimates)
    limit = "SLO" if best.batch < b_max else ("KV cache" if b_kv < MAX_CONCURRENT_SEQUENCES else "max batch")
    targets = "no SLO" if slo is None else f"SLO TPOT {slo.tpot_ms} ms, TTFT {slo.ttft_ms} ms"
    method = (
        f"derived for {arch.name} ({resolved.precision}) on {tp}× {gpu.gpu_id}, {i_len} in / {o_len} out, "
        f"{targets}: KV room {room:.2f} GiB/GPU ÷ {kv_seq * 1024:.1f} MiB per sequence = {b_kv} sequences; "
        f"batch {best.batch} ({limit} bound); decode {best.decode_tps:.0f} tokens/s (throughput model); "
        f"prefill {model.t_prefill * 1e3:.2f} ms ({prefill_note}); R = 1/(t_p + O/D) = "
        f"{best.requests_per_s:.4g} req/s, TPOT {best.tpot_s * 1e3:.1f} ms, TTFT p{model.quantile * 100:g} "
        f"{best.ttft_s * 1e3:.1f} ms (M/D/1 prefill queue); assumes vLLM-like continuous batching "
        f"({MEMORY_FRACTION:g} of memory, ≤ {MAX_CONCURRENT_SEQUENCES} sequences), KV held for I+O "
        "tokens, no engine CPU overhead"
    )
    cited = list(dict.fromkeys(s.profile_id for e in estimates for s in e.sources))
    return Capacity(
        requests_per_s=best.requests_per_s,
        provenance="derived",
        sources=[],
        method=method,
        confidence="medium" if measured else "low",
        throughput_sources=cited[:_MAX_THROUGHPUT_SOURCES],
    )


def derived_capacity(
    resolved: ResolvedWorkload,
    gpu: GpuSpec,
    tp: int,
    input_tokens: int,
    output_tokens: int,
    slo: ServingSlo | None,
    *,
    profiles: Sequence[MeasuredProfile],
    gpus: Mapping[str, GpuSpec],
    interconnect: Interconnect = "none",
    index: ProfileIndex | None = None,
) -> Capacity | None:
    """:func:`derive_capacity`, or None where it is unavailable (call that for the reason)."""
    found = derive_capacity(
        resolved, gpu, tp, input_tokens, output_tokens, slo,
        profiles=profiles, gpus=gpus, interconnect=interconnect, index=index,
    )  # fmt: skip
    return found if isinstance(found, Capacity) else None


def class_capacity(
    serving: Sequence[ServingProfile],
    resolved: ResolvedWorkload,
    gpu: GpuSpec,
    tp: int,
    request: RequestClass,
    slo: ServingSlo | None,
    *,
    profiles: Sequence[MeasuredProfile],
    gpus: Mapping[str, GpuSpec],
    interconnect: Interconnect = "none",
    index: ProfileIndex | None = None,
) -> Capacity:
    """The capacity to plan with: the measured bucket where one exists, else derived, else zero.

    A measured row's own SLO is not stated, so under a request SLO the row is scaled by the derived
    model's ratio ``R(at SLO) / R(no SLO)`` (≤ 1; provenance ``derived``); if the model cannot check
    the SLO the row is used as is, at ``medium`` confidence.
    """

    derive = functools.partial(
        derive_capacity, resolved, gpu, tp, request.input_tokens, request.output_tokens,
        profiles=profiles, gpus=gpus, interconnect=interconnect, index=index,
    )  # fmt: skip
    row = None
    if resolved.precision in _MEASURED_PRECISIONS:
        row = bucket_of(
            serving, resolved.arch.name, gpu.gpu_id, tp, request.input_tokens, request.output_tokens
        )
    if row is None:
        found = derive(slo)
        return found if isinstance(found, Capacity) else unavailable_capacity(found)
    measured = _row_capacity(row)
    if slo is None or (slo.tpot_ms is None and slo.ttft_ms is None):
        return measured
    at_slo, free = derive(slo), derive(None)
    if isinstance(at_slo, CapacityUnavailable) and at_slo.reason == "slo_unreachable":
        return unavailable_capacity(at_slo)
    if not isinstance(at_slo, Capacity) or not isinstance(free, Capacity) or free.requests_per_s <= 0:
        note = "; the request SLO could not be checked (no derived model)"
        return msgspec.structs.replace(measured, method=measured.method + note, confidence="medium")
    ratio = min(1.0, at_slo.requests_per_s / free.requests_per_s)
    if ratio >= 1.0 - 1e-9:
        note = "; the request SLO does not bind in the derived model"
        return msgspec.structs.replace(measured, method=measured.method + note, confidence="medium")
    return Capacity(
        requests_per_s=row.max_requests_per_s * ratio,
        provenance="derived",
        sources=[row.serving_id],
        method=f"{measured.method}; × {ratio:.3f} = derived R at the request SLO ÷ R without one "
        f"({at_slo.method})",
        confidence="medium",
        throughput_sources=at_slo.throughput_sources,
    )
