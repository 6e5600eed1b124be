"""Fast bulk inserts, one way per backend (a 330,000-row sheet in seconds, where binding each row's
parameters took minutes). Feature code calls :func:`insert_rows` or :func:`insert_columns` with the
store's cursor, which picks its backend's way.

DuckDB scans the rows as one array per column in ``INSERT … SELECT``, a chunk at a time. Numbers travel
as typed arrays: a column of floats (``None`` allowed) as ``float64``, where DuckDB's NumPy scan reads
NaN as NULL (the store never holds NaN: every sheet cell is finite); whole numbers and booleans without
``None`` as ``int64`` and ``bool``; anything else as Python objects, whose types DuckDB infers value by
value (several times slower). PostgreSQL takes the rows through ``COPY … FROM STDIN``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import duckdb
import numpy as np
import psycopg

if TYPE_CHECKING:
    from service.db.backend import Cursor

__all__ = ["copy_columns", "copy_rows", "insert_columns", "insert_rows", "scan_columns", "scan_rows"]

_NONE = type(None)
_CHUNK_ROWS: Final = 65_536
"""Rows converted to arrays and inserted at a time: the arrays of a whole 300,000-row sheet never exist
at once."""


def insert_rows(cur: Cursor, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table``; the caller owns the transaction."""
    cur.insert_rows(table, columns, rows)


def insert_columns(cur: Cursor, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
    """Insert the rows ``columns`` hold (one sequence per column, all of one length; ``None`` is NULL)
    into ``table``; the caller owns the transaction."""
    cur.insert_columns(table, columns)


def _column_list(columns: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _array(values: Sequence[Any]) -> np.ndarray[Any, np.dtype[Any]]:
    kinds = set(map(type, values))
    if kinds == {bool}:
        return np.array(values, dtype=np.bool_)
    if kinds == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            pass
    elif float in kinds and kinds <= {float, int, _NONE}:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def scan_columns(cur: duckdb.DuckDBPyConnection, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
    """DuckDB: each column an array, a chunk of rows at a time, cast to the table's column types."""
    size = len(next(iter(columns.values()), ()))
    column_list = _column_list(list(columns))
    for start in range(0, size, _CHUNK_ROWS):
        gpuplan_bulk_rows: dict[str, np.ndarray[Any, np.dtype[Any]]] = {}
        for name, values in columns.items():
            gpuplan_bulk_rows[name] = _array(values[start : start + _CHUNK_ROWS])
        # DuckDB finds the local ``gpuplan_bulk_rows`` by name (a replacement scan); unlike ``register``
        # it works while the cursor still holds an unfetched result of an earlier statement
        cur.execute(f"INSERT INTO {table} ({column_list}) SELECT {column_list} FROM gpuplan_bulk_rows")


def scan_rows(
    cur: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """DuckDB: :func:`scan_columns` of ``rows``."""
    if rows:
        scan_columns(cur, table, {c: [row[i] for row in rows] for i, c in enumerate(columns)})


def copy_rows(
    cur: psycopg.Cursor[Any], table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """PostgreSQL: ``COPY`` in text format (each value as psycopg writes it; the server parses it as
    the column's type)."""
    if not rows:
        return
    with cur.copy(f"COPY {table} ({_column_list(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def copy_columns(cur: psycopg.Cursor[Any], table: str, columns: Mapping[str, Sequence[Any]]) -> None:
    """PostgreSQL: :func:`copy_rows` of the rows ``columns`` hold."""
    copy_rows(cur, table, list(columns), list(zip(*columns.values(), strict=True)))
