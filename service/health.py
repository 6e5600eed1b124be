"""GET /health: liveness plus the state of the database and the scheduler."""

from __future__ import annotations

import functools
import os
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final, Literal

import msgspec
from apscheduler.schedulers.base import BaseScheduler
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from service.db.backend import BackendName
from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.http import ReadableResponse, is_admin
from service.problems import problem_responses

__all__ = ["DbHealth", "Health", "SchedulerHealth", "health_handler", "package_version"]


class DbHealth(msgspec.Struct, kw_only=True):
    ok: bool
    backend: BackendName
    """``duckdb`` (the embedded file) or ``postgresql`` (a shared database)."""
    path: str
    """The DuckDB file, or the PostgreSQL URL without its password (with the admin token only)."""
    schema_version: int
    gpus: int
    current_offers: int
    price_sheet_versions: int
    error: str | None = None
    """Why the database does not answer (the driver's own words with the admin token only)."""

    def public(self) -> DbHealth:
        """What anyone may read: no location, no driver error (they name hosts, users, paths)."""
        error = None if self.error is None else "the database does not answer"
        return msgspec.structs.replace(self, path=HIDDEN, error=error)


HIDDEN: Final = "(shown with the admin token)"


class SchedulerHealth(msgspec.Struct, kw_only=True):
    running: bool
    jobs: list[str]


class Health(msgspec.Struct, kw_only=True):
    status: Literal["ok", "unavailable"]
    version: str
    pid: int
    """The server's process id: DuckDB names the process holding a database file by it, so a CLI
    refused the file can tell that this server holds it and ask it instead."""
    db: DbHealth
    scheduler: SchedulerHealth


_UNAVAILABLE = ResponseSpec(
    data_container=Health, description="The database does not answer", generate_examples=False
)


@functools.cache
def package_version() -> str:
    """The installed gpuplan's version, read once: the code running is the code imported at start (an
    upgrade in place takes a restart), and reading package metadata costs ~2 ms, which every
    ``/health`` probe paid before."""
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
    request: Request[Any, Any, Any],
    store: NamedDependency[Store],
    scheduler: NamedDependency[BaseScheduler | None],
) -> Response[Health]:
    """200 when the database answers; 503 otherwise. Also reports the scheduler and its jobs. The
    database's location and driver errors are shown with the admin token only."""
    db = _db_health(store)
    db = db if is_admin(request) else db.public()
    body = Health(
        status="ok" if db.ok else "unavailable",
        version=package_version(),
        pid=os.getpid(),
        db=db,
        scheduler=SchedulerHealth(
            running=bool(scheduler is not None and scheduler.running),
            jobs=[job.id for job in scheduler.get_jobs()] if scheduler is not None else [],
        ),
    )
    return ReadableResponse(body, status_code=200 if db.ok else 503)
