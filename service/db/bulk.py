"""Fast multi-row inserts into DuckDB (one ``INSERT … VALUES`` per chunk, not one call per row)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import duckdb

__all__ = ["insert_rows"]

_CHUNK = 400


def insert_rows(
    cur: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table``; the caller owns the transaction."""
    column_list = ", ".join(f'"{c}"' for c in columns)
    placeholder = "(" + ", ".join("?" for _ in columns) + ")"
    for start in range(0, len(rows), _CHUNK):
        part = rows[start : start + _CHUNK]
        sql = f"INSERT INTO {table} ({column_list}) VALUES " + ", ".join(placeholder for _ in part)
        cur.execute(sql, list(itertools.chain.from_iterable(part)))
