"""Store writes: one transaction helper (commit, roll back, retry on a conflict) and per-snapshot derivations."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from service.db.snapshot import CatalogSnapshot, Derived
from service.db.store import Store


def _rows(store: Store) -> list[tuple[int]]:
    with store.cursor() as cur:
        return [(int(r[0]),) for r in cur.execute("SELECT n FROM scratch ORDER BY n").fetchall()]


@pytest.fixture
def scratch() -> Iterator[Store]:
    with Store.open(":memory:") as store:
        with store.cursor() as cur:
            cur.execute("CREATE TABLE scratch (n INTEGER)")
        yield store


def test_a_transaction_commits_its_work_and_returns_its_result(scratch: Store) -> None:
    def work(cur: duckdb.DuckDBPyConnection) -> str:
        cur.execute("INSERT INTO scratch VALUES (1), (2)")
        return "done"

    assert scratch.transaction(work) == "done"
    assert _rows(scratch) == [(1,), (2,)]


def test_a_failing_transaction_leaves_nothing(scratch: Store) -> None:
    def work(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute("INSERT INTO scratch VALUES (1)")
        raise ValueError("half way")

    with pytest.raises(ValueError, match="half way"):
        scratch.transaction(work)
    assert _rows(scratch) == []


def test_a_conflicting_transaction_is_run_again(scratch: Store) -> None:
    calls: list[int] = []

    def work(cur: duckdb.DuckDBPyConnection) -> None:
        calls.append(1)
        cur.execute("INSERT INTO scratch VALUES (?)", [len(calls)])
        if len(calls) < 3:
            raise duckdb.TransactionException("Conflict on update!")

    scratch.transaction(work)
    assert len(calls) == 3
    assert _rows(scratch) == [(3,)]  # the two conflicting attempts were rolled back


def test_a_conflict_that_never_clears_is_raised(scratch: Store) -> None:
    calls: list[int] = []

    def work(cur: duckdb.DuckDBPyConnection) -> None:
        calls.append(1)
        raise duckdb.TransactionException("Conflict on update!")

    with pytest.raises(duckdb.TransactionException):
        scratch.transaction(work)
    assert len(calls) == 6


def test_derived_structures_are_built_once_per_snapshot(store: Store) -> None:
    builds: list[int] = []

    def build(snapshot: CatalogSnapshot) -> int:
        builds.append(snapshot.generation)
        return len(snapshot.gpus)

    key = Derived("gpu count", build)
    snapshot = store.snapshot
    assert snapshot.derive(key) == snapshot.derive(key) == len(snapshot.gpus)
    assert builds == [snapshot.generation]
    fresh = Store.open(":memory:")
    try:
        fresh.refresh_snapshot()
        assert fresh.snapshot.generation == 2
        assert fresh.snapshot.derive(key) == len(snapshot.gpus)
        assert len(builds) == 2
    finally:
        fresh.close()
