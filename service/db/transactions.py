"""The one retry rule of the store's transactions, for both backends.

A transaction that another writer's rows made fail (DuckDB's optimistic concurrency control:
``TransactionException: Conflict on update``; PostgreSQL's serialization failure or deadlock) is run
again, a few times, after a short wait. The work must therefore only write through the cursor it is
given (it may run more than once).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from service.db.store_errors import STORE_ERRORS, is_write_conflict

__all__ = ["ATTEMPTS", "retrying"]

ATTEMPTS: Final = 6
"""Tries of one transaction: the first and five retries, waiting 50 ms, 100 ms … 250 ms between."""
_WAIT_S: Final = 0.05


def retrying[T](attempt: Callable[[], T], *, attempts: int = ATTEMPTS) -> T:
    """``attempt()`` (one whole transaction), run again after a write conflict, up to ``attempts`` times."""
    for tried in range(1, attempts + 1):
        try:
            return attempt()
        except STORE_ERRORS as exc:
            if not is_write_conflict(exc) or tried == attempts:
                raise
            time.sleep(_WAIT_S * tried)
    raise AssertionError("unreachable: the last attempt returns or raises")
