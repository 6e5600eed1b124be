"""Helpers shared by the route handlers: store access and strict query strings."""

from __future__ import annotations

from typing import Any

from litestar import HttpMethod, Request, Response, route
from litestar.datastructures import State
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter

from service.db.store import Store
from service.errors import InvalidParameter
from service.schemas import Problem

__all__ = ["allow_header_handler", "problem_responses", "reject_unknown_query_params", "store_from"]

_PROBLEM_DESCRIPTIONS = {
    400: "Invalid input; `field` names the parameter",
    401: "Missing or wrong admin bearer token",
    403: "Writes are disabled (no admin token configured)",
    413: "The request body is too large",
    404: "No such resource",
    422: "The request is valid but cannot be satisfied; the body says why",
    503: "The database is unavailable",
}


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problem+json responses a handler can give."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=_PROBLEM_DESCRIPTIONS[status],
            media_type="application/problem+json",
            generate_examples=False,
        )
        for status in statuses
    }


def store_from(state: State) -> Store:
    """The store the lifespan opened."""
    store = state.store
    assert isinstance(store, Store)
    return store


def _declared_query_names(request: Request[Any, Any, Any]) -> set[str]:
    handler = request.route_handler
    names: set[str] = set()
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if isinstance(kwarg, QueryParameter):
            names.add(kwarg.name or name)
    return names


async def reject_unknown_query_params(request: Request[Any, Any, Any]) -> None:
    """A misspelt filter (``?gpus=H100``) is a 400, not a silently unfiltered list."""
    if not request.query_params:
        return
    allowed = _declared_query_names(request)
    for key in request.query_params:
        if key not in allowed:
            expected = ", ".join(sorted(allowed)) or "none"
            raise InvalidParameter(
                key or "query", f"unknown query parameter {key!r}; this endpoint accepts: {expected}"
            )


def allow_header_handler(path: str) -> HTTPRouteHandler:
    """An explicit OPTIONS handler for a static ``path`` served by several handlers (GET and POST).

    Litestar 2.25 builds its automatic OPTIONS answer when a path's first handler is registered and does
    not update it when a second handler joins that path, so ``Allow`` would list only the first method.
    Registered before the others, this handler answers with every method the app routes for the path.
    """

    def options(request: Request[Any, Any, Any]) -> Response[None]:
        methods = request.app.route_handler_method_map.get(request.url.path, {})
        return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods))})

    return route(path, http_method=[HttpMethod.OPTIONS], include_in_schema=False, sync_to_thread=False)(
        options
    )
