"""GET /health: liveness plus the state of the database and the scheduler."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import duckdb
from apscheduler.schedulers.base import BaseScheduler
from litestar import Response, get
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec

from service.routes.common import problem_responses, store_from
from service.schemas import DbHealth, Health, SchedulerHealth

__all__ = ["health_handler", "package_version"]

_UNAVAILABLE = ResponseSpec(
    data_container=Health, description="The database does not answer", generate_examples=False
)


def package_version() -> str:
    try:
        return version("gpuplan")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _db_health(state: State) -> DbHealth:
    """One trivial query proves the database answers; the counts come from the catalog snapshot."""
    store = store_from(state)
    snapshot = store.snapshot
    try:
        with store.cursor() as cur:
            row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
    except duckdb.Error as exc:
        return DbHealth(
            ok=False,
            path=store.path,
            schema_version=0,
            gpus=0,
            current_offers=0,
            price_sheet_versions=0,
            error=str(exc),
        )
    return DbHealth(
        ok=True,
        path=store.path,
        schema_version=int(row[0]) if row and row[0] is not None else 0,
        gpus=len(snapshot.gpus),
        current_offers=snapshot.current_offer_count,
        price_sheet_versions=snapshot.price_sheet_versions,
    )


@get(
    "/health",
    operation_id="health",
    tags=["service"],
    sync_to_thread=False,
    responses={**problem_responses(400), 503: _UNAVAILABLE},
)
def health_handler(state: State) -> Response[Health]:
    """200 when the database answers; 503 otherwise. Also reports the scheduler and its jobs."""
    db = _db_health(state)
    scheduler = state.get("scheduler")
    jobs = [job.id for job in scheduler.get_jobs()] if isinstance(scheduler, BaseScheduler) else []
    running = bool(isinstance(scheduler, BaseScheduler) and scheduler.running)
    body = Health(
        status="ok" if db.ok else "unavailable",
        version=package_version(),
        db=db,
        scheduler=SchedulerHealth(running=running, jobs=jobs),
    )
    return Response(body, status_code=200 if db.ok else 503)
