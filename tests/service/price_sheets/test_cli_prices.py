from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main

SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd
acme,a.h100x1,H100 SXM,1,eu-1,2.6
"""


def test_import_history_and_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "db.duckdb")
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    assert (
        main(["prices", "import", str(sheet), "--source", "acme", "--format", "rental_csv", "--db", db]) == 0
    )
    assert "ok" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    bad.write_text(SHEET + "acme,x,Z9000,1,eu-1,1\n")
    assert main(["prices", "import", str(bad), "--source", "acme", "--format", "rental_csv", "--db", db]) == 1
    assert "Z9000" in capsys.readouterr().out
    assert main(["prices", "history", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "acme" in out and "seed" in out
    assert main(["prices", "refresh", "--db", db]) == 2
    assert "GPUPLAN_SOURCES" in capsys.readouterr().err
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    monkeypatch.setenv("GPUPLAN_SOURCES", str(sources))
    assert main(["prices", "refresh", "--db", db]) == 0
    assert "unchanged" in capsys.readouterr().out


def test_refresh_exits_1_when_a_source_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CronJob running ``gpuplan prices refresh`` sees a failed source as a failed job."""
    db = str(tmp_path / "db.duckdb")
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    sources = tmp_path / "sources.toml"
    sources.write_text(
        f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n\n'
        f'[[source]]\nname = "gone"\nurl = "{tmp_path / "missing.csv"}"\nformat = "rental_csv"\nretries = 1\n'
    )
    monkeypatch.setenv("GPUPLAN_SOURCES", str(sources))
    assert main(["prices", "refresh", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "cannot read" in out  # the good source is still imported
    assert main(["prices", "refresh", "--source", "acme", "--db", db]) == 0
    assert "unchanged" in capsys.readouterr().out
