"""A write the store cannot take (the database attached read-only, its folder or file not writable,
the disk full) is a 503 problem, not a 500, and makes ``/health/ready`` false for a while.

The failure is recognised from the backend's error (``service.db.store_errors``): DuckDB's I/O and
permission errors, its "read-only mode" refusal and the fatal error that invalidates a database after a
failed write-ahead-log write; PostgreSQL's connection and resource errors, a read-only transaction, a
refused privilege.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final

from litestar import Request, Response
from litestar.status_codes import HTTP_503_SERVICE_UNAVAILABLE

from service.db.store_errors import is_store_unavailable
from service.problems import exception_handlers, problem_response

__all__ = ["FAILURE_HOLD_S", "WriteFailures", "store_error_handler"]

FAILURE_HOLD_S: Final = 60.0
"""How long a failed write keeps ``/health/ready`` false (then the readiness probe decides alone)."""

_log = logging.getLogger("gpuplan.store")


class WriteFailures:
    """The last write failure of one app, for readiness (thread-safe: handlers run in worker threads)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: tuple[float, str] | None = None

    def record(self, reason: str) -> None:
        with self._lock:
            self._last = (self._clock(), reason)

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
