"""The latencies a fleet's replica type achieves at the load the fleet gives it, cached per snapshot.

Each chosen type's replicas see Poisson arrivals of the request sizes routed to the type, at the type's
rate ÷ its replicas; the engine model simulates that (``solver.latency_at``). The result is kept in the
plan's capacity table keyed by what it depends on, the per-replica rate to three significant figures,
so a repeated plan simulates nothing and a plan stays fast once warm.
"""

from __future__ import annotations

from collections.abc import Hashable, MutableMapping, Sequence
from typing import Any

from service.plans.schemas import ReplicaLatencyOut
from solver import EngineResult, ReplicaType, ServingSetup, latency_at

__all__ = ["replica_latency"]

_DIGITS = 3


def _rounded(value: float) -> float:
    return float(f"{value:.{_DIGITS}g}")


def replica_latency(
    cache: MutableMapping[Hashable, Any],
    setup: ServingSetup,
    rtype: ReplicaType,
    rates: Sequence[tuple[int, int, float]],
    replicas: int,
) -> ReplicaLatencyOut | None:
    """Latencies of one replica of ``rtype`` when the type's ``replicas`` share ``rates`` ((input,
    output, requests/s) per request size); None when the engine model cannot build the replica."""
    total = sum(rate for _, _, rate in rates)
    if total <= 0 or replicas <= 0:
        return None
    per_replica = _rounded(total / replicas)
    mix = tuple((i, o, _rounded(rate / total)) for i, o, rate in rates if rate > 0)
    key = ("latency", setup.gpu.gpu_id, rtype.tp, setup.interconnect, setup.precision, setup.kv_cache, mix,
           per_replica)  # fmt: skip
    if key not in cache:
        cache[key] = latency_at(setup, rtype.tp, mix, per_replica)
    found: EngineResult | None = cache[key]
    if found is None:
        return None
    return ReplicaLatencyOut(
        requests_per_s=per_replica,
        ttft_ms=found.ttft_ms,
        tpot_ms=found.tpot_ms,
        e2e_ms=found.e2e_ms,
        stable=found.stable,
        method=f"engine model: Poisson arrivals at {per_replica:,.3g} requests/s per replica of this type's "
        f"request sizes, {found.requests_simulated} requests simulated at {setup.precision}",
    )
