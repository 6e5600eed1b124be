"""The Litestar application factory: ``create_app(settings)``.

Run it with ``gpuplan serve`` or ``uvicorn --factory service.app:create_app``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from litestar import Litestar, Router
from litestar.datastructures import State
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin

from service.buy_vs_rent_schemas import BuyVsRentRequest
from service.db.store import Store
from service.estimates import MemoryRequest, ThroughputRequest
from service.openapi_values import (
    document_body_enum,
    document_known_values,
    gpu_spellings,
    restore_body_zero_bounds,
)
from service.plans import PlanService
from service.problems import exception_handlers
from service.refresh import Refresher, load_sources
from service.routes.buy_vs_rent import buy_vs_rent_handler
from service.routes.common import allow_header_handler, reject_unknown_query_params
from service.routes.estimates import memory_handler, throughput_handler
from service.routes.gpus import get_gpu_handler, list_gpus_handler
from service.routes.health import health_handler, package_version
from service.routes.offers import list_offers_handler
from service.routes.plans import create_plan_handler, get_plan_handler
from service.routes.price_sheets import (
    get_sheet_handler,
    list_sheets_handler,
    offer_history_handler,
    refresh_now_handler,
    refresh_status_handler,
    upload_sheet_handler,
)
from service.routes.profiles import (
    list_profiles_handler,
    list_serving_profiles_handler,
    upload_serving_profiles_handler,
)
from service.settings import Settings
from solver.models import list_models
from solver.plan_spec import PlanRequest

__all__ = ["create_app"]

_log = logging.getLogger("gpuplan.app")

_DESCRIPTION = (
    "Which GPUs, how many, and from where finish a deep-learning workload at the lowest cost — and why. "
    "Errors are RFC 9457 problem+json; bad input is a 400 that names the field."
)


def _scheduler() -> AsyncIOScheduler:
    # Misfire grace in minutes (not APScheduler's 1 s default) and no overlapping runs; see stack notes §4.
    return AsyncIOScheduler(job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300})


def create_app(settings: Settings | None = None, store: Store | None = None) -> Litestar:
    """Build the app on ``store``, or on the database ``settings`` name (closed when the app shuts down)."""
    config = settings or Settings.from_env()
    owned = store is None
    # Opened here, not in the lifespan, so the OpenAPI schema can list the catalog's known values.
    opened = Store.open(config.db_path) if store is None else store
    sources = load_sources(config.sources_file) if config.sources_file else []
    refresher = Refresher(opened, sources, move_factor=config.price_move_factor)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        scheduler = _scheduler()
        for source in sources:  # each source refreshes at boot, then every interval_seconds
            scheduler.add_job(
                refresher.run,
                "interval",
                seconds=source.interval_seconds,
                args=[source.name],
                id=f"refresh:{source.name}",
                name=f"refresh {source.name}",
                replace_existing=True,
                next_run_time=datetime.now(UTC),
            )
        scheduler.start()
        app.state.scheduler = scheduler
        try:
            yield
        finally:
            scheduler.shutdown(wait=False)
            if owned:
                opened.close()

    v1 = Router(
        path="/v1",
        route_handlers=[
            allow_header_handler("/price-sheets"),
            allow_header_handler("/price-sheets/refresh"),
            allow_header_handler("/profiles"),
            list_gpus_handler,
            get_gpu_handler,
            list_offers_handler,
            list_profiles_handler,
            upload_serving_profiles_handler,
            list_serving_profiles_handler,
            memory_handler,
            throughput_handler,
            create_plan_handler,
            get_plan_handler,
            list_sheets_handler,
            get_sheet_handler,
            upload_sheet_handler,
            offer_history_handler,
            refresh_status_handler,
            refresh_now_handler,
            buy_vs_rent_handler,
        ],
    )
    app = Litestar(
        route_handlers=[health_handler, v1],
        lifespan=[lifespan],
        state=State(
            {
                "store": opened,
                "settings": config,
                "refresher": refresher,
                "plan_service": PlanService(
                    opened,
                    time_limit_s=config.plan_time_limit_s,
                    price_max_age_hours=config.price_max_age_hours,
                ),
            }
        ),
        before_request=reject_unknown_query_params,
        exception_handlers=exception_handlers,
        openapi_config=OpenAPIConfig(
            title="gpuplan",
            version=package_version(),
            description=_DESCRIPTION,
            path="/schema",
            render_plugins=[SwaggerRenderPlugin(path="/"), ScalarRenderPlugin(path="/scalar")],
        ),
        debug=False,
        logging_config=None,  # the process configures logging (gpuplan serve, uvicorn), not the app
    )
    document_known_values(app, opened.snapshot)
    restore_body_zero_bounds(app, [MemoryRequest, ThroughputRequest, PlanRequest, BuyVsRentRequest])
    document_body_enum(app, "ModelSpec", "name", {n for m in list_models() for n in (m.name, *m.aliases)})
    document_body_enum(app, "MemoryRequest", "gpu", gpu_spellings(opened.snapshot))
    document_body_enum(app, "ThroughputRequest", "gpu", gpu_spellings(opened.snapshot, unique=True))
    document_body_enum(app, "BuyVsRentRequest", "gpu", gpu_spellings(opened.snapshot, unique=True))
    return app
