"""The store's one retry rule: a write conflict is tried again (a few times), anything else is not."""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import pytest

from service.db.transactions import ATTEMPTS, retrying


def _flaky(failures: list[BaseException]) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(len(calls))
        if failures:
            raise failures.pop(0)
        return "done"

    return calls, attempt


def test_a_write_conflict_is_run_again_until_it_succeeds() -> None:
    calls, attempt = _flaky([duckdb.TransactionException("Conflict on update")] * 2)
    assert retrying(attempt) == "done"
    assert len(calls) == 3


def test_other_errors_are_not_retried() -> None:
    calls, attempt = _flaky([duckdb.CatalogException("no such table")])
    with pytest.raises(duckdb.CatalogException):
        retrying(attempt)
    assert len(calls) == 1


def test_the_last_conflict_is_raised_as_it_came() -> None:
    calls, attempt = _flaky([duckdb.TransactionException(f"Conflict {n}") for n in range(ATTEMPTS + 1)])
    with pytest.raises(duckdb.TransactionException, match=f"Conflict {ATTEMPTS - 1}"):
        retrying(attempt, attempts=ATTEMPTS)
    assert len(calls) == ATTEMPTS
