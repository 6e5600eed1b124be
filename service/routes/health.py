"""GET /health: liveness plus the state of the database and the scheduler."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import duckdb
from apscheduler.schedulers.base import BaseScheduler
from litestar import Response, get
from litestar.datastructures import State

from service.routes.common import store_from
from service.schemas import DbHealth, Health, SchedulerHealth

__all__ = ["health_handler", "package_version"]


def package_version() -> str:
    try:
        return version("gpuplan")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _db_health(state: State) -> DbHealth:
    store = store_from(state)
    try:
        with store.cursor() as cur:
            row = cur.execute(
                "SELECT (SELECT max(version) FROM schema_version), (SELECT count(*) FROM gpus), "
                "(SELECT count(*) FROM current_offers), (SELECT count(*) FROM price_sheets)"
            ).fetchone()
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
    assert row is not None
    return DbHealth(
        ok=True,
        path=store.path,
        schema_version=int(row[0]),
        gpus=int(row[1]),
        current_offers=int(row[2]),
        price_sheet_versions=int(row[3]),
    )


@get("/health", operation_id="health", tags=["service"], sync_to_thread=False)
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
