"""``gpuplan db init|stats``, on a DuckDB file and on a PostgreSQL database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main
from service.db.migrations import MIGRATIONS
from tests.pg_cluster import PgCluster


def test_db_init_is_idempotent(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--db", cli_db]) == 0
    assert "already seeded" in capsys.readouterr().out


def test_db_stats_reports_rows_and_unresolved_names(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "stats", "--db", cli_db, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    rows = {t["table"]: t["rows"] for t in stats["tables"]}
    assert rows["gpus"] == 56 and rows["current_offers"] == 930
    assert stats["unresolved_gpu_names"] == []
    assert all(u["reason"] for u in stats["unusable_rows"])
    assert main(["db", "stats", "--db", cli_db]) == 0
    assert "unresolved GPU names: 0" in capsys.readouterr().out


def test_db_path_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "x.duckdb"
    assert main(["db", "init", "--db", str(path)]) == 0
    assert path.exists()


def test_db_init_and_stats_on_postgresql(pg_cluster: PgCluster, capsys: pytest.CaptureFixture[str]) -> None:
    url = pg_cluster.empty_url()
    assert main(["db", "init", "--db", url]) == 0
    first = capsys.readouterr().out
    assert "seeded now" in first and f"schema version {len(MIGRATIONS)}" in first
    assert main(["db", "init", "--db", url]) == 0
    assert "already seeded" in capsys.readouterr().out
    assert main(["db", "stats", "--db", url, "--json"]) == 0
    rows = {t["table"]: t["rows"] for t in json.loads(capsys.readouterr().out)["tables"]}
    assert rows["gpus"] == 56 and rows["current_offers"] == 930
