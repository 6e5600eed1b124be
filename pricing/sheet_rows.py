"""Read a tabular upload (CSV with a header, or JSON objects) into numbered rows, checking its columns.

A sheet that cannot be read as a table at all (empty, not UTF-8, not CSV/JSON, nested deeper than
:data:`MAX_JSON_DEPTH`, a header naming one column twice, a header without rows) is one problem on
line 0 whose reason says what is wrong, never a partial read.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from pricing.cells import JsonRow
from pricing.json_depth import MAX_JSON_DEPTH, json_depth_exceeds
from pricing.offers import SheetProblem

__all__ = ["CURL_HINT", "SheetRows", "read_table"]

SheetRows = list[tuple[int, dict[str, Any]]]
"""``(line, row)`` pairs: CSV lines count the header as line 1; JSON items count from 1."""

CURL_HINT: Final = (
    "the body has no line breaks: `curl -d` strips them; send the file with `--data-binary @FILE`"
)
"""Why a CSV sheet may arrive as one long line: the most common upload mistake, so it is named."""


class _Unreadable(Exception):
    """The whole sheet cannot be read; the message says why."""


def _whole_number(digits: str) -> int | str:
    """A JSON integer; one longer than any column holds is kept as its text (Python's ``int`` refuses
    over 4,300 digits), so the cell's own check rejects it with its line and column."""
    return int(digits) if len(digits) <= 30 else digits


def _json_rows(text: str, list_key: str) -> tuple[SheetRows, set[str]]:
    def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        repeated = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        if repeated:
            raise _Unreadable(f"an object names a key twice: {', '.join(repeated)}")
        return dict(pairs)

    try:
        data = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_int=_whole_number)
    except json.JSONDecodeError as exc:
        raise _Unreadable(f"not valid JSON: {exc}") from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise _Unreadable(f"not usable JSON: {exc}") from None
    items = data.get(list_key) if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise _Unreadable(f'expected a list of objects, or {{"{list_key}": [...]}}')
    if not items:
        raise _Unreadable("the sheet has no rows (an empty list)")
    return [(i + 1, JsonRow(item)) for i, item in enumerate(items)], set().union(*(i.keys() for i in items))


def _csv_rows(text: str) -> tuple[SheetRows, set[str]]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames or []
        rows = [(i + 2, dict(row)) for i, row in enumerate(reader)]
    except csv.Error as exc:
        raise _Unreadable(f"not valid CSV: {exc}") from None
    if not rows:
        one_line = "\n" not in text and "\r" not in text  # curl -d strips the last line break too
        raise _Unreadable(f"the sheet has a header but no rows{f'; {CURL_HINT}' if one_line else ''}")
    repeated = sorted(c for c, n in Counter(header).items() if n > 1)
    if repeated:
        raise _Unreadable(f"the header names a column twice: {', '.join(repeated)}")
    return rows, set(header)


def _decode(body: bytes) -> str:
    if not body.strip():
        raise _Unreadable("the sheet is empty (no bytes, or only white space)")
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(
            f"not UTF-8 text: byte 0x{body[exc.start]:02x} at offset {exc.start} ({exc.reason}); "
            "save the sheet as UTF-8"
        ) from None


def read_table(
    body: bytes, *, json_format: bool, list_key: str, required: Sequence[str], file: str
) -> tuple[SheetRows, list[SheetProblem]]:
    """Rows of ``body`` (JSON: a list of objects or ``{list_key: [...]}``); an unreadable table is one
    problem (line 0), never a partial read."""
    try:
        text = _decode(body)
        if json_format and json_depth_exceeds(body):
            raise _Unreadable(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        rows, columns = _json_rows(text, list_key) if json_format else _csv_rows(text)
    except _Unreadable as exc:
        return [], [SheetProblem(file=file, line=0, column=None, value=None, reason=str(exc))]
    missing = [c for c in required if c not in columns]
    if missing:
        reason = f"missing required column(s): {', '.join(missing)}"
        return [], [SheetProblem(file=file, line=0, column=missing[0], value=None, reason=reason)]
    surplus = next((line for line, row in rows if None in row), None)  # csv keys surplus cells None
    if surplus is not None:
        reason = f"line {surplus} has more cells than the header"
        return [], [SheetProblem(file=file, line=0, column=None, value=None, reason=reason)]
    return rows, []
