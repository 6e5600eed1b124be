"""The Litestar application factory: ``create_app(settings)``.

Run it with ``gpuplan serve`` or ``uvicorn --factory service.app:create_app``. Each feature package
contributes its routes (``ROUTES``); the factory wires them under ``/v1``, injects what handlers need
(``store``, ``settings``, ``plans``, ``refresher``, ``scheduler``: Litestar ``Provide`` dependencies,
declared by handlers as ``NamedDependency``), maps errors to problem+json and completes the OpenAPI
document with the catalog's known values.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from litestar import Litestar, Request, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi.config import OpenAPIConfig

from service.benchmarks.routes import ROUTES as BENCHMARK_ROUTES
from service.buy_vs_rent.routes import ROUTES as BUY_VS_RENT_ROUTES
from service.buy_vs_rent.schemas import BuyVsRentRequest
from service.catalog.gpu_names import gpu_spellings
from service.catalog.routes import ROUTES as CATALOG_ROUTES
from service.db.routes import ROUTES as DB_ROUTES
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.estimates.routes import ROUTES as ESTIMATE_ROUTES
from service.estimates.schemas import MemoryRequest, ThroughputRequest
from service.health import health_handler, package_version
from service.http import ReadableResponse, check_request, require_admin
from service.launch.routes import ROUTES as LAUNCH_ROUTES
from service.measurements.routes import ROUTES as MEASUREMENT_ROUTES
from service.openapi import (
    CatalogDocument,
    docs_assets_router,
    docs_pages,
    document_admin_security,
    document_body_enum,
    document_known_values,
    document_raw_bodies,
    document_tagged_union,
    forbid_unknown_body_fields,
    keep_component_names,
    restore_body_zero_bounds,
)
from service.ops.wiring import (
    OPS_EXCEPTION_HANDLERS,
    OPS_ROUTES,
    cors_config,
    finish_app,
    ops_middleware,
    ops_state,
)
from service.plans.admission import PlanQueue, plan_rate_limit
from service.plans.pipeline import PlanService
from service.plans.rate_windows import RateWindows
from service.plans.retention import delete_expired_plans
from service.plans.routes import ROUTES as PLAN_ROUTES
from service.portfolios.logic import PortfolioService
from service.portfolios.routes import ROUTES as PORTFOLIO_ROUTES
from service.portfolios.schemas import PortfolioRequest
from service.price_sheets.batches import RefreshBatches
from service.price_sheets.refresh import Refresher
from service.price_sheets.retention import delete_superseded_versions
from service.price_sheets.routes import ROUTES as PRICE_SHEET_ROUTES
from service.price_sheets.sources import SourceConfig, load_sources
from service.problems import exception_handlers
from service.server.limits import body_deadline
from service.settings import Settings
from service.web.pages import PAGES
from solver import PLAN_REQUEST_KINDS, list_models

__all__ = ["create_app"]

_DESCRIPTION: Final = (
    "Which GPUs, how many, and from where finish a deep-learning workload at the lowest cost — and why. "
    "Errors are RFC 9457 problem+json; bad input is a 400 that names the field."
)


_SCHEMA_PATH: Final = "/schema"
_PUBLISHED_NAMES: Final = {"plans_schemas_OfferRef": "plan_schemas_OfferRef"}
_UPLOAD_BODIES: Final = {
    "/v1/price-sheets": "The sheet, in the format the format query names (CSV text or a JSON document)",
    "/v1/profiles": "Serving profiles, in the format the format query names (CSV text or a JSON document)",
}
"""Component names Litestar now derives from the module path, and the names clients already know."""


class _Scheduling:
    """The refresh scheduler of one app: made and started by the lifespan, one per run of it; none at
    all when ``enabled`` is false (``GPUPLAN_SCHEDULER=off``: replicas of one database leave refreshes
    to a single ``gpuplan prices refresh`` job)."""

    def __init__(
        self, refresher: Refresher, sources: list[SourceConfig], *, enabled: bool, retention: Settings
    ) -> None:
        self.retention_days = retention.plan_retention_days
        self.sheet_retention = (retention.sheet_retention_days, retention.sheet_retention_keep)
        """Superseded price-sheet versions: (days kept, newest kept per source and kind); 0 days: all."""
        self.refresher = refresher
        self.sources = sources
        self.enabled = enabled
        self.scheduler: AsyncIOScheduler | None = None

    def start(self) -> None:
        if not self.enabled:
            return
        # Misfire grace in minutes, not APScheduler's 1 s default (which drops a run whenever the event
        # loop was busy for a second), and never two runs of one source at once.
        scheduler = AsyncIOScheduler(
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}
        )
        # Each source refreshes at boot, then every interval_seconds; with replicas on one database,
        # one of them each time (Refresher.run_scheduled).
        for source in self.sources:
            scheduler.add_job(
                self.refresher.run_scheduled,
                "interval",
                seconds=source.interval_seconds,
                args=[source.name],
                id=f"refresh:{source.name}",
                name=f"refresh {source.name}",
                replace_existing=True,
                next_run_time=datetime.now(UTC),
            )
        if self.retention_days > 0:
            store, days = self.refresher.store, self.retention_days
            scheduler.add_job(delete_expired_plans, "interval", hours=1, args=[store, days], id="plan-retention",
                              name="delete expired plans", replace_existing=True, next_run_time=datetime.now(UTC))  # fmt: skip
        if self.sheet_retention[0] > 0:
            store, (days, keep) = self.refresher.store, self.sheet_retention
            scheduler.add_job(delete_superseded_versions, "interval", hours=1, args=[store, days, keep], id="sheet-retention",
                              name="delete superseded price-sheet versions", replace_existing=True, next_run_time=datetime.now(UTC))  # fmt: skip
        scheduler.start()
        self.scheduler = scheduler

    def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)


def _provide(get: Callable[[], Any]) -> Provide:
    """A dependency that hands every handler the same object (``get`` runs on the event loop)."""
    return Provide(get, sync_to_thread=False)


def _v1_routes() -> Router:
    return Router(
        path="/v1",
        route_handlers=[
            *CATALOG_ROUTES,
            *ESTIMATE_ROUTES,
            *PLAN_ROUTES,
            *PORTFOLIO_ROUTES,
            *LAUNCH_ROUTES,
            *BENCHMARK_ROUTES,
            *PRICE_SHEET_ROUTES,
            *BUY_VS_RENT_ROUTES,
            *DB_ROUTES,
            *MEASUREMENT_ROUTES,
        ],
    )


def _document_catalog(app: Litestar, snapshot: CatalogSnapshot) -> None:
    """The catalog's accepted values in the OpenAPI document: written at the start, and again before
    the document is served after a write changed the catalog (``CatalogDocument``)."""
    document_known_values(app, snapshot)
    document_body_enum(app, "MemoryRequest", "gpu", gpu_spellings(snapshot))
    document_body_enum(app, "ThroughputRequest", "gpu", gpu_spellings(snapshot, unique=True))
    document_body_enum(app, "BuyVsRentRequest", "gpu", gpu_spellings(snapshot, unique=True))


def _document(app: Litestar, store: Store) -> None:
    """What the generated OpenAPI document cannot know by itself: the catalog's accepted values."""
    _document_catalog(app, store.snapshot)
    bodies: list[type[msgspec.Struct]] = [
        MemoryRequest,
        ThroughputRequest,
        *PLAN_REQUEST_KINDS,
        BuyVsRentRequest,
        PortfolioRequest,
    ]
    restore_body_zero_bounds(app, bodies)
    forbid_unknown_body_fields(app, bodies)
    document_tagged_union(app, "/v1/plans", "PlanRequest", PLAN_REQUEST_KINDS)
    document_body_enum(app, "ModelSpec", "name", {n for m in list_models() for n in (m.name, *m.aliases)})
    # Two classes are named OfferRef; the published names predate the feature packages.
    keep_component_names(app, _PUBLISHED_NAMES)
    document_admin_security(app, require_admin)
    document_raw_bodies(app, _UPLOAD_BODIES)


def _before_request(store: Store) -> Callable[[Request[Any, Any, Any]], Awaitable[None]]:
    """Every request's checks (``check_request``); before the OpenAPI document is served, its catalog
    values brought up to the current snapshot (made before ``_document`` writes the first ones)."""
    catalog_document = CatalogDocument(lambda: store.snapshot, _document_catalog, store.snapshot.generation)

    async def before_request(request: Request[Any, Any, Any]) -> None:
        if request.scope["path"].startswith(_SCHEMA_PATH):
            catalog_document.bring_up_to_date(request.app)
        await check_request(request)

    return before_request


def _openapi_config() -> OpenAPIConfig:
    """The OpenAPI document at /schema, with Swagger at /schema/ and Scalar at /schema/scalar."""
    return OpenAPIConfig(
        title="gpuplan",
        version=package_version(),
        description=_DESCRIPTION,
        path=_SCHEMA_PATH,
        render_plugins=docs_pages(),
    )


def _shared_windows(store: Store) -> RateWindows | None:
    """Where replicas count the plan rate together: the PostgreSQL database; a DuckDB process alone."""
    return RateWindows(store) if store.backend_name == "postgresql" else None


def _plan_service(store: Store, config: Settings) -> PlanService:
    return PlanService(
        store, time_limit_s=config.plan_time_limit_s, price_max_age_hours=config.price_max_age_hours
    )


def create_app(settings: Settings | None = None, store: Store | None = None) -> Litestar:
    """Build the app on ``store``, or on the database ``settings`` name (closed when the app shuts down)."""
    config = settings or Settings.from_env()
    owned = store is None
    # Opened here, not in the lifespan, so the OpenAPI schema can list the catalog's known values.
    opened = Store.open(config.db_path) if store is None else store
    opened.watch_catalog()  # other replicas' writes (PostgreSQL); nothing on DuckDB
    sources = load_sources(config.sources_file) if config.sources_file else []
    refresher = Refresher(opened, sources, move_factor=config.price_move_factor)
    scheduling = _Scheduling(refresher, sources, enabled=config.run_scheduler, retention=config)
    plans = _plan_service(opened, config)
    portfolios = PortfolioService(opened, plans)
    plan_queue = PlanQueue(waiting=config.plan_queue)
    refresh_batches = RefreshBatches(refresher)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        opened.keep_warm()
        scheduling.start()
        try:
            yield
        finally:
            scheduling.stop()
            refresh_batches.close()
            if owned:
                opened.close()

    app = Litestar(
        route_handlers=[health_handler, *OPS_ROUTES, _v1_routes(), docs_assets_router(), *PAGES],
        lifespan=[lifespan],
        dependencies={
            "store": _provide(lambda: opened),
            "settings": _provide(lambda: config),
            "plans": _provide(lambda: plans),
            "portfolios": _provide(lambda: portfolios),
            "refresher": _provide(lambda: refresher),
            "scheduler": _provide(lambda: scheduling.scheduler),
            "plan_queue": _provide(lambda: plan_queue),
            "refresh_batches": _provide(lambda: refresh_batches),
        },
        state=State(
            {"settings": config, **ops_state(opened)}
        ),  # for the admin guard, which runs before dependencies
        before_request=_before_request(opened),
        response_class=ReadableResponse,
        exception_handlers={**exception_handlers, **OPS_EXCEPTION_HANDLERS},
        middleware=[
            *ops_middleware(),
            *plan_rate_limit(config.plan_rate, _shared_windows(opened)),
            body_deadline(config.request_timeout_s),
        ],
        cors_config=cors_config(config),
        openapi_config=_openapi_config(),
        debug=False,
        logging_config=None,  # the process configures logging (gpuplan serve, uvicorn), not the app
    )
    _document(app, opened)
    return finish_app(app)
