"""GET /v1/profiles: measured throughput rows with their sources."""

from __future__ import annotations

from typing import Annotated, Literal

import anyio.to_thread
import msgspec
from litestar import Response, get, post
from litestar.datastructures import State
from litestar.params import QueryParameter, RawBody

from service.auth import require_admin
from service.catalog import ProfileQuery, list_profiles
from service.gpu_lookup import resolve_gpu_names
from service.price_sheets import validate_source_name
from service.routes.common import problem_responses, store_from
from service.routes.price_sheets import MAX_SHEET_BYTES
from service.schemas import ProfilePage
from service.serving_profiles import ProfileUploadReport, import_serving_profiles
from solver.profiles import ServingProfile

__all__ = [
    "ServingProfilePage",
    "list_profiles_handler",
    "list_serving_profiles_handler",
    "upload_serving_profiles_handler",
]


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


@post(
    "/profiles",
    operation_id="uploadServingProfiles",
    tags=["catalog"],
    guards=[require_admin],
    request_max_body_size=MAX_SHEET_BYTES,
    status_code=201,
    responses=problem_responses(400, 401, 403, 413, 422),
)
async def upload_serving_profiles_handler(
    state: State,
    body: RawBody,
    source: Annotated[
        str, QueryParameter(description="Name of this set of rows; re-uploading replaces them", max_length=64)
    ],
    format: Annotated[Literal["csv", "json"], QueryParameter(description="csv or json")] = "csv",
) -> Response[ProfileUploadReport]:
    """Upload serving-capacity rows (model, GPU, tp, input/output length bucket, max requests/s at an
    SLO, source). 201 with the report; 422 with every problem and its line, and nothing changes. Needs
    `Authorization: Bearer <admin token>`."""
    store = store_from(state)
    name = validate_source_name(source)
    report = await anyio.to_thread.run_sync(
        lambda: import_serving_profiles(store, source=name, fmt=format, body=bytes(body))
    )
    return Response(report, status_code=201 if report.result == "ok" else 422)


@get(
    "/profiles/serving",
    operation_id="listServingProfiles",
    tags=["catalog"],
    sync_to_thread=False,
    responses=problem_responses(400),
)
def list_serving_profiles_handler(
    state: State,
    gpu: Annotated[str | None, QueryParameter(description="GPU id, name or alias", max_length=200)] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
) -> ServingProfilePage:
    """Serving-capacity rows (Mélange's, and uploaded ones): max requests/s per length bucket."""
    store = store_from(state)
    rows = list(store.snapshot.serving)
    if gpu is not None:
        ids = set(resolve_gpu_names(store.snapshot, gpu))
        rows = [r for r in rows if r.gpu_id in ids]
    return ServingProfilePage(
        items=rows[offset : offset + limit], total=len(rows), limit=limit, offset=offset
    )


class ServingProfilePage(msgspec.Struct, kw_only=True):
    items: list[ServingProfile]
    total: int
    limit: int
    offset: int
