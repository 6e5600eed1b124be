"""The one retry rule of the store's transactions, for both backends.

A transaction that another writer's rows made fail (DuckDB's optimistic concurrency control:
``TransactionException: Conflict on update``; PostgreSQL's serialization failure or deadlock) is run
again, a few times, after a short wait growing linearly (``tenacity``). The work must therefore only
write through the cursor it is given (it may run more than once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_incrementing

from service.db.store_errors import STORE_ERRORS, is_write_conflict

__all__ = ["ATTEMPTS", "retrying"]

ATTEMPTS: Final = 6
"""Tries of one transaction: the first and five retries, waiting 50 ms, 100 ms … 250 ms between."""
_WAIT_S: Final = 0.05


def _is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, STORE_ERRORS) and is_write_conflict(exc)


def retrying[T](attempt: Callable[[], T], *, attempts: int = ATTEMPTS) -> T:
    """``attempt()`` (one whole transaction), run again after a write conflict, up to ``attempts`` times."""
    retry = Retrying(
        retry=retry_if_exception(_is_conflict),
        stop=stop_after_attempt(attempts),
        wait=wait_incrementing(start=_WAIT_S, increment=_WAIT_S),
        reraise=True,
    )
    return retry(attempt)
