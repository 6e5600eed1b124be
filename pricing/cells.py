"""Read one cell of a sheet row, strictly: each helper names the column in the error it raises.

Rows come from CSV (every value a string) or JSON (numbers, strings, null); both are accepted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pricing.errors import SheetRowError

__all__ = ["cell_choice", "cell_count", "cell_float", "cell_text"]


def cell_text(row: Mapping[str, Any], column: str, *, required: bool = False) -> str:
    value = row.get(column)
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise SheetRowError(column, "empty")
    return text


def cell_float(
    row: Mapping[str, Any], column: str, *, positive: bool = False, required: bool = False
) -> float | None:
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise SheetRowError(column, "empty")
        return None
    if isinstance(value, bool):
        raise SheetRowError(column, f"not a number: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SheetRowError(column, f"not a number: {value!r}") from None
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise SheetRowError(
            column, f"must be a {'positive' if positive else 'non-negative'} number: {value!r}"
        )
    return number


def cell_count(row: Mapping[str, Any], column: str, *, default: int | None = None) -> int:
    value = row.get(column)
    if (value is None or (isinstance(value, str) and not value.strip())) and default is not None:
        return default
    if isinstance(value, bool):
        raise SheetRowError(column, f"not a whole number: {value!r}")
    try:
        number = float(str(value).strip())
    except ValueError:
        raise SheetRowError(column, f"not a whole number: {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise SheetRowError(column, f"not a whole number: {value!r}")
    if number < 1:
        raise SheetRowError(column, f"must be at least 1: {value!r}")
    return int(number)


def cell_choice(row: Mapping[str, Any], column: str, choices: Sequence[str]) -> str | None:
    text = cell_text(row, column).lower()
    if not text:
        return None
    if text not in choices:
        raise SheetRowError(column, f"must be one of {', '.join(choices)}: {text!r}")
    return text
