"""GET /v1/profiles: measured throughput rows with their sources."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.datastructures import State
from litestar.params import QueryParameter

from service.catalog import ProfileQuery, list_profiles
from service.routes.common import problem_responses, store_from
from service.schemas import ProfilePage

__all__ = ["list_profiles_handler"]


@get(
    "/profiles",
    operation_id="listProfiles",
    tags=["catalog"],
    sync_to_thread=True,
    responses=problem_responses(400),
)
def list_profiles_handler(
    state: State,
    gpu: Annotated[str | None, QueryParameter(description="GPU id, name or alias", max_length=200)] = None,
    model: Annotated[
        str | None,
        QueryParameter(
            description="Model name as measured, e.g. 'Llama 3 8B' (case-insensitive)", max_length=200
        ),
    ] = None,
    task: Annotated[str | None, QueryParameter(description="train or inference", max_length=50)] = None,
    metric: Annotated[
        str | None, QueryParameter(description="e.g. tokens_per_s, images_per_s", max_length=50)
    ] = None,
    precision: Annotated[
        str | None, QueryParameter(description="Source precision label", max_length=100)
    ] = None,
    gpu_count: Annotated[
        int | None, QueryParameter(ge=1, le=1024, description="GPUs in the measurement")
    ] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 50,
    offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
) -> ProfilePage:
    """Measured throughput rows (training and inference), each with its source."""
    query = ProfileQuery(
        gpu=gpu,
        model=model,
        task=task,
        metric=metric,
        precision=precision,
        gpu_count=gpu_count,
        limit=limit,
        offset=offset,
    )
    return list_profiles(store_from(state), query)
