"""Turning a page's query (form fields as text) into an API request struct, with the failing form
field named: the one conversion every page uses."""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable
from typing import Any, Final, overload

import msgspec

__all__ = ["QueryError", "convert_query"]


class QueryError(Exception):
    """A query value that is not a valid input: ``field`` names the form field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


_SCIENTIFIC: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+")


def _whole(value: object) -> object:
    """``"1e30"`` (a number field may send that) as the whole number it is, so a whole-number field
    applies its bounds to it as the API does; other values as they are."""
    if not isinstance(value, str) or not _SCIENTIFIC.fullmatch(value):
        return value
    number = decimal.Decimal(value)
    if number.adjusted() > 100 or number != number.to_integral_value():
        return value
    return int(number)


@overload
def convert_query[T](body: dict[str, object], into: type[T], field_of: Callable[[str], str]) -> T: ...
@overload
def convert_query(body: dict[str, object], into: Any, field_of: Callable[[str], str]) -> Any: ...
def convert_query(body: dict[str, object], into: Any, field_of: Callable[[str], str]) -> Any:
    """``body`` (text values) converted to ``into`` laxly (text → numbers; a whole number in
    scientific notation too, top level and ``constraints``); a failure raises :class:`QueryError`
    naming the form field ``field_of`` maps the failing path (``$.a.b``) to."""
    body = {k: _whole(v) for k, v in body.items()}
    limits = body.get("constraints")
    if isinstance(limits, dict):
        body["constraints"] = {k: _whole(v) for k, v in limits.items()}
    try:
        return msgspec.convert(body, into, strict=False)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at ")
        if "missing required field" in message:
            raise QueryError(message.split("`")[1], "required") from None
        raise QueryError(field_of(where.strip("`").removeprefix("$.")), message) from None
