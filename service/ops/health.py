"""``GET /health/live`` (the process answers) and ``GET /health/ready`` (it can do its work: the
database reads and takes writes, the catalog snapshot is loaded, the refresh scheduler runs when
sources are configured and ``GPUPLAN_SCHEDULER`` is on). Orchestrators restart on the first and route
traffic on the second; ``GET /health`` (``service.health``) stays the detailed report."""

from __future__ import annotations

import os
import uuid
from typing import Any, Final, Literal

import msgspec
from apscheduler.schedulers.base import BaseScheduler
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.http import ReadableResponse, is_admin
from service.ops.writes import WriteFailures
from service.problems import problem_response, problem_responses
from service.settings import Settings

__all__ = ["Live", "Ready", "ReadyCheck", "live_handler", "readiness", "ready_handler"]


class Live(msgspec.Struct, kw_only=True):
    status: Literal["ok"]


class ReadyCheck(msgspec.Struct, kw_only=True):
    name: Literal["db_readable", "db_writable", "snapshot_loaded", "scheduler_running"]
    ok: bool
    detail: str | None = None


class Ready(msgspec.Struct, kw_only=True):
    status: Literal["ready", "not_ready"]
    checks: list[ReadyCheck]

    def public(self) -> Ready:
        """What anyone may read: the database checks' details (driver errors, paths) withheld."""
        return Ready(
            status=self.status,
            checks=[
                msgspec.structs.replace(c, detail=_WITHHELD)
                if c.detail is not None and c.name.startswith("db_")
                else c
                for c in self.checks
            ],
        )


_WITHHELD: Final = "failed (the reason is shown with the admin token)"


@get(
    "/health/live",
    operation_id="healthLive",
    tags=["service"],
    sync_to_thread=False,
    responses=problem_responses(503),
)
def live_handler(request: Request[Any, Any, Any]) -> Response[Any]:
    """200 while the process serves requests; 503 once the embedded database was invalidated by a
    fatal error, which no retry in this process undoes: an orchestrator restarts the process, and the
    new one reopens the database (replaying its write-ahead log). Nothing else is consulted."""
    invalidated = request.app.state.write_failures.invalidated
    if invalidated is None:
        return ReadableResponse(Live(status="ok"))
    detail = "the database was invalidated by a fatal error; restart the process to reopen it"
    if is_admin(request):
        detail += f" ({invalidated})"
    return problem_response(request, 503, "Restart required", detail)


def _readable(store: Store) -> str | None:
    try:
        with store.cursor() as cur:
            cur.execute("SELECT max(version) FROM schema_version").fetchone()
    except STORE_ERRORS as exc:
        return str(exc)
    return None


def _probe(store: Store, *, commit: bool) -> str | None:
    """A trial write: ``CREATE TABLE`` rolled back (it detects a read-only attachment without changing
    anything), or, to tell that writes go through again after one failed, created, dropped and
    committed (the commit reaches the disk or the server)."""
    name = f"ready_probe_{uuid.uuid4().hex}"
    try:
        with store.cursor() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                cur.execute(f"CREATE TABLE {name} (i INTEGER)")
                if commit:
                    cur.execute(f"DROP TABLE {name}")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT" if commit else "ROLLBACK")
    except STORE_ERRORS as exc:
        return str(exc)
    return None


def _writable(store: Store, failures: WriteFailures) -> str | None:
    """A file or folder the process may not write, or a refused trial write (:func:`_probe`). After a
    failed write the probe commits: when it goes through the failure is forgotten, so readiness
    follows the store's current state (a successful write forgets it too, ``WriteRecovery``)."""
    if failures.invalidated is not None:
        return f"the database was invalidated and this process cannot reopen it: {failures.invalidated}"
    recent = failures.recent()
    if store.file is not None:
        for target in (store.file, store.file.parent):
            if target.exists() and not os.access(target, os.W_OK):
                return f"{target} is not writable by this process"
    refused = _probe(store, commit=recent is not None)
    if refused is not None:
        return refused if recent is None else f"a write failed recently: {recent}; a trial write: {refused}"
    if recent is not None:
        failures.clear(recent)
    return None


def readiness(
    store: Store, failures: WriteFailures, scheduler: BaseScheduler | None, settings: Settings
) -> Ready:
    """Every readiness check, in order; ready when all pass."""
    snapshot = store.snapshot
    scheduler_needed = bool(settings.sources_file) and settings.run_scheduler
    results: list[tuple[Any, str | None]] = [
        ("db_readable", _readable(store)),
        ("db_writable", _writable(store, failures)),
        ("snapshot_loaded", None if snapshot.gpus else "the catalog snapshot has no GPUs"),
    ]
    if scheduler_needed:
        running = scheduler is not None and scheduler.running
        results.append(
            ("scheduler_running", None if running else "sources are configured but no scheduler runs")
        )
    checks = [ReadyCheck(name=name, ok=detail is None, detail=detail) for name, detail in results]
    return Ready(status="ready" if all(c.ok for c in checks) else "not_ready", checks=checks)


_NOT_READY = ResponseSpec(
    data_container=Ready, description="A check failed; `checks` says which", generate_examples=False
)


@get(
    "/health/ready",
    operation_id="healthReady",
    tags=["service"],
    sync_to_thread=True,
    responses={503: _NOT_READY},
)
def ready_handler(
    request: Request[Any, Any, Any],
    store: NamedDependency[Store],
    scheduler: NamedDependency[BaseScheduler | None],
    settings: NamedDependency[Settings],
) -> Response[Ready]:
    """200 when the service can do its work, 503 (naming the failed checks) when it cannot; why a
    database check failed (driver errors, paths) is told with the admin token only."""
    body = readiness(store, request.app.state.write_failures, scheduler, settings)
    if not is_admin(request):
        body = body.public()
    return ReadableResponse(body, status_code=200 if body.status == "ready" else 503)
