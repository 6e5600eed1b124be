"""What the app factory adds for operations, in one place: routes, middleware, CORS, state, error
handlers, and the request-id wrapper around the whole ASGI handler."""

from __future__ import annotations

from typing import Any, Final

from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.middleware import DefineMiddleware
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, Reference
from litestar.types import ControllerRouterHandler, ExceptionHandlersMap, Middleware

from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.ops.caching import ImmutableCacheMiddleware
from service.ops.head_requests import HeadAsGet
from service.ops.health import live_handler, ready_handler
from service.ops.metrics import MetricsController, catalog_registry, prometheus_config
from service.ops.page_headers import PageHeadersMiddleware
from service.ops.request_id import HEADER, RequestIdMiddleware
from service.ops.writes import WriteFailures, WriteRecovery, store_error_handler
from service.problems import PROBLEM_JSON
from service.server.limits import HeadSizeLimit
from service.settings import Settings

__all__ = [
    "OPS_EXCEPTION_HANDLERS",
    "OPS_ROUTES",
    "WRITING_PATHS",
    "cors_config",
    "finish_app",
    "ops_middleware",
    "ops_state",
]

OPS_ROUTES: Final[tuple[ControllerRouterHandler, ...]] = (live_handler, ready_handler, MetricsController)
OPS_EXCEPTION_HANDLERS: Final[ExceptionHandlersMap] = dict.fromkeys(STORE_ERRORS, store_error_handler)
WRITING_PATHS: Final = ("/v1/plans", "/v1/price-sheets", "/v1/price-sheets/refresh", "/v1/profiles")
"""The POST operations that write the store, so may answer 503 (``service.ops.writes``)."""


def ops_middleware() -> list[Middleware]:
    """Request metrics outermost (they time everything), then the immutable-response cache, then what
    forgets a write failure once a write goes through, then the security headers."""
    return [
        prometheus_config().middleware,
        ImmutableCacheMiddleware,
        DefineMiddleware(WriteRecovery, paths=WRITING_PATHS),
        PageHeadersMiddleware,
    ]


def cors_config(settings: Settings) -> CORSConfig | None:
    """CORS for ``GPUPLAN_CORS_ORIGINS``; ``None`` (no CORS headers at all) when none are set."""
    if not settings.cors_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "If-None-Match", HEADER],
        expose_headers=["ETag", "Location", "Retry-After", HEADER],
        max_age=600,
    )


def ops_state(store: Store) -> dict[str, Any]:
    """App state the ops handlers read: the write-failure record and the store's metrics registry."""
    return {"write_failures": WriteFailures(), "metrics_registry": catalog_registry(store)}


def finish_app(app: Litestar) -> Litestar:
    """Wrap the whole ASGI handler (routing errors included), as Litestar wraps its CORS middleware;
    document the 503 of the operations that write and the 408 of those that take a body."""
    app.asgi_handler = RequestIdMiddleware(HeadSizeLimit(HeadAsGet(app.asgi_handler)))
    _document_store_unavailable(app)
    _document_request_timeout(app)
    return app


def _problem_response(description: str) -> OpenAPIResponse:
    return OpenAPIResponse(
        description=description,
        content={PROBLEM_JSON: OpenAPIMediaType(schema=Reference(ref="#/components/schemas/Problem"))},
    )


def _document_store_unavailable(app: Litestar) -> None:
    paths = app.openapi_schema.paths or {}
    for path in WRITING_PATHS:
        operation = paths[path].post if path in paths else None
        if operation is not None and operation.responses is not None:
            operation.responses.setdefault(
                "503",
                _problem_response("The database cannot be written right now (read-only, not writable, full)"),
            )


def _document_request_timeout(app: Litestar) -> None:
    """Every operation with a request body may answer 408 (``service.server.limits.body_deadline``)."""
    for item in (app.openapi_schema.paths or {}).values():
        for operation in (item.post, item.put, item.patch):
            if (
                operation is not None
                and operation.request_body is not None
                and operation.responses is not None
            ):
                operation.responses.setdefault(
                    "408",
                    _problem_response(
                        "The request body did not arrive in full within GPUPLAN_REQUEST_TIMEOUT_S"
                    ),
                )
