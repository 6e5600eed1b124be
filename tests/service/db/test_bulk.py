"""Bulk inserts: every value and NULL lands in its column's type, also on a cursor that still holds an
unfetched result (the serving-profile upload reads a count, then inserts)."""

from __future__ import annotations

import duckdb

from service.db.bulk import insert_columns, insert_rows


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


def test_columns_travel_typed_and_none_stays_null() -> None:
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
        insert_columns(cur, "t", columns)
        insert_columns(cur, "t", {"n": [], "x": []})
        stored = cur.execute("SELECT n, x, y, b, big, s, isnan(x) FROM t ORDER BY n").fetchall()
    assert stored == [
        (1, 0.5, 1.0, True, 2**70, "a", False),
        (2, None, 2.5, False, 1, None, None),
        (3, 0.0, None, True, 2, "", False),
    ]
