"""GET /health: liveness plus the state of the database and the scheduler."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Literal

import msgspec
from apscheduler.schedulers.base import BaseScheduler
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from service.db.backend import BackendName
from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.http import ReadableResponse
from service.problems import problem_responses

__all__ = ["DbHealth", "Health", "SchedulerHealth", "health_handler", "package_version"]


class DbHealth(msgspec.Struct, kw_only=True):
    ok: bool
    backend: BackendName
    """``duckdb`` (the embedded file) or ``postgresql`` (a shared database)."""
    path: str
    """The DuckDB file, or the PostgreSQL URL without its password."""
    schema_version: int
    gpus: int
    current_offers: int
    price_sheet_versions: int
    error: str | None = None


class SchedulerHealth(msgspec.Struct, kw_only=True):
    running: bool
    jobs: list[str]


class Health(msgspec.Struct, kw_only=True):
    status: Literal["ok", "unavailable"]
    version: str
    db: DbHealth
    scheduler: SchedulerHealth


_UNAVAILABLE = ResponseSpec(
    data_container=Health, description="The database does not answer", generate_examples=False
)


def package_version() -> str:
    try:
        return version("gpuplan")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _db_health(store: Store) -> DbHealth:
    """One trivial query proves the database answers; the counts come from the catalog snapshot."""
    snapshot = store.snapshot
    try:
        with store.cursor() as cur:
            row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
    except STORE_ERRORS as exc:
        return DbHealth(
            ok=False,
            backend=store.backend_name,
            path=store.path,
            schema_version=0,
            gpus=0,
            current_offers=0,
            price_sheet_versions=0,
            error=str(exc),
        )
    return DbHealth(
        ok=True,
        backend=store.backend_name,
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
def health_handler(
    store: NamedDependency[Store], scheduler: NamedDependency[BaseScheduler | None]
) -> Response[Health]:
    """200 when the database answers; 503 otherwise. Also reports the scheduler and its jobs."""
    db = _db_health(store)
    body = Health(
        status="ok" if db.ok else "unavailable",
        version=package_version(),
        db=db,
        scheduler=SchedulerHealth(
            running=bool(scheduler is not None and scheduler.running),
            jobs=[job.id for job in scheduler.get_jobs()] if scheduler is not None else [],
        ),
    )
    return ReadableResponse(body, status_code=200 if db.ok else 503)
