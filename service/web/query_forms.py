"""Turning a page's query (form fields as text) into an API request struct, with the failing form
field named: the one conversion every page uses."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["QueryError", "convert_query"]


class QueryError(Exception):
    """A query value that is not a valid input: ``field`` names the form field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def convert_query[T](body: dict[str, object], into: type[T], field_of: Callable[[str], str]) -> T:
    """``body`` (text values) converted to ``into`` laxly (text → numbers); a failure raises
    :class:`QueryError` naming the form field ``field_of`` maps the failing path (``$.a.b``) to."""
    try:
        return msgspec.convert(body, into, strict=False)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at ")
        if "missing required field" in message:
            raise QueryError(message.split("`")[1], "required") from None
        raise QueryError(field_of(where.strip("`").removeprefix("$.")), message) from None
