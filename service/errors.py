"""Errors of the service package, each mapped once to an RFC 9457 problem (see ``service.problems``).

ServiceError
 ├── InvalidParameter     400: a query/path/body value is wrong; ``field`` names it
 ├── Unauthorized         401: a write without the right bearer token
 ├── Forbidden            403: writes are disabled (no admin token configured)
 ├── NotFound             404: no such resource
 ├── ImportSuperseded     409: a newer version of the source was stored while a sheet was being imported
 ├── RequestTimeout       408: the request body did not arrive in time
 ├── FetchError           502: a configured price-sheet source cannot be fetched (the refresh records it)
 ├── StoreUnavailable     503: the database cannot be opened or used right now
 │    └── StoreHeld       503: another process (a running server) holds the database file
 └── Overloaded           503: at capacity (the plan queue is full); ``Retry-After`` says when to retry
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "FetchError",
    "Forbidden",
    "ImportSuperseded",
    "InvalidParameter",
    "NotFound",
    "Overloaded",
    "RequestTimeout",
    "ServiceError",
    "StoreHeld",
    "StoreUnavailable",
    "Unauthorized",
]


class ServiceError(Exception):
    """Base of every error the service turns into a problem response."""

    status_code: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"

    def __init__(self, detail: str, *, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


class InvalidParameter(ServiceError):
    """A request value is invalid; ``field`` is its name (query parameter or JSON path)."""

    status_code = 400
    title = "Invalid request"

    def __init__(self, field: str, message: str, **extra: Any) -> None:
        super().__init__(
            f"{field}: {message}", field=field, errors=[{"field": field, "message": message}], **extra
        )
        self.field = field
        self.message = message


class Unauthorized(ServiceError):
    """The request lacks the admin bearer token, or carries a wrong one."""

    status_code = 401
    title = "Unauthorized"


class Forbidden(ServiceError):
    """Writes are refused: the operator configured no admin token."""

    status_code = 403
    title = "Forbidden"


class NotFound(ServiceError):
    """The addressed resource does not exist."""

    status_code = 404
    title = "Not found"


class ImportSuperseded(ServiceError):
    """Another version of the source was stored after this import started: storing this one would
    replace newer data with older (a slow upload whose client may be gone, or a racing refresh)."""

    status_code = 409
    title = "Conflict"


class FetchError(ServiceError):
    """A source could not be fetched (network, HTTP status, size limit, missing file)."""

    status_code = 502
    title = "Source unavailable"


class StoreUnavailable(ServiceError):
    """The DuckDB store cannot be opened (e.g. another process holds its file lock)."""

    status_code = 503
    title = "Store unavailable"


class StoreHeld(StoreUnavailable):
    """Another process holds the DuckDB file (one read-write process per file): usually a running
    ``gpuplan serve``, which the CLI asks instead (``--url``, or the server at GPUPLAN_HOST:GPUPLAN_PORT).
    ``pid`` is the holder's process id when DuckDB names it."""

    def __init__(self, detail: str, *, pid: int | None = None) -> None:
        super().__init__(detail)
        self.pid = pid


class Overloaded(ServiceError):
    """The service is at capacity (e.g. every plan slot busy and the queue full): retry after a while."""

    status_code = 503
    title = "Service busy"


class RequestTimeout(ServiceError):
    """The client did not send the whole request body in time (``GPUPLAN_REQUEST_TIMEOUT_S``)."""

    status_code = 408
    title = "Request timeout"
