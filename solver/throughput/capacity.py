"""A serving replica's measured capacity: the serving-profile bucket that holds a request's lengths.

:func:`bucket_of` finds the serving-profile row whose ``(lo, hi]`` input and output ranges hold the
request's lengths (model names compared through :func:`~solver.catalog.models.lookup_model`, so
``"Llama-2-7b"`` matches ``"Llama 2 7B"``). The rows state no precision: they are taken as 16-bit runs
(vLLM's default dtype for Llama 2) and used for bf16/fp16 workloads only. Where no row matches, the
engine model derives the capacity (:mod:`solver.engine.capacity`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

import msgspec

from solver.catalog.models import lookup_model
from solver.catalog.profiles import ServingProfile
from solver.errors import UnknownModel

__all__ = ["Capacity", "Confidence", "Provenance", "bucket_of", "measured_capacity"]

Provenance = Literal["measured", "derived"]
Confidence = Literal["high", "medium", "low"]


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
    """The in-grid row of ``model`` on ``gpu_id`` at ``tp`` whose ``(lo, hi]`` ranges hold the lengths;
    where several do (the runs of a rate sweep), the one that served the most requests per second —
    what the replica was measured to sustain — the first of them on a tie."""
    wanted = _canonical_model(model)
    if wanted is None:
        return None
    best: ServingProfile | None = None
    for row in profiles:
        if (
            row.in_grid
            and row.gpu_id == gpu_id
            and row.tp == tp
            and _holds(row.input_len_lo_excl, row.input_len_hi_incl, input_tokens)
            and _holds(row.output_len_lo_excl, row.output_len_hi_incl, output_tokens)
            and _canonical_model(row.model) == wanted
            and (best is None or row.max_requests_per_s > best.max_requests_per_s)
        ):
            best = row
    return best


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
