"""The estimate routes: POST /v1/memory and POST /v1/throughput (what a workload needs, how fast it runs)."""

from __future__ import annotations

from typing import Final

from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody

from service.db.store import Store
from service.estimates.memory import estimate_memory_for
from service.estimates.schemas import MemoryRequest, MemoryResponse, ThroughputRequest, ThroughputResponse
from service.estimates.throughput import estimate_throughput_for
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("estimates")
"""Every route of this feature: tagged ``estimates``, a 400 for a bad parameter or body."""


@_API.post("/memory", operation_id="estimateMemory", status_code=200, sync_to_thread=False)
def memory_handler(store: NamedDependency[Store], data: JSONBody[MemoryRequest]) -> MemoryResponse:
    """Per-GPU peak memory (allocated + runtime overhead) with a band and a breakdown, and the fit on
    the given GPU (every variant of an alias such as ``H100``) or on every catalog GPU."""
    return estimate_memory_for(store.snapshot, data)


@_API.post("/throughput", operation_id="estimateThroughput", problems=(422,), status_code=200)
def throughput_handler(
    store: NamedDependency[Store], data: JSONBody[ThroughputRequest]
) -> ThroughputResponse:
    """Throughput of the workload on ``gpu_count`` × ``gpu`` in the task's unit, with ``provenance``
    (measured rows cited, or derived with the method), the rows used and a confidence. 422 when no
    measured row or calibration supports an estimate (e.g. fp8 on a GPU without fp8 tensor cores)."""
    return estimate_throughput_for(store.snapshot, data)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (memory_handler, throughput_handler)
"""The estimate handlers, in registration order."""
