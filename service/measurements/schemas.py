"""What the measurement routes answer: an upload's report, and the stored runs."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

__all__ = ["MeasurementOut", "MeasurementPage", "MeasurementUploadReport"]


class MeasurementOut(msgspec.Struct, kw_only=True):
    """One imported run: what ran where, as its tool measured it, and the catalog row it became
    (``row_id``: the serving profile's ``serving_id`` or the throughput profile's ``profile_id``)."""

    row_id: int
    version: int
    source: str
    format: str
    current: bool
    kind: Literal["serving", "training"]
    model: str
    gpu: str
    gpu_count: int
    tp: int
    engine: str
    engine_version: str | None
    precision: str
    input_tokens: float | None
    output_tokens: float | None
    request_rate: float | None
    max_concurrency: int | None
    requests_per_s: float | None
    output_tokens_per_s: float | None
    total_tokens_per_s: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    tpot_p50_ms: float | None
    tpot_p99_ms: float | None
    task: str
    method: str
    seq_len: int | None
    batch_size: int | None
    tokens_per_s: float | None
    tflops_per_gpu: float | None
    mfu: float | None
    peak_memory_gib: float | None
    steps: int | None
    row: str
    """The catalog row it became, in words (the serving bucket, or the throughput setting)."""


class MeasurementUploadReport(msgspec.Struct, kw_only=True):
    """An accepted upload: its version, how many runs it stored and how many of the source's it replaced."""

    source: str
    version: int
    format: str
    created_at: datetime
    rows: int
    replaced_rows: int
    measurements: list[MeasurementOut]


class MeasurementPage(msgspec.Struct, kw_only=True):
    total: int
    limit: int
    offset: int
    items: list[MeasurementOut]
