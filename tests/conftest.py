"""Shared fixtures: the store backends every API test runs on, one seeded store per backend and test
session, and an HTTP client on it.

``backend`` is ``duckdb`` (an in-memory database) or ``postgresql`` (a database on a throw-away server
started once per session, ``tests.pg_cluster``); ``GPUPLAN_TEST_BACKENDS=duckdb`` narrows a local run.
Every fixture that opens a store derives from ``backend``, so a test runs once per backend.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.backend import BACKEND_NAMES
from service.db.store import Store
from service.settings import Settings
from tests.pg_cluster import PgCluster, PostgresUnavailable, start_cluster

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per test request is noise

BACKENDS = tuple(os.environ.get("GPUPLAN_TEST_BACKENDS", ",".join(BACKEND_NAMES)).split(","))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """The throw-away PostgreSQL server (started on first use); a clear failure when there is none."""
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend this test runs on."""
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def fresh_db(request: pytest.FixtureRequest, backend: str) -> Callable[[], str]:
    """Makes a new seeded database of the test's backend and returns its ``--db`` target."""
    if backend == "duckdb":
        return lambda: ":memory:"
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    return cluster.fresh_url


@pytest.fixture
def db_target(fresh_db: Callable[[], str]) -> str:
    """A new seeded database of the test's backend, for a store of the test's own."""
    return fresh_db()


@pytest.fixture
def empty_target(request: pytest.FixtureRequest, backend: str) -> str:
    """A new empty database of the test's backend (neither migrated nor seeded)."""
    if backend == "duckdb":
        return ":memory:"
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    return cluster.empty_url()


@pytest.fixture(scope="session")
def store(fresh_db: Callable[[], str]) -> Iterator[Store]:
    opened = Store.open(fresh_db())
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session")
def client(store: Store) -> Iterator[TestClient]:  # type: ignore[type-arg]
    app = create_app(Settings(db_path=":memory:"), store=store)
    with TestClient(app) as test_client:
        yield test_client
