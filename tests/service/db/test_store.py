"""Store writes on both backends: one transaction helper (commit, roll back, retry on a conflict) and
per-snapshot derivations."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg.errors
import pytest

from service.db.backend import Cursor
from service.db.snapshot import CatalogSnapshot, Derived
from service.db.store import Store
from service.price_sheets.importer import import_sheet
from tests.layout_rules import REPO
from tests.pg_cluster import PgCluster


def _rows(store: Store) -> list[tuple[int]]:
    with store.cursor() as cur:
        return [(int(r[0]),) for r in cur.execute("SELECT n FROM scratch ORDER BY n").fetchall()]


_CONFLICTS = {
    "duckdb": duckdb.TransactionException("Conflict on update!"),
    "postgresql": psycopg.errors.SerializationFailure("could not serialize access due to concurrent update"),
}


@pytest.fixture
def scratch(db_target: str) -> Iterator[Store]:
    with Store.open(db_target) as store:
        with store.cursor() as cur:
            cur.execute("CREATE TABLE scratch (n INTEGER)")
        yield store


def test_a_transaction_commits_its_work_and_returns_its_result(scratch: Store) -> None:
    def work(cur: Cursor) -> str:
        cur.execute("INSERT INTO scratch VALUES (1), (2)")
        return "done"

    assert scratch.transaction(work) == "done"
    assert _rows(scratch) == [(1,), (2,)]


def test_a_failing_transaction_leaves_nothing(scratch: Store) -> None:
    def work(cur: Cursor) -> None:
        cur.execute("INSERT INTO scratch VALUES (1)")
        raise ValueError("half way")

    with pytest.raises(ValueError, match="half way"):
        scratch.transaction(work)
    assert _rows(scratch) == []


def test_a_conflicting_transaction_is_run_again(scratch: Store, backend: str) -> None:
    calls: list[int] = []

    def work(cur: Cursor) -> None:
        calls.append(1)
        cur.execute("INSERT INTO scratch VALUES (?)", [len(calls)])
        if len(calls) < 3:
            raise _CONFLICTS[backend]

    scratch.transaction(work)
    assert len(calls) == 3
    assert _rows(scratch) == [(3,)]  # the two conflicting attempts were rolled back


def test_a_conflict_that_never_clears_is_raised(scratch: Store, backend: str) -> None:
    calls: list[int] = []

    def work(cur: Cursor) -> None:
        calls.append(1)
        raise _CONFLICTS[backend]

    with pytest.raises(type(_CONFLICTS[backend])):
        scratch.transaction(work)
    assert len(calls) == 6


def test_derived_structures_are_built_once_per_snapshot(store: Store, db_target: str) -> None:
    builds: list[int] = []

    def build(snapshot: CatalogSnapshot) -> int:
        builds.append(snapshot.generation)
        return len(snapshot.gpus)

    key = Derived("gpu count", build)
    snapshot = store.snapshot
    assert snapshot.derive(key) == snapshot.derive(key) == len(snapshot.gpus)
    assert builds == [snapshot.generation]
    fresh = Store.open(db_target)
    try:
        fresh.refresh_snapshot()
        assert fresh.snapshot.generation == 2
        assert fresh.snapshot.derive(key) == len(snapshot.gpus)
        assert len(builds) == 2
    finally:
        fresh.close()


def test_a_transaction_lock_makes_the_next_holder_wait_and_see_the_first_ones_write(
    db_target: str, backend: str
) -> None:
    """Two processes on one PostgreSQL database (two stores, two pools), or two threads of the one
    process that owns a DuckDB file: the second transaction naming the lock waits for the first to
    commit, then reads its row (what keeps two imports of a source from both passing the 409 check)."""
    first = Store.open(db_target)
    second = Store.open(db_target) if backend == "postgresql" else first
    try:
        first.transaction(lambda cur: cur.execute("CREATE TABLE locked (n INTEGER)"))
        inside = threading.Event()

        def slow(cur: Cursor) -> None:
            cur.execute("INSERT INTO locked VALUES (1)")
            inside.set()
            time.sleep(0.5)

        holder = threading.Thread(target=lambda: first.transaction(slow, lock="price_sheets:acme"))
        holder.start()
        assert inside.wait(10)
        started = time.monotonic()
        seen = second.transaction(
            lambda cur: cur.execute("SELECT count(*) FROM locked").fetchone(), lock="price_sheets:acme"
        )
        waited = time.monotonic() - started
        holder.join()
        unlocked = second.transaction(lambda cur: cur.execute("SELECT count(*) FROM locked").fetchone())
    finally:
        if second is not first:
            second.close()
        first.close()
    assert seen == (1,) and waited > 0.25
    assert unlocked == (1,)


def test_connections_the_server_dropped_are_replaced_not_handed_out(pg_cluster: PgCluster) -> None:
    """After a PostgreSQL restart or an idle-connection kill every pooled connection is dead; each one
    is checked when taken, so the next requests are answered (not one 503 per dead connection).
    PostgreSQL only: a DuckDB file has no server to drop connections."""
    db_target = pg_cluster.fresh_url()
    with Store.open(db_target) as store:
        with store.cursor() as cur:  # the pool holds connections now
            assert cur.execute("SELECT 1").fetchone() == (1,)
        with psycopg.connect(db_target, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        for _ in range(3):
            with store.cursor() as cur:
                assert cur.execute("SELECT 1").fetchone() == (1,)


def test_a_new_price_sheet_keeps_the_fitted_profile_index(store: Store) -> None:
    before = store.snapshot
    index = before.profile_index()
    body = (REPO / "examples/sheets/acme.csv").read_bytes()
    import_sheet(store, source="acme", fmt="rental_csv", body=body, origin="test")
    store.refresh_snapshot()
    after = store.snapshot
    assert after.generation > before.generation and after.profiles == before.profiles
    assert after.profile_index() is index  # taken over: profiles and GPUs did not change


def test_a_serving_store_builds_the_profile_index_before_the_first_plan(db_target: str) -> None:
    with Store.open(db_target) as store:
        snapshot = store.snapshot
        assert snapshot.built.built() == {}  # a store opened for one CLI command builds nothing
        store.keep_warm()
        deadline = time.monotonic() + 60
        while not snapshot.built.built() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(key.what == "profile index" for key in snapshot.built.built())


def test_a_warmed_snapshot_has_fitted_what_every_plan_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """warm() (run in the background at start and after every change) fits the class model and the
    efficiency-at-scale term, so the first plan does not: asking for the term afterwards fits nothing."""
    import solver.throughput.measured_runs as runs

    with Store.open(str(tmp_path / "warm.duckdb")) as store:
        snapshot = store.snapshot
        snapshot.warm()
        fits: list[object] = []
        original = runs.fit_scale_term
        monkeypatch.setattr(runs, "fit_scale_term", lambda points: fits.append(points) or original(points))
        assert runs.scale_term(snapshot.profile_index()).rows > 0 and fits == []
