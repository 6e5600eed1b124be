"""Admission to the planner: a per-client rate limit on POST /v1/plans (429 + Retry-After) and a
bounded queue in front of the solver slots (503 + Retry-After at once when full)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from litestar.stores.memory import MemoryStore
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.errors import Overloaded
from service.plans.admission import PLAN_CONCURRENCY, PlanQueue, _SharedRateLimit, _SweepingRateLimit
from service.settings import Settings
from tests.perf.workloads import PLAN_BODIES


@pytest.fixture(scope="module")
def store(fresh_db: Callable[[], str]) -> Iterator[Store]:
    opened = Store.open(fresh_db())
    yield opened
    opened.close()


def test_beyond_the_rate_a_client_gets_429_with_retry_after(store: Store) -> None:
    app = create_app(Settings(db_path=":memory:", plan_rate=("minute", 3)), store=store)
    with TestClient(app) as client:
        statuses = [client.post("/v1/plans", json=PLAN_BODIES[0]).status_code for _ in range(4)]
        assert statuses == [201, 201, 201, 429]
        refused = client.post("/v1/plans", json=PLAN_BODIES[0])
        assert refused.status_code == 429
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.json()["status"] == 429
        assert client.get("/v1/plans").status_code == 200  # reads are not limited
        assert client.get("/health").status_code == 200


def _from_address(app: Any) -> Any:
    """``app`` behind a stand-in for the network: the client address is the ``X-Test-Client`` header
    (Litestar's test client calls every client "testclient")."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"x-test-client", b"testclient").decode()
            scope = {**scope, "client": (host, 50000)}
        await app(scope, receive, send)

    return wrapped


def test_the_rate_is_per_client_address(store: Store) -> None:
    app = create_app(Settings(db_path=":memory:", plan_rate=("minute", 1)), store=store)
    with TestClient(_from_address(app)) as client:
        first, second = {"X-Test-Client": "10.0.0.1"}, {"X-Test-Client": "10.0.0.2"}
        assert client.post("/v1/plans", json=PLAN_BODIES[0], headers=first).status_code == 201
        assert client.post("/v1/plans", json=PLAN_BODIES[0], headers=first).status_code == 429
        assert client.post("/v1/plans", json=PLAN_BODIES[0], headers=second).status_code == 201
        assert client.post("/v1/plans", json=PLAN_BODIES[0], headers=second).status_code == 429


def _windows(app: Any, store: Store) -> int:
    """The rate windows held: in this process's memory store (DuckDB), in the database (PostgreSQL)."""
    if store.backend_name == "postgresql":
        with store.cursor() as cur:
            row = cur.execute(
                "SELECT count(*) FROM rate_limit_windows WHERE client_key LIKE '%::5/second'"
            ).fetchone()
        return int(row[0]) if row else 0
    entries = app.stores.get("rate_limit")
    assert isinstance(entries, MemoryStore)
    return len(entries._store)


def _sweeps_held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Sweeps on every request, but only once the returned event is set: a plan that takes over a
    second on a loaded machine would otherwise see the first window swept before it is counted."""
    allowed = threading.Event()
    for middleware in (_SweepingRateLimit, _SharedRateLimit):
        original = middleware.sweep

        async def gated(self: Any, store: Any, _original: Any = original) -> None:
            if allowed.is_set():
                await _original(self, store)

        monkeypatch.setattr(middleware, "sweep", gated)
    monkeypatch.setattr(_SweepingRateLimit, "sweep_every_s", 0.0)
    return allowed


def test_entries_of_clients_gone_quiet_are_swept(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    sweeps = _sweeps_held(monkeypatch)
    app = create_app(Settings(db_path=":memory:", plan_rate=("second", 5)), store=store)
    with TestClient(_from_address(app)) as client:
        for host in ("10.0.0.1", "10.0.0.2"):
            response = client.post("/v1/plans", json=PLAN_BODIES[0], headers={"X-Test-Client": host})
            assert response.status_code == 201
        assert _windows(app, store) == 2
        sweeps.set()
        time.sleep(2.2)  # both entries' one-second windows are over (the database counts whole seconds)
        assert client.get("/health").status_code == 200  # any request sweeps
        assert _windows(app, store) == 0


def test_the_rate_setting_is_parsed_and_checked() -> None:
    assert Settings.from_env({}).plan_rate == ("minute", 600)
    assert Settings.from_env({"GPUPLAN_PLAN_RATE": "5/second"}).plan_rate == ("second", 5)
    assert Settings.from_env({"GPUPLAN_PLAN_RATE": "0"}).plan_rate is None
    assert Settings.from_env({"GPUPLAN_PLAN_QUEUE": "0"}).plan_queue == 0
    for key, value in [
        ("GPUPLAN_PLAN_RATE", "5/fortnight"),
        ("GPUPLAN_PLAN_RATE", "x/minute"),
        ("GPUPLAN_PLAN_RATE", "0/minute"),
        ("GPUPLAN_PLAN_QUEUE", "-1"),
        ("GPUPLAN_PLAN_QUEUE", "many"),
    ]:
        with pytest.raises(ValueError, match=key):
            Settings.from_env({key: value})


def test_a_full_queue_refuses_at_once() -> None:
    release = threading.Event()
    queue = PlanQueue(slots=2, waiting=1, retry_after_s=3)

    def blocked() -> str:
        release.wait(10)
        return "done"

    async def scenario() -> tuple[list[str], Overloaded | None]:
        results: list[str] = []
        refused: Overloaded | None = None

        async def one() -> None:
            results.append(await queue.run(blocked))

        async with anyio.create_task_group() as group:
            for _ in range(3):  # two run, one waits
                group.start_soon(one)
            while queue.admitted < 3:
                await anyio.sleep(0.01)
            try:
                await queue.run(blocked)  # a fourth: refused without waiting
            except Overloaded as exc:
                refused = exc
            release.set()
        return results, refused

    results, refused = anyio.run(scenario)
    assert results == ["done"] * 3
    assert refused is not None and refused.status_code == 503 and refused.headers == {"Retry-After": "3"}
    assert queue.admitted == 0


def test_a_full_queue_is_a_503_problem_with_retry_after(store: Store) -> None:
    app = create_app(Settings(db_path=":memory:", plan_rate=None, plan_queue=2), store=store)
    queue = app.dependencies["plan_queue"].dependency()
    assert isinstance(queue, PlanQueue) and (queue.slots, queue.waiting) == (PLAN_CONCURRENCY, 2)
    with TestClient(app) as client:
        queue.admitted = queue.slots + queue.waiting  # as if six plans were running or waiting
        refused = client.post("/v1/plans", json=PLAN_BODIES[0])
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["title"] == "Service busy"
        queue.admitted -= 1  # one left: the next request is admitted
        assert client.post("/v1/plans", json=PLAN_BODIES[0]).status_code == 201
