"""Helpers shared by the route handlers: store access and strict query strings."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter

from service.errors import InvalidParameter
from service.schemas import Problem
from service.store import Store

__all__ = ["problem_responses", "reject_unknown_query_params", "store_from"]

_PROBLEM_DESCRIPTIONS = {
    400: "Invalid input; `field` names the parameter",
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
            raise InvalidParameter(key, f"unknown query parameter; this endpoint accepts: {expected}")
