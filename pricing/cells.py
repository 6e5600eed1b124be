"""Read one cell of a sheet row, strictly: each helper names the column in the error it raises.

Rows come from CSV (every value a string) or JSON (numbers, strings, null); both are accepted. Every
value is bounded: text has no control characters (a NUL or an escape sequence in a name is a broken
export, never data), numbers are finite and at most :data:`MAX_NUMBER` (or the column's own cap, e.g.
:data:`MAX_PRICE_PER_HOUR_USD`), and whole numbers fit the store's 32-bit integer columns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from pricing.errors import SheetRowError

__all__ = [
    "MAX_COUNT",
    "MAX_NUMBER",
    "MAX_PRICE_PER_HOUR_USD",
    "JsonRow",
    "cell_choice",
    "cell_count",
    "cell_float",
    "cell_text",
    "cell_texts",
    "skipping_columns",
]

MAX_NUMBER: Final = 1e12
"""The largest number any sheet cell may hold: far above every real quantity, far below where sums of
them overflow to infinity (``$1e308`` would print as ``$inf``)."""
MAX_PRICE_PER_HOUR_USD: Final = 10_000.0
"""The largest price of one instance-hour (the dearest 8-GPU instances cost about $100 an hour)."""
MAX_COUNT: Final = 2**31 - 1
"""The largest whole number a sheet cell may hold (the store's INTEGER columns)."""

_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_DECIMAL: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity|nan)"
)
"""A number as a sheet may write it: ASCII digits, a point, an exponent (``float`` would also take
``1_0`` and other scripts' digits such as ``٢.٥``); the words for infinity and NaN are read so that
the bound checks name them."""
"""Control characters (C0 and C1, DEL) other than tab, line feed and carriage return."""


class JsonRow(dict[str, Any]):
    """A row of a JSON sheet: its numbers are JSON numbers, so a string where a number belongs
    (``"gpus_per_instance": "8"``) is a problem, as it is in every JSON request body."""


def _number_text(row: Mapping[str, Any], column: str, value: Any, what: str = "a number") -> None:
    if isinstance(row, JsonRow) and isinstance(value, str):
        raise SheetRowError(column, f"a JSON number is expected, not the string {_shown(value)}")
    if isinstance(value, str) and not _DECIMAL.fullmatch(value.strip()):
        raise SheetRowError(column, f"not {what} (ASCII digits, '.', an exponent): {_shown(value)}")


_SKIPPED: ContextVar[frozenset[str]] = ContextVar("skipped_columns", default=frozenset())


@contextmanager
def skipping_columns(columns: Iterable[str]) -> Iterator[None]:
    """Read ``columns`` as if empty and unchecked while parsing a row again after they failed, so the
    row's later cells are checked too: every problem of a line is reported, not only the first."""
    token = _SKIPPED.set(frozenset(columns))
    try:
        yield
    finally:
        _SKIPPED.reset(token)


def cell_text(row: Mapping[str, Any], column: str, *, required: bool = False) -> str:
    if column in _SKIPPED.get():
        return ""
    value = row.get(column)
    if isinstance(value, dict | list):  # a JSON object or array: str() would store its Python repr
        kind = "an object" if isinstance(value, dict) else "an array"
        raise SheetRowError(column, f"a JSON string is expected, not {kind}")
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise SheetRowError(column, "empty")
    bad = _CONTROL.search(text)
    if bad:
        raise SheetRowError(column, f"contains the control character U+{ord(bad.group()):04X}")
    return text


def cell_texts(values: Sequence[str | None], *, required: bool = False) -> list[str] | None:
    """:func:`cell_text` of every cell of a CSV column at once (a column of 300,000 instance types is
    read in a few C-level passes), or ``None`` when a cell is missing, empty where ``required`` or holds
    a control character: the column is then read a cell at a time, and the failing cells name their
    problems."""
    if None in values:
        return None
    texts = list(map(str.strip, values))  # type: ignore[arg-type]  # no None, checked above
    if (required and "" in texts) or _CONTROL.search("\n".join(texts)):
        return None
    return texts


def cell_float(
    row: Mapping[str, Any],
    column: str,
    *,
    positive: bool = False,
    required: bool = False,
    maximum: float = MAX_NUMBER,
) -> float | None:
    if column in _SKIPPED.get():
        return None
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise SheetRowError(column, "empty")
        return None
    if isinstance(value, bool):
        raise SheetRowError(column, f"not a number: {value!r}")
    _number_text(row, column, value)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise SheetRowError(column, f"not a number: {_shown(value)}") from None
    if number > maximum and "inf" not in str(value).lower():  # a 5,000-digit number reads as infinity
        raise SheetRowError(column, f"must be at most {_number(maximum)}: {_shown(value)}")
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise SheetRowError(
            column, f"must be a {'positive' if positive else 'non-negative'} number: {_shown(value)}"
        )
    if number > maximum:
        raise SheetRowError(column, f"must be at most {_number(maximum)}: {_shown(value)}")
    return number


def cell_count(
    row: Mapping[str, Any], column: str, *, default: int | None = None, maximum: int = MAX_COUNT
) -> int:
    if column in _SKIPPED.get():
        return 1 if default is None else default
    value = row.get(column)
    if (value is None or (isinstance(value, str) and not value.strip())) and default is not None:
        return default
    if isinstance(value, bool):
        raise SheetRowError(column, f"not a whole number: {value!r}")
    _number_text(row, column, value, "a whole number")
    try:
        number = float(str(value).strip())
    except (ValueError, OverflowError):
        raise SheetRowError(column, f"not a whole number: {_shown(value)}") from None
    if number > maximum:  # infinity included (a 5,000-digit number reads as infinity)
        raise SheetRowError(column, f"must be at most {maximum:,}: {_shown(value)}")
    if not math.isfinite(number) or number != int(number):
        raise SheetRowError(column, f"not a whole number: {_shown(value)}")
    if number < 1:
        raise SheetRowError(column, f"must be at least 1: {_shown(value)}")
    return int(number)


def cell_choice(row: Mapping[str, Any], column: str, choices: Sequence[str]) -> str | None:
    text = cell_text(row, column).lower()
    if not text:
        return None
    if text not in choices:
        raise SheetRowError(column, f"must be one of {', '.join(choices)}: {text!r}")
    return text


def _number(bound: float) -> str:
    return f"{int(bound):,}" if bound == int(bound) and bound < 1e15 else f"{bound:g}"


def _shown(value: Any) -> str:
    """The value as an error message quotes it: a 5,000-digit number is cut, not echoed whole."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} characters)"
