"""A write the store cannot take (the database attached read-only, its folder or file not writable,
the disk full) is a 503 problem, not a 500, and makes ``/health/ready`` false until the store takes
writes again: a later successful write (:class:`WriteRecovery`) or a committed readiness trial write
forgets the failure.

The failure is recognised from the backend's error (``service.db.store_errors``): DuckDB's I/O and
permission errors, its "read-only mode" refusal and the fatal error that invalidates a database after a
failed write-ahead-log write; PostgreSQL's connection and resource errors, a read-only transaction, a
refused privilege.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

from litestar import Request, Response
from litestar.enums import ScopeType
from litestar.status_codes import HTTP_503_SERVICE_UNAVAILABLE
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.db.store_errors import is_store_invalidated, is_store_unavailable
from service.problems import exception_handlers, problem_response

__all__ = ["FAILURE_HOLD_S", "WriteFailures", "WriteRecovery", "store_error_handler"]

FAILURE_HOLD_S: Final = 60.0
"""How long a failed write is remembered at most, unless a write goes through first; while it is,
``/health/ready`` proves writability with a committed trial write instead of a rolled-back one."""

_log = logging.getLogger("gpuplan.store")


class WriteFailures:
    """The last write failure of one app, for readiness (thread-safe: handlers run in worker threads)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: tuple[float, str] | None = None
        self._invalidated: str | None = None

    def record(self, reason: str) -> None:
        with self._lock:
            self._last = (self._clock(), reason)

    def clear(self, reason: str | None = None) -> None:
        """Forget the failure (only if it is still ``reason``, when given: a newer one stays)."""
        with self._lock:
            if reason is None or (self._last is not None and self._last[1] == reason):
                self._last = None

    def mark_invalidated(self, reason: str) -> None:
        """Remember that the store cannot recover in this process (liveness fails from now on)."""
        with self._lock:
            self._invalidated = reason

    @property
    def invalidated(self) -> str | None:
        """Why the store cannot recover in this process, if it cannot."""
        return self._invalidated

    def recent(self) -> str | None:
        """The reason of a failure within the last :data:`FAILURE_HOLD_S` seconds, if any."""
        with self._lock:
            if self._last is None or self._clock() - self._last[0] > FAILURE_HOLD_S:
                return None
            return self._last[1]


def store_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """Store errors: a 503 when the store cannot be written, else the usual logged 500."""
    if not is_store_unavailable(exc):
        return exception_handlers[Exception](request, exc)  # the logged 500 of any other error
    reason = f"{type(exc).__name__}: {exc}"
    request.app.state.write_failures.record(reason)
    if is_store_invalidated(exc):
        request.app.state.write_failures.mark_invalidated(reason)
    _log.error("write refused by the store on %s %s: %s", request.method, request.url.path, reason)
    response = problem_response(
        request,
        HTTP_503_SERVICE_UNAVAILABLE,
        "Store unavailable",
        "the database cannot be written right now (read-only, not writable, full or unreachable); "
        "the operator has been told through the log and /health/ready",
    )
    response.headers["Retry-After"] = "30"
    return response


class WriteRecovery:
    """ASGI middleware: a 2xx answer to a POST of ``paths`` (the operations that write the store)
    forgets the recorded write failure, since that write went through."""

    def __init__(self, app: ASGIApp, paths: Sequence[str]) -> None:
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == ScopeType.HTTP and scope["method"] == "POST" and scope["path"] in self.paths
        ):
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:
                failures: WriteFailures = scope["app"].state.write_failures
                failures.clear()
            await send(message)

        await self.app(scope, receive, sending)
