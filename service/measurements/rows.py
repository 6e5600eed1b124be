"""A measured run as the catalog row plans use: a serving bucket or a throughput row.

- **Serving**: one replica of ``model`` on ``tp`` GPUs sustained ``requests_per_s`` at the run's mean
  request size; the row's bucket holds the sizes within a factor 1.25 of those means (input and output
  lengths in ``(mean / 1.25, mean × 1.25]``), and its ``slo`` states the p99 TTFT and TPOT the run kept at
  that rate. The capacity model takes a matching bucket before any derivation
  (``solver.engine_capacity``), and a user's rows before the published ones.
- **Training**: ``tokens_per_s`` over ``gpu_count`` GPUs at ``seq_len`` (task ``train`` or ``fine_tune``,
  metric ``tokens_per_s``, the method in its notes); the throughput model's measured route takes it for the same model, GPU, count,
  precision and setting. Its notes keep the MFU, TFLOPS per GPU and peak memory the tool reported.
"""

from __future__ import annotations

import math
from typing import Final

from pricing import MeasuredRun
from solver import MeasuredProfile, ServingProfile

__all__ = ["BUCKET_FACTOR", "serving_row", "training_row"]

BUCKET_FACTOR: Final = 1.25
"""How far from a run's mean request lengths its bucket reaches, as a factor either way."""


def _edges(mean: float) -> tuple[int, int]:
    lo = max(0, math.floor(mean / BUCKET_FACTOR))
    return lo, max(lo + 1, math.ceil(mean * BUCKET_FACTOR))


def serving_row(run: MeasuredRun, *, row_id: int, model: str, gpu_id: str, source: str) -> ServingProfile:
    assert run.requests_per_s is not None and run.input_tokens is not None and run.output_tokens is not None
    input_lo, input_hi = _edges(run.input_tokens)
    output_lo, output_hi = _edges(run.output_tokens)
    kept = [
        *([f"ttft<={run.ttft_p99_ms:.0f}ms"] if run.ttft_p99_ms is not None else []),
        *([f"tpot<={run.tpot_p99_ms:.1f}ms"] if run.tpot_p99_ms is not None else []),
    ]
    load = f"request rate {'inf' if run.request_rate is None else f'{run.request_rate:g} req/s'}"
    if run.request_rate is None and run.max_concurrency is not None:
        load = f"concurrency {run.max_concurrency}"  # a closed-loop run (AIPerf, GuideLLM concurrent)
    slo = f"measured p99 {' '.join(kept)} at {load}" if kept else f"measured at {load}"
    return ServingProfile(
        serving_id=row_id,
        model=model,
        gpu_id=gpu_id,
        tp=run.tp,
        input_len_lo_excl=input_lo,
        input_len_hi_incl=input_hi,
        output_len_lo_excl=output_lo,
        output_len_hi_incl=output_hi,
        max_requests_per_s=run.requests_per_s,
        slo=slo,
        hourly_cost_usd=None,
        in_grid=True,
        source=source,
    )


def training_row(run: MeasuredRun, *, row_id: int, model: str, gpu_id: str, source: str) -> MeasuredProfile:
    assert run.tokens_per_s is not None and run.seq_len is not None
    notes = [
        f"imported {run.tool}",
        f"method={run.method}",
        f"tp={run.tp}",
        *([f"mbs={run.batch_size}"] if run.batch_size else []),
        *([f"mfu={run.mfu:.4f}"] if run.mfu is not None else []),
        *([f"tflops_per_gpu={run.tflops_per_gpu:.2f}"] if run.tflops_per_gpu is not None else []),
        *([f"peak_memory_gib={run.peak_memory_gib:.2f}"] if run.peak_memory_gib is not None else []),
        *([f"steps={run.steps}"] if run.steps is not None else []),
    ]
    return MeasuredProfile(
        profile_id=row_id,
        gpu_id=gpu_id,
        gpu_count=run.gpu_count,
        interconnect="nvlink" if run.gpu_count > 1 else "none",
        model=model,
        task=run.task,
        precision=run.precision,
        batch_size=run.batch_size,
        seq_len_or_resolution=str(run.seq_len),
        metric="tokens_per_s",
        value=run.tokens_per_s,
        notes="; ".join(notes),
        source=source,
        dataset="measurements",
    )
