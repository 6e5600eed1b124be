"""Read a tabular upload (CSV with a header, or JSON objects) into numbered rows, checking its columns."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from pricing.offers import SheetProblem

__all__ = ["SheetRows", "read_table"]

SheetRows = list[tuple[int, dict[str, Any]]]
"""``(line, row)`` pairs: CSV lines count the header as line 1; JSON items count from 1."""


def read_table(
    body: bytes, *, json_format: bool, list_key: str, required: Sequence[str], file: str
) -> tuple[SheetRows, list[SheetProblem]]:
    """Rows of ``body`` (JSON: a list of objects or ``{list_key: [...]}``); an unreadable table is one
    problem (line 0), never a partial read."""

    def whole(reason: str, column: str | None = None) -> tuple[SheetRows, list[SheetProblem]]:
        return [], [SheetProblem(file=file, line=0, column=column, value=None, reason=reason)]

    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return whole(f"not UTF-8 text: {exc}")
    if json_format:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return whole(f"not valid JSON: {exc}")
        items = data.get(list_key) if isinstance(data, dict) else data
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            return whole(f'expected a list of objects, or {{"{list_key}": [...]}}')
        rows: SheetRows = [(i + 1, item) for i, item in enumerate(items)]
        columns: set[str] = set().union(*(item.keys() for item in items)) if items else set()
    else:
        reader = csv.DictReader(io.StringIO(text))
        try:
            rows = [(i + 2, dict(row)) for i, row in enumerate(reader)]
        except csv.Error as exc:
            return whole(f"not valid CSV: {exc}")
        columns = set(reader.fieldnames or [])
    if not rows:
        return whole("the sheet has no rows")
    missing = [c for c in required if c not in columns]
    if missing:
        return whole(f"missing required column(s): {', '.join(missing)}", missing[0])
    for line, row in rows:
        if None in row:  # csv puts surplus cells under the key None
            return whole(f"line {line} has more cells than the header")
    return rows, []
