"""The one way to write the store: a transaction on a cursor of its own, retried on a write conflict.

DuckDB's optimistic concurrency control aborts a transaction whose rows another writer changed first
(``TransactionException: Conflict on update``); the work is then run again, a few times, after a short
wait. ``work`` must therefore only write through the cursor it is given (it may run more than once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import duckdb

__all__ = ["ATTEMPTS", "cursor_of", "run_transaction"]

ATTEMPTS: Final = 6
"""Tries of one transaction: the first and five retries, waiting 50 ms, 100 ms … 250 ms between."""
_WAIT_S: Final = 0.05


@contextmanager
def cursor_of(connection: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of its own (one per request, job or transaction); always closed."""
    cur = connection.cursor()
    try:
        yield cur
    finally:
        cur.close()


def run_transaction[T](
    connection: duckdb.DuckDBPyConnection,
    work: Callable[[duckdb.DuckDBPyConnection], T],
    *,
    attempts: int = ATTEMPTS,
) -> T:
    """``work(cursor)`` inside ``BEGIN … COMMIT`` (rolled back if it raises); retried on a conflict."""
    for attempt in range(1, attempts + 1):
        try:
            with cursor_of(connection) as cur:
                cur.execute("BEGIN TRANSACTION")
                try:
                    result = work(cur)
                    cur.execute("COMMIT")
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                return result
        except duckdb.TransactionException:  # a concurrent writer touched the same rows
            if attempt == attempts:
                raise
            time.sleep(_WAIT_S * attempt)
    raise AssertionError("unreachable: the last attempt returns or raises")
