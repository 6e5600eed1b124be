"""Bulk inserts on both backends (DuckDB's column scan, PostgreSQL's COPY): every value and NULL lands
in its column's type, also on a cursor that still holds an unfetched result (the serving-profile upload
reads a count, then inserts), and a transaction that fails keeps none of them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import duckdb
import pytest

from service.db.backend import Cursor
from service.db.bulk import insert_columns, insert_rows, scan_columns
from service.db.store import Store

_COLUMNS = ("n", "x", "s", "b", "stamp", "note")
_AT = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
_ROWS = [
    (1, 2, "a", True, _AT, "tab\there, newline\nhere, back\\slash, 'quote', 100%"),
    (2, 2.5, None, False, None, ""),
    (3, None, "c", None, _AT, None),
]


def _create(cur: Cursor) -> None:
    cur.execute(
        "CREATE TABLE t (n INTEGER, x DOUBLE PRECISION, s VARCHAR, b BOOLEAN, stamp TIMESTAMPTZ, note VARCHAR)"
    )


_STORED = [
    (1, 2.0, "a", True, _AT, _ROWS[0][5]),
    (2, 2.5, None, False, None, ""),
    (3, None, "c", None, _AT, None),
]
"""``_ROWS`` as they read back: the int 2 in the float column is 2.0."""


def _stored_after(db_target: str, work: Callable[[Cursor], None]) -> list[tuple[object, ...]]:
    """The rows of a new table ``t`` after ``work`` ran in a transaction of its own."""
    with Store.open(db_target) as store:
        store.transaction(_create)
        store.transaction(work)
        with store.cursor() as cur:
            return cur.execute("SELECT n, x, s, b, stamp, note FROM t ORDER BY n").fetchall()


def test_bulk_insert_keeps_values_nulls_and_types_after_an_unfetched_result(db_target: str) -> None:
    def work(cur: Cursor) -> None:
        cur.execute("SELECT 1 UNION ALL SELECT 2").fetchone()  # a result left half read
        insert_rows(cur, "t", _COLUMNS, _ROWS)
        insert_rows(cur, "t", _COLUMNS, [])

    stored = _stored_after(db_target, work)
    assert stored == _STORED
    assert all(isinstance(row[1], float) for row in stored if row[1] is not None)


def test_a_failed_transaction_keeps_none_of_its_bulk_rows(db_target: str) -> None:
    def work(cur: Cursor) -> None:
        insert_rows(cur, "t", _COLUMNS, _ROWS)
        raise RuntimeError("after the rows went in")

    with Store.open(db_target) as store:
        store.transaction(_create)
        with pytest.raises(RuntimeError):
            store.transaction(work)
        with store.cursor() as cur:
            assert cur.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_duckdb_columns_travel_typed_and_none_stays_null() -> None:
    """DuckDB only: the typed arrays of its NumPy scan (NaN never stored, ints beyond int64 kept)."""
    connection = duckdb.connect(":memory:")
    connection.execute("CREATE TABLE t (n INTEGER, x DOUBLE, y DOUBLE, b BOOLEAN, big HUGEINT, s VARCHAR)")
    columns = {
        "n": [1, 2, 3],
        "x": [0.5, None, -0.0],  # a float column with a gap: NULL, never NaN
        "y": [1, 2.5, None],  # whole and fractional numbers mixed
        "b": [True, False, True],
        "big": [2**70, 1, 2],  # beyond int64: stays a Python int
        "s": ["a", None, ""],
    }
    with connection.cursor() as cur:
        scan_columns(cur, "t", columns)
        scan_columns(cur, "t", {"n": [], "x": []})
        stored = cur.execute("SELECT n, x, y, b, big, s, isnan(x) FROM t ORDER BY n").fetchall()
    assert stored == [
        (1, 0.5, 1.0, True, 2**70, "a", False),
        (2, None, 2.5, False, 1, None, None),
        (3, 0.0, None, True, 2, "", False),
    ]


def test_columns_insert_like_rows_on_both_backends(db_target: str) -> None:
    columns = {name: [row[index] for row in _ROWS] for index, name in enumerate(_COLUMNS)}

    def work(cur: Cursor) -> None:
        insert_columns(cur, "t", columns)
        insert_columns(cur, "t", {name: [] for name in _COLUMNS})

    stored = _stored_after(db_target, work)
    assert stored == _STORED
