"""``gpuplan db init|stats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main


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
