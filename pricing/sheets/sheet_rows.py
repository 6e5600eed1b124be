"""Read a tabular upload (CSV with a header, or JSON objects) into numbered rows, checking its columns.

A sheet that cannot be read as a table at all (empty, not UTF-8, not CSV/JSON, nested deeper than
:data:`MAX_JSON_DEPTH`, a header naming one column twice, a header without rows) is one problem on
line 0 whose reason says what is wrong, never a partial read.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from pricing.cells import JsonRow
from pricing.sheets.json_depth import MAX_JSON_DEPTH, json_depth_exceeds
from pricing.sheets.offers import SheetProblem

__all__ = ["CURL_HINT", "SheetRows", "SheetTable", "read_columns", "read_table"]

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


def _json_items(text: str, list_key: str) -> list[JsonRow]:
    def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> JsonRow:
        repeated = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        if repeated:
            raise _Unreadable(f"an object names a key twice: {', '.join(repeated)}")
        return JsonRow(pairs)

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
    return items


_CHUNK_ROWS: Final = 65_536
"""Rows turned into columns at a time: only this many row lists exist at once, never the whole sheet's."""


def _csv_columns(text: str) -> tuple[dict[str, list[str | None]], int, int | None]:
    """The columns of a CSV text (header first), its row count and the first line with more cells than
    the header. Rows are those of ``csv.DictReader``: blank lines skipped, short rows padded with
    ``None``; each column keeps one object per distinct value (a 300,000-row sheet repeats most)."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, [])
        width = len(header)
        columns: list[list[str | None]] = [[] for _ in header]
        distinct: list[dict[str | None, str | None]] = [{} for _ in header]
        count, surplus = 0, None
        while chunk := [row for row in itertools.islice(reader, _CHUNK_ROWS) if row]:
            padded: list[Sequence[str | None]] = list(chunk)
            if min(map(len, chunk)) != width or max(map(len, chunk)) != width:  # rarely: short or long rows
                for offset, row in enumerate(chunk):
                    if len(row) < width:
                        padded[offset] = [*row, *[None] * (width - len(row))]
                    elif len(row) > width and surplus is None:
                        surplus = count + offset + 2
            # each row has at least ``width`` cells now; cells beyond it only set ``surplus``
            for column, seen, cells in zip(columns, distinct, zip(*padded, strict=False), strict=False):
                column.extend(map(seen.setdefault, cells, cells))
            count += len(chunk)
    except csv.Error as exc:
        raise _Unreadable(f"not valid CSV: {exc}") from None
    if not count:
        one_line = "\n" not in text and "\r" not in text  # curl -d strips the last line break too
        raise _Unreadable(f"the sheet has a header but no rows{f'; {CURL_HINT}' if one_line else ''}")
    repeated = sorted(c for c, n in Counter(header).items() if n > 1)
    if repeated:
        raise _Unreadable(f"the header names a column twice: {', '.join(repeated)}")
    return dict(zip(header, columns, strict=True)), count, surplus


class SheetTable:
    """A sheet's rows, readable whole columns at a time (what a large sheet is checked by) or one row
    at a time. Row ``i`` is on line ``first_line + i``: CSV lines count the header as line 1, JSON
    items count from 1. A CSV cell is text (``None`` where a short row has no cell); a JSON cell is
    the JSON value (``None`` where the object lacks the key), and its rows are :class:`JsonRow`."""

    __slots__ = ("_columns", "_items", "_names", "first_line", "size")

    def __init__(
        self,
        *,
        first_line: int,
        columns: dict[str, list[str | None]] | None = None,
        size: int = 0,
        items: list[JsonRow] | None = None,
    ) -> None:
        self.first_line = first_line
        self._columns = columns or {}
        self._items = items
        self._names: set[str] | None = None
        self.size = len(items) if items is not None else size

    def __len__(self) -> int:
        return self.size

    @property
    def json(self) -> bool:
        """Whether the cells are JSON values (numbers must then be JSON numbers)."""
        return self._items is not None

    @property
    def names(self) -> set[str]:
        """Every column the sheet has (JSON: every key of any object)."""
        if self._names is None:
            items = self._items
            self._names = set(self._columns) if items is None else set().union(*(i.keys() for i in items))
        return self._names

    def has(self, name: str) -> bool:
        """Whether any row has a cell in column ``name``."""
        return name in self.names

    def column(self, name: str) -> Sequence[Any]:
        """Every row's cell of column ``name`` (``None`` where there is none)."""
        if self._items is not None:
            return [item.get(name) for item in self._items]
        found = self._columns.get(name)
        return found if found is not None else [None] * self.size

    def row(self, index: int) -> dict[str, Any]:
        """Row ``index`` as a mapping of column to cell (as ``csv.DictReader`` or ``json`` gives it)."""
        if self._items is not None:
            return self._items[index]
        return {name: cells[index] for name, cells in self._columns.items()}

    def rows(self) -> SheetRows:
        """Every ``(line, row)`` pair."""
        return [(self.first_line + i, self.row(i)) for i in range(self.size)]


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


def read_columns(
    body: bytes, *, json_format: bool, list_key: str, required: Sequence[str], file: str
) -> tuple[SheetTable, list[SheetProblem]]:
    """The table of ``body`` (JSON: a list of objects or ``{list_key: [...]}``); an unreadable table is
    one problem (line 0) and an empty table, never a partial read."""
    try:
        text = _decode(body)
        if json_format:
            if json_depth_exceeds(body):
                raise _Unreadable(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
            table, surplus = SheetTable(first_line=1, items=_json_items(text, list_key)), None
        else:
            columns, count, surplus = _csv_columns(text)
            table = SheetTable(first_line=2, columns=columns, size=count)
    except _Unreadable as exc:
        return _EMPTY, [SheetProblem(file=file, line=0, column=None, value=None, reason=str(exc))]
    names = table.names
    missing = [c for c in required if c not in names]
    if missing:
        reason = f"missing required column(s): {', '.join(missing)}"
        return _EMPTY, [SheetProblem(file=file, line=0, column=missing[0], value=None, reason=reason)]
    if surplus is not None:
        reason = f"line {surplus} has more cells than the header"
        return _EMPTY, [SheetProblem(file=file, line=0, column=None, value=None, reason=reason)]
    return table, []


_EMPTY: Final = SheetTable(first_line=1, columns={})


def read_table(
    body: bytes, *, json_format: bool, list_key: str, required: Sequence[str], file: str
) -> tuple[SheetRows, list[SheetProblem]]:
    """:func:`read_columns` as ``(line, row)`` pairs (sheets small enough to check row by row)."""
    table, problems = read_columns(
        body, json_format=json_format, list_key=list_key, required=required, file=file
    )
    return table.rows(), problems
