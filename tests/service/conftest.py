"""Fixtures of the service tests: a seeded database file for the ``gpuplan`` command line."""

from __future__ import annotations

import pytest

from service.cli import main


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database file created, migrated and seeded by ``gpuplan db init`` (one per test module)."""
    path = str(tmp_path_factory.mktemp("cli") / "gpuplan.duckdb")
    assert main(["--db", path, "db", "init"]) == 0
    return path
