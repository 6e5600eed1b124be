"""GET /v1/gpus and GET /v1/gpus/{gpu_id}: the GPU catalog."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.datastructures import State
from litestar.params import PathParameter, QueryParameter

from service.catalog import GpuQuery, get_gpu, list_gpus
from service.routes.common import problem_responses, store_from
from service.schemas import GpuOut, GpuPage

__all__ = ["get_gpu_handler", "list_gpus_handler"]


@get(
    "/gpus", operation_id="listGpus", tags=["catalog"], sync_to_thread=False, responses=problem_responses(400)
)
def list_gpus_handler(
    state: State,
    vendor: Annotated[str | None, QueryParameter(description="NVIDIA or AMD", max_length=100)] = None,
    min_memory_gib: Annotated[
        float | None, QueryParameter(ge=0, le=100_000, description="At least this much memory per GPU")
    ] = None,
    nvlink: Annotated[bool | None, QueryParameter(description="Has NVLink")] = None,
    ecc: Annotated[bool | None, QueryParameter(description="Has ECC memory")] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
) -> GpuPage:
    """Every GPU of the catalog with specs, aliases and sources, filterable."""
    query = GpuQuery(
        vendor=vendor, min_memory_gib=min_memory_gib, nvlink=nvlink, ecc=ecc, limit=limit, offset=offset
    )
    return list_gpus(store_from(state), query)


@get(
    "/gpus/{gpu_id:str}",
    operation_id="getGpu",
    tags=["catalog"],
    sync_to_thread=False,
    responses=problem_responses(400, 404),
)
def get_gpu_handler(
    state: State,
    gpu_id: Annotated[str, PathParameter(description="Canonical id (h100-sxm), name or unambiguous alias")],
) -> GpuOut:
    """One GPU by id, name or alias (404 when unknown or when the alias names several GPUs)."""
    return get_gpu(store_from(state), gpu_id)
