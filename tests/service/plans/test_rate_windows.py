"""The plan rate limit on PostgreSQL is one count per client shared by every replica: each request is
counted by one atomic statement in the database, so replicas together allow the rate once, not once
each, and concurrent requests on several replicas are each counted exactly once."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.plans.rate_windows import RateWindows
from service.settings import Settings
from tests.pg_cluster import PgCluster


@pytest.fixture(scope="module")
def replicas(pg_cluster: PgCluster) -> Iterator[tuple[Store, Store]]:
    """Two processes' stores on one PostgreSQL database, as two replicas hold them."""
    url = pg_cluster.fresh_url()
    first, second = Store.open(url), Store.open(url)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_replicas_share_one_rate(replicas: tuple[Store, Store]) -> None:
    settings = Settings(db_path=":memory:", plan_rate=("minute", 3))
    apps = [create_app(settings, store=store) for store in replicas]
    with TestClient(apps[0]) as one, TestClient(apps[1]) as other:
        # an empty body is refused (400) after it is counted: the limit comes first, and it is cheap
        statuses = [client.post("/v1/plans", json={}).status_code for client in (one, other, one, other, one)]
        assert statuses == [400, 400, 400, 429, 429]
        refused = other.post("/v1/plans", json={})
        assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.headers["ratelimit-remaining"] == "0"
        assert one.get("/v1/plans").status_code == 200  # reads are not limited


def test_concurrent_hits_on_two_replicas_are_each_counted_once(replicas: tuple[Store, Store]) -> None:
    windows = [RateWindows(store) for store in replicas]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(pool.map(lambda i: windows[i % 2].hit("test::concurrent", 60)[0], range(40)))
    assert sorted(counts) == list(range(1, 41))


def test_a_window_ends_and_is_forgotten(replicas: tuple[Store, Store]) -> None:
    windows = RateWindows(replicas[0])
    first, reset = windows.hit("test::short", 1)
    assert first == 1
    assert windows.hit("test::short", 1) == (2, reset)
    with replicas[0].cursor() as cur:
        cur.execute("UPDATE rate_limit_windows SET reset_at = reset_at - 5 WHERE client_key = 'test::short'")
    assert windows.hit("test::short", 1)[0] == 1  # the window had ended: a new one starts
    with replicas[1].cursor() as cur:
        cur.execute("UPDATE rate_limit_windows SET reset_at = reset_at - 5 WHERE client_key = 'test::short'")
    RateWindows(replicas[1]).delete_expired()
    with replicas[0].cursor() as cur:
        assert cur.execute(
            "SELECT count(*) FROM rate_limit_windows WHERE client_key = 'test::short'"
        ).fetchone() == (0,)
