"""Shared fixtures: one seeded in-memory store per test session, and an HTTP client on it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per test request is noise


@pytest.fixture(scope="session")
def store() -> Iterator[Store]:
    opened = Store.open(":memory:")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session")
def client(store: Store) -> Iterator[TestClient]:  # type: ignore[type-arg]
    app = create_app(Settings(db_path=":memory:"), store=store)
    with TestClient(app) as test_client:
        yield test_client
