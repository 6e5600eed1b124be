"""Bulk inserts: every value and NULL lands in its column's type, also on a cursor that still holds an
unfetched result (the serving-profile upload reads a count, then inserts)."""

from __future__ import annotations

import duckdb

from service.db.bulk import insert_rows


def test_bulk_insert_keeps_values_nulls_and_types_after_an_unfetched_result() -> None:
    connection = duckdb.connect(":memory:")
    connection.execute("CREATE TABLE t (n INTEGER, x DOUBLE, s VARCHAR, b BOOLEAN)")
    with connection.cursor() as cur:
        cur.execute("SELECT 1 UNION ALL SELECT 2").fetchone()  # a result left half read
        rows = [(1, 2, "a", True), (2, 2.5, None, False), (3, None, "c", None)]
        insert_rows(cur, "t", ("n", "x", "s", "b"), rows)
        insert_rows(cur, "t", ("n", "x", "s", "b"), [])
        stored = cur.execute("SELECT n, x, s, b, typeof(x) FROM t ORDER BY n").fetchall()
    assert stored == [
        (1, 2.0, "a", True, "DOUBLE"),
        (2, 2.5, None, False, "DOUBLE"),
        (3, None, "c", None, "DOUBLE"),
    ]
