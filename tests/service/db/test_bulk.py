"""Bulk inserts on both backends (DuckDB's column scan, PostgreSQL's COPY): every value and NULL lands
in its column's type, also on a cursor that still holds an unfetched result (the serving-profile upload
reads a count, then inserts), and a transaction that fails keeps none of them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from service.db.backend import Cursor
from service.db.bulk import insert_rows
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


def test_bulk_insert_keeps_values_nulls_and_types_after_an_unfetched_result(db_target: str) -> None:
    def work(cur: Cursor) -> None:
        cur.execute("SELECT 1 UNION ALL SELECT 2").fetchone()  # a result left half read
        insert_rows(cur, "t", _COLUMNS, _ROWS)
        insert_rows(cur, "t", _COLUMNS, [])

    with Store.open(db_target) as store:
        store.transaction(_create)
        store.transaction(work)
        with store.cursor() as cur:
            stored = cur.execute("SELECT n, x, s, b, stamp, note FROM t ORDER BY n").fetchall()
    assert stored == [
        (1, 2.0, "a", True, _AT, _ROWS[0][5]),
        (2, 2.5, None, False, None, ""),
        (3, None, "c", None, _AT, None),
    ]
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
