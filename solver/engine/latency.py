"""The latencies one replica achieves at the load a fleet gives it: a plan states what it promises.

A fleet routes a share of each request size to each replica type; one replica of the type then sees
Poisson arrivals of that mix at the type's rate ÷ its replicas. The simulation is the one capacity at
an SLO bisects over (:data:`~solver.engine.capacity.SLO_REQUESTS` requests, seed 0), so a type whose
capacity came from the SLO shows latencies within it at a load at most that capacity.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver.engine.capacity import SLO_REQUESTS
from solver.engine.load import run_load
from solver.engine.result import EngineResult
from solver.engine.serve import ServingSetup
from solver.errors import ThroughputUnavailable
from solver.spec.serving import ServingLoad

__all__ = ["MIN_SIMULATED_RATE", "latency_at"]

MIN_SIMULATED_RATE = 1e-3
"""The least arrival rate simulated (requests/s per replica): below it a replica is idle between
requests and its latencies are those of this rate."""


def latency_at(
    setup: ServingSetup, tp: int, classes: Sequence[tuple[int, int, float]], requests_per_s: float
) -> EngineResult | None:
    """Simulated latencies of one replica of ``setup`` on ``tp`` GPUs fed ``requests_per_s`` Poisson
    arrivals of the mix ``classes`` ((input, output, share)); None when the replica cannot be built."""
    try:
        replica = setup.replica(tp)
    except ThroughputUnavailable:
        return None
    load = ServingLoad(requests_per_s=max(requests_per_s, MIN_SIMULATED_RATE), requests=SLO_REQUESTS)
    return run_load(replica, classes, load)
