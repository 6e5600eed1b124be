"""POST /v1/memory: the per-GPU memory a workload needs, and which GPUs it fits."""

from __future__ import annotations

from litestar import post
from litestar.datastructures import State
from litestar.params import JSONBody

from service.estimates import MemoryRequest, MemoryResponse, estimate_memory_for
from service.routes.common import problem_responses, store_from

__all__ = ["memory_handler"]


@post(
    "/memory",
    operation_id="estimateMemory",
    tags=["estimates"],
    status_code=200,
    sync_to_thread=False,
    responses=problem_responses(400),
)
def memory_handler(state: State, data: JSONBody[MemoryRequest]) -> MemoryResponse:
    """Per-GPU peak memory (allocated + runtime overhead) with a band and a breakdown, and the fit on
    the given GPU (every variant of an alias such as ``H100``) or on every catalog GPU."""
    return estimate_memory_for(store_from(state), data)
