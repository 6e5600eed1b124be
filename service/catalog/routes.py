"""The catalog's routes: GET /v1/gpus[/{gpu_id}], GET /v1/offers, GET|POST /v1/profiles, GET /v1/profiles/serving."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import anyio.to_thread
from litestar import Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter, QueryParameter, RawBody

from service.catalog.queries import (
    GpuQuery,
    OfferQuery,
    OfferSort,
    ProfileQuery,
    get_gpu,
    list_gpus,
    list_offers,
    list_profiles,
    list_serving_profiles,
)
from service.catalog.schemas import (
    GpuOut,
    GpuPage,
    OfferPage,
    ProfilePage,
    ProfileUploadReport,
    ServingProfilePage,
)
from service.catalog.serving_profiles import import_serving_profiles
from service.db.store import Store
from service.http import (
    MAX_UPLOAD_BYTES,
    Limit,
    Offset,
    ReadableResponse,
    allow_header_handler,
    require_admin,
)
from service.price_sheets.rejection import ProfileRejection, SheetRejected, rejection_spec
from service.price_sheets.sources import validate_source_name
from service.problems import FeatureRoutes
from solver import NetworkClass, Requirement

__all__ = ["ROUTES"]

_API = FeatureRoutes("catalog")
"""Every route of this feature: tagged ``catalog``, a 400 for a bad parameter or body."""


@_API.get("/gpus", operation_id="listGpus", sync_to_thread=False)
def list_gpus_handler(
    store: NamedDependency[Store],
    vendor: Annotated[str | None, QueryParameter(description="NVIDIA or AMD", max_length=100)] = None,
    min_memory_gib: Annotated[
        float | None, QueryParameter(ge=0, le=100_000, description="At least this much memory per GPU")
    ] = None,
    nvlink: Annotated[bool | None, QueryParameter(description="Has NVLink")] = None,
    ecc: Annotated[bool | None, QueryParameter(description="Has ECC memory")] = None,
    mig: Annotated[
        bool,
        QueryParameter(
            description="List the MIG slices of the catalog's GPUs (each with parent_gpu_id and mig_profile)"
            " instead of the whole GPUs"
        ),
    ] = False,
    supports: Annotated[
        Requirement | None, QueryParameter(description="Runs this software requirement (software.supports)")
    ] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> GpuPage:
    """Every GPU of the catalog with specs, aliases, sources and software support (or, with
    ``mig=true``, every MIG slice), filterable."""
    query = GpuQuery(
        vendor=vendor,
        min_memory_gib=min_memory_gib,
        nvlink=nvlink,
        ecc=ecc,
        mig=mig,
        supports=supports,
        limit=limit,
        offset=offset,
    )
    return list_gpus(store.snapshot, query)


@_API.get("/gpus/{gpu_id:str}", operation_id="getGpu", problems=(404,), sync_to_thread=False)
def get_gpu_handler(
    store: NamedDependency[Store],
    gpu_id: Annotated[str, PathParameter(description="Canonical id (h100-sxm), name or unambiguous alias")],
) -> GpuOut:
    """One GPU by id, name or alias (404 when unknown or when the alias names several GPUs)."""
    return get_gpu(store.snapshot, gpu_id)


NetworkClassParam = Annotated[
    NetworkClass | None, QueryParameter(description="Exactly this network between instances")
]
MinNetworkGbps = Annotated[
    float | None,
    QueryParameter(ge=0, le=1e6, description="At least this many Gbit/s per instance between instances"),
]


@_API.get("/offers", operation_id="listOffers")
def list_offers_handler(
    store: NamedDependency[Store],
    gpu: Annotated[
        str | None,
        QueryParameter(description="GPU id, name or alias; H100 matches every H100 variant", max_length=200),
    ] = None,
    provider: Annotated[
        str | None, QueryParameter(description="e.g. aws, lambda, runpod", max_length=100)
    ] = None,
    region: Annotated[str | None, QueryParameter(description="Provider region", max_length=100)] = None,
    min_gpus: Annotated[
        int | None, QueryParameter(ge=1, le=1024, description="At least this many GPUs")
    ] = None,
    max_gpus: Annotated[
        int | None, QueryParameter(ge=1, le=1024, description="At most this many GPUs")
    ] = None,
    max_price: Annotated[
        float | None, QueryParameter(gt=0, le=1e9, description="On-demand USD per instance-hour, at most")
    ] = None,
    max_price_per_gpu: Annotated[
        float | None, QueryParameter(gt=0, le=1e9, description="On-demand USD per GPU-hour, at most")
    ] = None,
    interconnect: Annotated[
        Literal["none", "pcie", "nvlink", "nvswitch"] | None,
        QueryParameter(description="At least this class: none < pcie < nvlink < nvswitch"),
    ] = None,
    network_class: NetworkClassParam = None,
    min_network_gbps: MinNetworkGbps = None,
    sort: Annotated[
        OfferSort, QueryParameter(description="Sort key; '-' for descending")
    ] = "price_per_gpu_hour_usd",
    limit: Limit = 50,
    offset: Offset = 0,
) -> OfferPage:
    """Offers of the current price sheets, with price per instance-hour and per GPU-hour."""
    fields = dict(locals())
    del fields["store"]
    return list_offers(store, OfferQuery(**fields))


@_API.get("/profiles", operation_id="listProfiles")
def list_profiles_handler(
    store: NamedDependency[Store],
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
    limit: Limit = 50,
    offset: Offset = 0,
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
    return list_profiles(store, query)


@_API.post(
    "/profiles",
    operation_id="uploadServingProfiles",
    problems=(401, 403, 413),
    responses={**rejection_spec(ProfileRejection)},
    guards=[require_admin],
    request_max_body_size=MAX_UPLOAD_BYTES,
    status_code=201,
)
async def upload_serving_profiles_handler(
    store: NamedDependency[Store],
    body: RawBody,
    source: Annotated[
        str, QueryParameter(description="Name of this set of rows; re-uploading replaces them", max_length=64)
    ],
    format: Annotated[Literal["csv", "json"], QueryParameter(description="csv or json")] = "csv",
) -> Response[ProfileUploadReport]:
    """Upload serving-capacity rows (model, GPU, tp, input/output length bucket, max requests/s at an
    SLO, source). 201 with the report; 422 (a problem+json) with every problem and its line, and nothing changes. Needs
    `Authorization: Bearer <admin token>`."""
    name = validate_source_name(source)
    report = await anyio.to_thread.run_sync(
        lambda: import_serving_profiles(store, source=name, fmt=format, body=bytes(body))
    )
    if report.result != "ok":
        raise SheetRejected(report)
    return ReadableResponse(report, status_code=201)


@_API.get("/profiles/serving", operation_id="listServingProfiles", sync_to_thread=False)
def list_serving_profiles_handler(
    store: NamedDependency[Store],
    gpu: Annotated[str | None, QueryParameter(description="GPU id, name or alias", max_length=200)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> ServingProfilePage:
    """Serving-capacity rows (Mélange's, and uploaded ones): max requests/s per length bucket."""
    return list_serving_profiles(store.snapshot, gpu=gpu, limit=limit, offset=offset)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (
    allow_header_handler("/profiles"),  # before the GET and POST of /profiles (see its docstring)
    list_gpus_handler,
    get_gpu_handler,
    list_offers_handler,
    list_profiles_handler,
    upload_serving_profiles_handler,
    list_serving_profiles_handler,
)
"""The catalog's handlers, in registration order."""
