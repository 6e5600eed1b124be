"""The price-sheet routes: versions and their reports, upload (admin), an offer's price history, refresh."""

from __future__ import annotations

from typing import Annotated, Any, Final

import anyio.to_thread
from apscheduler.schedulers.base import BaseScheduler
from litestar import Request, Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter, QueryParameter, RawBody

from pricing import SheetFormat
from service.db.store import Store
from service.http import (
    MAX_UPLOAD_BYTES,
    Limit,
    Offset,
    ReadableResponse,
    allow_header_handler,
    is_admin,
    require_admin,
)
from service.price_sheets.batches import RefreshBatch, RefreshBatches
from service.price_sheets.history import get_version, list_versions, offer_history
from service.price_sheets.importer import import_sheet
from service.price_sheets.providers import list_providers_handler
from service.price_sheets.refresh import Refresher
from service.price_sheets.rejection import SheetRejected, SheetRejection, rejection_spec
from service.price_sheets.schemas import (
    OfferHistory,
    RefreshStatus,
    SheetReport,
    SheetVersion,
    SheetVersionPage,
)
from service.price_sheets.sources import validate_source_name
from service.problems import FeatureRoutes
from service.settings import Settings

__all__ = ["ROUTES"]

_API = FeatureRoutes("prices")
"""Every route of this feature: tagged ``prices``, a 400 for a bad parameter or body."""

_STATUS_OF_RESULT: Final = {"ok": 201, "unchanged": 200, "rejected": 422}


@_API.get("/price-sheets", operation_id="listPriceSheets")
def list_sheets_handler(
    store: NamedDependency[Store],
    source: Annotated[
        str | None, QueryParameter(description="Only this source's versions", max_length=64)
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> SheetVersionPage:
    """Every price-sheet version, newest first; `current` marks the latest of each source and kind."""
    return list_versions(store, source=source, limit=limit, offset=offset)


@_API.get("/price-sheets/{version:int}", operation_id="getPriceSheet", problems=(404,))
def get_sheet_handler(
    store: NamedDependency[Store],
    version: Annotated[int, PathParameter(ge=1, le=2**31 - 1, description="Version number")],
) -> SheetVersion:
    """One version with its import report: problems, implausible-move warnings, diff to the previous."""
    return get_version(store, version)


@_API.get("/offers/{offer_id:str}/history", operation_id="offerHistory", problems=(404,))
def offer_history_handler(
    store: NamedDependency[Store],
    offer_id: Annotated[str, PathParameter(max_length=100, description="An offer id from /v1/offers")],
) -> OfferHistory:
    """The offer's prices in every sheet version that listed it."""
    return offer_history(store, offer_id)


@_API.post(
    "/price-sheets",
    operation_id="uploadPriceSheet",
    problems=(401, 403, 409, 413),
    responses={**rejection_spec(SheetRejection)},
    guards=[require_admin],
    request_max_body_size=MAX_UPLOAD_BYTES,
    status_code=201,
)
async def upload_sheet_handler(
    store: NamedDependency[Store],
    settings: NamedDependency[Settings],
    body: RawBody,
    source: Annotated[str, QueryParameter(description="Source name; its offers are replaced", max_length=64)],
    format: Annotated[
        SheetFormat, QueryParameter(description="rental_csv, rental_json, cloud_catalog_csv, ownership_csv")
    ],
    provider: Annotated[
        str | None,
        QueryParameter(description="Provider of every row (required for cloud_catalog_csv)", max_length=64),
    ] = None,
) -> Response[SheetReport]:
    """Upload a sheet (the request body, CSV or JSON). 201 with the report and the new version; 200 when
    the content equals the source's current version; 422 with the report (every problem with its line)
    (a problem+json) when anything is wrong — then nothing changes. Needs `Authorization: Bearer <admin token>`."""
    name = validate_source_name(source)
    report = await anyio.to_thread.run_sync(
        lambda: import_sheet(
            store,
            source=name,
            fmt=format,
            body=bytes(body),
            provider=provider,
            origin="upload (POST /v1/price-sheets)",
            move_factor=settings.price_move_factor,
        )
    )
    if report.result == "rejected":
        raise SheetRejected(report)
    return ReadableResponse(report, status_code=_STATUS_OF_RESULT[report.result])


@_API.get("/price-sheets/refresh", operation_id="refreshStatus")
def refresh_status_handler(
    request: Request[Any, Any, Any],
    refresher: NamedDependency[Refresher],
    scheduler: NamedDependency[BaseScheduler | None],
) -> RefreshStatus:
    """Each configured source (GPUPLAN_SOURCES): its last run — time, result (ok | unchanged | rejected |
    failed), error, version — and when it runs next. A file source's path and the errors are shown
    with the admin token only."""
    return RefreshStatus(sources=refresher.statuses(scheduler, detailed=is_admin(request)))


@_API.post(
    "/price-sheets/refresh",
    operation_id="refreshNow",
    problems=(401, 403, 409),
    responses={
        200: ResponseSpec(data_container=RefreshBatch, description="With wait=true: the finished run")
    },
    guards=[require_admin],
    status_code=202,
)
async def refresh_now_handler(
    refresher: NamedDependency[Refresher],
    refresh_batches: NamedDependency[RefreshBatches],
    source: Annotated[
        str | None, QueryParameter(description="Only this configured source", max_length=64)
    ] = None,
    wait: Annotated[
        bool, QueryParameter(description="Answer when the run is done (200) instead of at once (202)")
    ] = False,
) -> Response[RefreshBatch]:
    """Refresh every configured source (or one) now: 202 with the queued run, polled at its `Location`
    (GET /v1/price-sheets/refresh/runs/{run_id}); with `wait=true`, 200 with the finished run. Needs the
    admin token. Only configured sources can be fetched: no URL is taken from a request."""
    names = refresher.chosen(source)
    if wait:
        batch = await anyio.to_thread.run_sync(refresh_batches.run_now, names)
    else:
        batch = await anyio.to_thread.run_sync(refresh_batches.submit, names)
    return ReadableResponse(
        batch,
        status_code=200 if wait else 202,
        headers={"Location": f"/v1/price-sheets/refresh/runs/{batch.run_id}"},
    )


@_API.get("/price-sheets/refresh/runs/{run_id:int}", operation_id="getRefreshRun", problems=(404,))
def refresh_run_handler(
    refresh_batches: NamedDependency[RefreshBatches],
    run_id: Annotated[int, PathParameter(ge=1, le=2**31 - 1, description="The id POST …/refresh returned")],
) -> RefreshBatch:
    """A requested refresh: queued, running, done (or failed, abandoned), with each source's result."""
    return refresh_batches.get(run_id)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (
    allow_header_handler("/price-sheets"),  # before the GET and POST of these paths (see its docstring)
    allow_header_handler("/price-sheets/refresh"),
    list_sheets_handler,
    get_sheet_handler,
    upload_sheet_handler,
    offer_history_handler,
    refresh_status_handler,
    refresh_now_handler,
    refresh_run_handler,
    list_providers_handler,
)
"""The price-sheet handlers, in registration order."""
