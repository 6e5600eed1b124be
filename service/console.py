"""Terminal output shared by the feature CLIs: tables and JSON, the way every ``gpuplan`` command prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from tabulate import tabulate

__all__ = ["print_json", "print_table"]


def _cell(value: Any) -> Any:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    """A plain table: ``-`` for missing values, yes/no for flags, numbers in their shortest form."""
    print(tabulate([[_cell(v) for v in row] for row in rows], headers=list(headers), floatfmt="g"))


def print_json(value: object) -> None:
    """One line of JSON (what ``--json`` prints)."""
    print(msgspec.json.encode(value).decode())
