"""Fixtures of the service tests: a seeded database file for the ``gpuplan`` command line, JSON body
files for the commands that read one, and an admin client on a store of its own."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.cli import main
from service.db.store import Store
from service.settings import Settings
from tests.service.admin import TOKEN


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database file created, migrated and seeded by ``gpuplan db init`` (one per test module)."""
    path = str(tmp_path_factory.mktemp("cli") / "gpuplan.duckdb")
    assert main(["--db", path, "db", "init"]) == 0
    return path


@pytest.fixture
def body_file(tmp_path: Path) -> Callable[[object], str]:
    """Write a request body as JSON to a file and return its path (the argument of ``gpuplan plan`` …)."""

    def write(body: object) -> str:
        path = tmp_path / "body.json"
        path.write_text(json.dumps(body))
        return str(path)

    return write


@pytest.fixture
def admin(db_target: str) -> Iterator[TestClient[Any]]:
    """A client of a fresh store (of the test's backend) with the admin token set
    (``tests.service.admin.AUTH``), so uploads change nothing other tests see and versions start from
    the seed alone."""
    store = Store.open(db_target)
    with TestClient(create_app(Settings(db_path=db_target, admin_token=TOKEN), store=store)) as client:
        yield client
    store.close()
