"""Measured performance rows, as the models consume them (no I/O: the service loads them)."""

from __future__ import annotations

import msgspec

__all__ = ["MeasuredProfile", "ServingProfile"]


class MeasuredProfile(msgspec.Struct, frozen=True, kw_only=True):
    """One measured throughput row (training or inference) of a model on ``gpu_count`` GPUs.

    ``model``, ``task``, ``precision`` and ``metric`` keep the source's own spelling
    (e.g. ``"Llama 3 8B"``, ``"train"``, ``"fp16_amp"``, ``"tokens_per_s"``); ``value`` is the total
    across all GPUs of the row, in ``metric`` units.
    """

    profile_id: int
    gpu_id: str
    gpu_count: int
    interconnect: str
    model: str
    task: str
    precision: str
    batch_size: int | None
    seq_len_or_resolution: str | None
    metric: str
    value: float
    notes: str
    source: str
    dataset: str


class ServingProfile(msgspec.Struct, frozen=True, kw_only=True):
    """Max requests/s of one replica at a latency SLO for one (input, output) length bucket.

    Buckets are half-open token ranges ``(lo, hi]``; ``slo`` is ``None`` where the source does not
    state the latency target behind its "max throughput".
    """

    serving_id: int
    model: str
    gpu_id: str
    tp: int
    input_len_lo_excl: int
    input_len_hi_incl: int
    output_len_lo_excl: int
    output_len_hi_incl: int
    max_requests_per_s: float
    slo: str | None
    hourly_cost_usd: float | None
    in_grid: bool
    source: str
