"""Fixtures of the service tests: a seeded database file for the ``gpuplan`` command line, and JSON body
files for the commands that read one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from service.cli import main


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
