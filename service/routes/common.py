"""Helpers shared by the route handlers: store access and strict query strings."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.params import QueryParameter

from service.errors import InvalidParameter
from service.store import Store

__all__ = ["reject_unknown_query_params", "store_from"]


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
