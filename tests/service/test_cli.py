from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "gpuplan.duckdb")
    assert main(["--db", path, "db", "init"]) == 0
    return path


def test_db_init_is_idempotent(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--db", db]) == 0
    assert "already seeded" in capsys.readouterr().out


def test_db_stats_reports_rows_and_unresolved_names(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "stats", "--db", db, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    rows = {t["table"]: t["rows"] for t in stats["tables"]}
    assert rows["gpus"] == 56 and rows["current_offers"] == 930
    assert stats["unresolved_gpu_names"] == []
    assert all(u["reason"] for u in stats["unusable_rows"])
    assert main(["db", "stats", "--db", db]) == 0
    assert "unresolved GPU names: 0" in capsys.readouterr().out


def test_gpus_table(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm" in out and "56 GPUs" in out


def test_offers_filters_match_the_api(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["offers", "--db", db, "--gpu", "H100", "--min-gpus", "8", "--json", "--limit", "1000"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert page["items"] and all(
        o["gpus_per_instance"] >= 8 and o["gpu_id"].startswith("h100") for o in page["items"]
    )
    assert main(["offers", "--db", db, "--gpu", "H100", "--limit", "3"]) == 0
    assert "3 of" in capsys.readouterr().out


def test_bad_filter_is_a_clear_error(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["offers", "--db", db, "--provider", "awz"]) == 2
    assert "did you mean aws" in capsys.readouterr().err


def test_bad_environment_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_PORT", "eighty")
    assert main(["gpus"]) == 2
    assert "GPUPLAN_PORT" in capsys.readouterr().err


def test_db_path_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "x.duckdb"
    assert main(["db", "init", "--db", str(path)]) == 0
    assert path.exists()
