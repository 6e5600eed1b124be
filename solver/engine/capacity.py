"""A replica type's capacity for one request size: measured where a serving row matches, else the
largest arrival rate the simulated engine sustains within the SLO.

- **Measured**: the Mélange bucket holding the request's lengths (``solver.throughput.capacity``), used
  as is without a request SLO, so the measured optima stay exact. Under a request SLO the row is
  scaled by the engine model's ratio of its capacity at the SLO to its capacity without one.
- **Engine**: the replica's saturated rate ``R`` is its simulated offline throughput (requests/s).
  Without an SLO the capacity is ``MAX_UTILIZATION × R`` (a queue fed faster grows without bound and
  its latencies with it). With one, it is the largest Poisson arrival rate at which the simulated
  ``percentile``-th TTFT and TPOT meet ``ttft_ms`` and ``tpot_ms`` and the replica keeps up, found by
  bisection between ``R / 20`` and ``MAX_UTILIZATION × R`` (:data:`BISECTIONS` halvings); an SLO the replica misses even
  at ``R / 20`` makes the capacity 0 (``slo_unreachable``).
"""

from __future__ import annotations

from typing import Final

from solver.catalog.precisions import precision_refusal
from solver.catalog.profiles import ServingProfile
from solver.engine.load import run_load
from solver.engine.result import EngineResult
from solver.engine.serve import MIN_KV_REQUESTS, ServingSetup
from solver.engine.simulate import Replica
from solver.errors import ThroughputUnavailable
from solver.spec.serving import RequestClass, ServingLoad, ServingSlo
from solver.throughput.capacity import Capacity, bucket_of, measured_capacity

__all__ = [
    "BISECTIONS",
    "MAX_UTILIZATION",
    "SLO_REQUESTS",
    "engine_capacity",
    "replica_capacity",
    "saturated_rate",
]

MAX_UTILIZATION: Final = 0.9
BISECTIONS: Final = 5
SLO_REQUESTS: Final = 160
"""Requests per simulated arrival rate while searching the SLO (latency percentiles up to p99)."""
_LOWEST_SHARE: Final = 0.05
_MEASURED_PRECISIONS: Final = frozenset({"bf16", "fp16"})


def _meets(result: EngineResult, slo: ServingSlo) -> bool:
    percentile = min(slo.percentile, 99.0)
    if not result.stable:
        return False
    if slo.ttft_ms is not None and result.ttft_ms.at(percentile) > slo.ttft_ms:
        return False
    return slo.tpot_ms is None or result.tpot_ms.at(percentile) <= slo.tpot_ms


def _at_rate(replica: Replica, size: tuple[int, int, float], rate: float, saturated: float) -> EngineResult:
    load = ServingLoad(requests_per_s=rate, requests=SLO_REQUESTS)
    return run_load(replica, [size], load, saturated=saturated)


def _slo_text(slo: ServingSlo) -> str:
    limits = [
        f"TTFT {slo.ttft_ms:g} ms" if slo.ttft_ms else "",
        f"TPOT {slo.tpot_ms:g} ms" if slo.tpot_ms else "",
    ]
    return f"p{min(slo.percentile, 99.0):g} " + " and ".join(limit for limit in limits if limit)


def saturated_rate(replica: Replica, size: tuple[int, int, float]) -> float:
    """The replica's saturated rate for requests of ``size``: its simulated offline requests/s."""
    return run_load(replica, [size], ServingLoad(offline=True)).requests_per_s


def replica_capacity(
    replica: Replica, size: tuple[int, int, float], slo: ServingSlo | None, saturated: float | None = None
) -> tuple[float, str]:
    """Requests/s one replica sustains for requests of ``size`` within ``slo``, and how (module
    docstring); ``saturated`` is :func:`saturated_rate` where the caller has it already."""
    if replica.kv_capacity_tokens < MIN_KV_REQUESTS * (size[0] + size[1]):
        return 0.0, f"unavailable (no_kv_room): the KV cache holds {replica.kv_capacity_tokens:,} tokens"
    if saturated is None:
        saturated = saturated_rate(replica, size)
    if slo is None or (slo.ttft_ms is None and slo.tpot_ms is None):
        return MAX_UTILIZATION * saturated, (
            f"engine model: {MAX_UTILIZATION:.0%} of the simulated saturated rate {saturated:,.3g} req/s"
        )
    low, high = _LOWEST_SHARE * saturated, MAX_UTILIZATION * saturated
    found = _at_rate(replica, size, low, saturated)
    if not _meets(found, slo):
        return 0.0, (
            f"unavailable (slo_unreachable): even at {low:,.3g} req/s the simulated p{min(slo.percentile, 99.0):g} "
            f"TTFT is {found.ttft_ms.at(slo.percentile):,.0f} ms and TPOT {found.tpot_ms.at(slo.percentile):,.1f} ms"
        )
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        result = _at_rate(replica, size, middle, saturated)
        low, high, found = (middle, high, result) if _meets(result, slo) else (low, middle, found)
    return low, (
        f"engine model: the largest Poisson rate meeting {_slo_text(slo)} in simulation, {low:,.3g} req/s "
        f"(TTFT p{min(slo.percentile, 99.0):g} {found.ttft_ms.at(slo.percentile):,.0f} ms, TPOT "
        f"{found.tpot_ms.at(slo.percentile):,.1f} ms; saturated {saturated:,.3g} req/s)"
    )


def _unavailable(method: str) -> Capacity:
    return Capacity(requests_per_s=0.0, provenance="derived", sources=[], method=method, confidence="low")


def engine_capacity(
    serving: list[ServingProfile] | tuple[ServingProfile, ...],
    setup: ServingSetup,
    tp: int,
    request: RequestClass,
    slo: ServingSlo | None,
) -> Capacity:
    """The capacity to plan with for one replica type and request size (module docstring)."""
    size = (request.input_tokens, request.output_tokens, 1.0)
    refused = precision_refusal(setup.gpu, setup.precision, training=False)
    if refused is not None:
        return _unavailable(f"unavailable (precision): {refused}")
    try:
        replica = setup.replica(tp)
    except ThroughputUnavailable as exc:
        return _unavailable(f"unavailable (throughput_unavailable): {exc}")
    row = None
    if setup.precision in _MEASURED_PRECISIONS:
        row = bucket_of(
            serving, setup.arch.name, setup.gpu.gpu_id, tp, request.input_tokens, request.output_tokens
        )
    if row is not None:
        measured = measured_capacity(
            [row], row.model, row.gpu_id, tp, request.input_tokens, request.output_tokens
        )
        assert measured is not None
        if slo is None or (slo.ttft_ms is None and slo.tpot_ms is None):
            return measured
        saturated = saturated_rate(replica, size)  # simulated once for both capacities
        at_slo, how = replica_capacity(replica, size, slo, saturated)
        free, _ = replica_capacity(replica, size, None, saturated)
        ratio = min(1.0, at_slo / free) if free > 0 else 1.0
        return Capacity(
            requests_per_s=measured.requests_per_s * ratio,
            provenance="derived" if ratio < 1.0 else "measured",
            sources=measured.sources,
            method=f"{measured.method}; x {ratio:.3f} = the engine model's capacity at the request SLO over "
            f"its capacity without one ({how})",
            confidence="medium",
        )
    value, how = replica_capacity(replica, size, slo)
    return Capacity(requests_per_s=value, provenance="derived", sources=[], method=how, confidence="medium")
