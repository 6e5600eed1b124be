"""Replicas on one PostgreSQL database: a write by one reloads the others' snapshots (on its notice, or
by the poll when notices are lost), and a run lock is held by one store at a time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import psycopg
import pytest

from service.db.backend import Cursor
from service.db.catalog_watch import CatalogWatcher
from service.db.store import Store
from tests.pg_cluster import PgCluster


def _drop_a_serving_profile(cur: Cursor) -> None:
    cur.execute(
        "DELETE FROM serving_profiles WHERE serving_id = (SELECT max(serving_id) FROM serving_profiles)"
    )


def _quietly(work: Callable[[Cursor], None]) -> Callable[[Cursor], None]:
    """``work`` with triggers off (a superuser's ``session_replication_role``): no notice is sent."""

    def quiet(cur: Cursor) -> None:
        cur.execute("SET LOCAL session_replication_role = replica")
        work(cur)

    return quiet


def _reloaded_within(store: Store, generation: int, limit_s: float) -> float:
    """Seconds until ``store``'s snapshot is newer than ``generation`` (an assertion after ``limit_s``)."""
    started = time.monotonic()
    while store.snapshot.generation == generation:
        assert time.monotonic() - started < limit_s, f"no reload within {limit_s:g} s"
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_write_by_another_store_reloads_the_snapshot_on_its_notice(pg_cluster: PgCluster) -> None:
    url = pg_cluster.fresh_url()
    with Store.open(url) as watching, Store.open(url) as writing:
        watching.watch_catalog(poll_s=60)  # a poll would come far too late: only the notice can reload
        time.sleep(0.2)  # the watcher's first check is done
        generation, serving = watching.snapshot.generation, len(watching.snapshot.serving)
        writing.transaction(_drop_a_serving_profile)
        assert _reloaded_within(watching, generation, 2.0) < 2.0
        assert len(watching.snapshot.serving) == serving - 1
        assert watching.snapshot_state == writing.catalog_state()


def test_without_notices_the_poll_reloads_within_two_seconds(pg_cluster: PgCluster) -> None:
    url = pg_cluster.fresh_url()
    with Store.open(url) as watching, Store.open(url) as writing:
        watching.watch_catalog()  # the default poll: every second
        time.sleep(0.2)
        with psycopg.connect(url, autocommit=True) as admin:  # the listening session is killed
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name LIKE 'gpuplan % listen gpuplan_catalog'"
            ).fetchall()
        assert killed == [(True,)]
        generation, serving = watching.snapshot.generation, len(watching.snapshot.serving)
        writing.transaction(_quietly(_drop_a_serving_profile))  # and the write sends no notice
        assert _reloaded_within(watching, generation, 2.0) < 2.0
        assert len(watching.snapshot.serving) == serving - 1
        # the watcher listens again after losing its connection: the next write is heard at once
        generation = watching.snapshot.generation
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with psycopg.connect(url, autocommit=True) as admin:
                listening = admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' "
                    "AND datname = current_database() AND application_name LIKE 'gpuplan % listen gpuplan_catalog'"
                ).fetchone()
            if listening == (1,):
                break
            time.sleep(0.05)
        assert listening == (1,)


def test_a_run_lock_is_held_by_one_store_of_a_database_at_a_time(pg_cluster: PgCluster) -> None:
    url = pg_cluster.fresh_url()
    with Store.open(url) as first, Store.open(url) as second:
        with first.run_lock("job", wait=False) as held:
            assert held
            with second.run_lock("job", wait=False) as also:
                assert not also
            with second.run_lock("other job", wait=False) as other:
                assert other
        with second.run_lock("job", wait=False) as after:
            assert after


def test_a_waiting_run_lock_is_got_when_the_holder_lets_go(db_target: str) -> None:
    """Both backends: a second thread's try fails while the lock is held, and its wait ends at release."""
    with Store.open(db_target) as store:
        got: list[tuple[str, float]] = []

        def take(wait: bool) -> None:
            with store.run_lock("job", wait=wait) as held:
                got.append(("wait" if wait else "try", time.monotonic() if held else -1.0))

        with store.run_lock("job", wait=True) as held:
            assert held
            trying = threading.Thread(target=take, args=(False,))
            trying.start()
            trying.join()
            waiting = threading.Thread(target=take, args=(True,))
            waiting.start()
            time.sleep(0.3)
            assert got == [("try", -1.0)]  # the waiter is still waiting
            let_go = time.monotonic()
        waiting.join(timeout=10)
        assert got[1][0] == "wait" and got[1][1] >= let_go


def test_a_failing_reload_is_logged_and_the_watcher_keeps_polling(caplog: pytest.LogCaptureFixture) -> None:
    """A bug in one reload (here a KeyError) must not end the watcher: a replica would serve a stale
    catalog from then on. It is logged with its traceback, and the next poll checks again."""
    calls: list[float] = []
    again = threading.Event()

    def check() -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise KeyError("a candidate offer without its kind's counts")
        again.set()

    watcher = CatalogWatcher(lambda: None, check, poll_s=0.05)
    with caplog.at_level(logging.ERROR, logger="gpuplan.store"):
        watcher.start()
        try:
            assert again.wait(5), "the watcher stopped after the failing reload"
        finally:
            watcher.stop()
    assert any("catalog reload failed" in r.message and r.exc_info for r in caplog.records)
