"""What a simulated load gives: throughput, latency percentiles and whether the replica kept up.

Throughput counts the measured requests only: for an ``offline`` batch every request over the time
the last one finished (as offline benchmarks count); for a stream (``concurrency``, ``requests_per_s``) the requests after the
warm-up share, over the time from the first of them arriving to the last finishing. A Poisson stream
is *stable* when its rate is at most :data:`KEEP_UP` of the replica's saturated rate (its simulated
offline throughput); beyond that its queue grows without bound and the latencies depend on the run's
length.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Final

import msgspec

from solver.engine.simulate import WARMUP_SHARE, SimulatedRequest

__all__ = ["KEEP_UP", "EngineResult", "Percentiles", "summarise"]

KEEP_UP: Final = 0.97
"""A Poisson stream is sustained when its rate is at most this share of the replica's saturated rate."""


class Percentiles(msgspec.Struct, frozen=True, kw_only=True):
    """A latency's 50th, 90th and 99th percentiles, milliseconds."""

    p50: float
    p90: float
    p99: float

    def at(self, percentile: float) -> float:
        """The latency at ``percentile`` (interpolated between the three; the p99 beyond it)."""
        points = ((50.0, self.p50), (90.0, self.p90), (99.0, self.p99))
        if percentile <= 50.0:
            return self.p50
        for (lo, a), (hi, b) in itertools.pairwise(points):
            if percentile <= hi:
                return a + (b - a) * (percentile - lo) / (hi - lo)
        return self.p99


class EngineResult(msgspec.Struct, frozen=True, kw_only=True):
    """One simulated load on one replica."""

    output_tokens_per_s: float
    total_tokens_per_s: float
    requests_per_s: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    e2e_ms: Percentiles
    requests_simulated: int
    stable: bool


def _percentiles(values: Sequence[float]) -> Percentiles:
    ordered = sorted(v * 1000 for v in values) or [0.0]

    def at(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return Percentiles(p50=at(0.5), p90=at(0.9), p99=at(0.99))


def summarise(
    done: Sequence[SimulatedRequest], prompts: Sequence[int], load: str, *, stable: bool = True
) -> EngineResult:
    """The result of ``done`` (in arrival order; ``prompts`` their prompt lengths) under ``load``;
    ``stable`` as the caller judged it (:func:`solver.engine.load.run_load`)."""
    skip = 0 if load == "offline" else int(len(done) * WARMUP_SHARE)
    measured = done[skip:]
    start = 0.0 if load == "offline" else measured[0].arrival
    span = max(max(r.finish for r in measured) - start, 1e-9)
    output_rate = sum(r.output_tokens for r in measured) / span
    prompt_rate = sum(prompts[skip:]) / span
    request_rate = len(measured) / span
    return EngineResult(
        output_tokens_per_s=output_rate,
        total_tokens_per_s=output_rate + prompt_rate,
        requests_per_s=request_rate,
        ttft_ms=_percentiles([r.first_token - r.arrival for r in measured]),
        tpot_ms=_percentiles(
            [(r.finish - r.first_token) / (r.output_tokens - 1) for r in measured if r.output_tokens > 1]
        ),
        e2e_ms=_percentiles([r.finish - r.arrival for r in measured]),
        requests_simulated=len(done),
        stable=stable,
    )
