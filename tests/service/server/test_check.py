"""``gpuplan check``: one ok/FAIL line per check (database, admin token, each source) and exit 1 on any
failure; sources are fetched and parsed, never imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main
from service.db.store import Store
from tests.service.admin import TOKEN
from tests.service.live_server import free_port, serve_process
from tests.service.price_sheets.test_refresh import SHEET


def _lines(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """The check lines by their name's first word pair: ``{"database": "ok …", "source acme": …}``."""
    out = capsys.readouterr().out
    lines = {}
    for line in out.splitlines():
        status, _, rest = line.partition("  ")
        rest = rest.strip()
        if status.strip() in ("ok", "FAIL"):
            name = " ".join(rest.split()[:2]) if rest.startswith("source ") else rest.split()[0]
            lines[name] = f"{status.strip()} {rest.strip()}"
    return lines


def _sources(tmp_path: Path, bad_sheet: bool = False, missing: bool = False) -> str:
    good = tmp_path / "acme.csv"
    good.write_text(SHEET)
    body = f'[[source]]\nname = "acme"\nurl = "{good}"\nformat = "rental_csv"\n'
    if bad_sheet:
        broken = tmp_path / "broken.csv"
        broken.write_text(SHEET.replace("2.6", "cheap"))
        body += f'[[source]]\nname = "broken"\nurl = "{broken}"\nformat = "rental_csv"\n'
    if missing:
        body += f'[[source]]\nname = "gone"\nurl = "{tmp_path / "nope.csv"}"\nformat = "rental_csv"\n'
    path = tmp_path / "sources.toml"
    path.write_text(body)
    return str(path)


def test_everything_in_order_passes(
    cli_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("GPUPLAN_SOURCES", _sources(tmp_path))
    with Store.open(cli_db) as store:
        versions_before = store.transaction(
            lambda cur: cur.execute("SELECT count(*) FROM price_sheets").fetchone()
        )
    assert main(["--db", cli_db, "check"]) == 0
    lines = _lines(capsys)
    assert lines["database"].startswith("ok ") and "takes a write" in lines["database"]
    assert lines["admin"].startswith("ok ")
    assert lines["source acme"].startswith("ok ") and "2 rows parse" in lines["source acme"]
    with Store.open(cli_db) as store:  # checked, not imported
        after = store.transaction(lambda cur: cur.execute("SELECT count(*) FROM price_sheets").fetchone())
    assert after == versions_before


def test_each_failure_is_its_own_line_and_exit_1(
    cli_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GPUPLAN_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("GPUPLAN_SOURCES", _sources(tmp_path, bad_sheet=True, missing=True))
    assert main(["--db", cli_db, "check"]) == 1
    lines = _lines(capsys)
    assert lines["database"].startswith("ok ")
    assert lines["admin"].startswith("FAIL ") and "GPUPLAN_ADMIN_TOKEN is not set" in lines["admin"]
    assert lines["source acme"].startswith("ok ")
    assert lines["source broken"].startswith("FAIL ") and "line 2" in lines["source broken"]
    assert lines["source gone"].startswith("FAIL ") and "cannot read" in lines["source gone"]


def test_a_corrupt_database_fails_and_sources_still_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("GPUPLAN_SOURCES", _sources(tmp_path))
    assert main(["--db", str(corrupt), "check"]) == 1
    lines = _lines(capsys)
    assert lines["database"].startswith("FAIL ")
    assert lines["source acme"].startswith("ok ")  # parsed against the shipped catalog


def test_a_database_not_created_yet_needs_a_writable_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    monkeypatch.delenv("GPUPLAN_SOURCES", raising=False)
    fresh = tmp_path / "new" / "gpuplan.duckdb"
    assert main(["--db", str(fresh), "check"]) == 0
    lines = _lines(capsys)
    assert lines["database"].startswith("ok ") and "not created yet" in lines["database"]
    assert not fresh.exists()
    assert lines["sources"].startswith("ok ") and "none configured" in lines["sources"]


def test_a_database_held_by_a_running_server_is_checked_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    monkeypatch.delenv("GPUPLAN_SOURCES", raising=False)
    db = str(tmp_path / "served.duckdb")
    with serve_process(db) as (url, _process):
        assert main(["check", "--db", db, "--url", url]) == 0
        held = _lines(capsys)["database"]
        assert held.startswith("ok ") and f"held by the server at {url}" in held
        assert "db_writable ok" in held
        assert main(["check", "--db", db, "--url", f"http://127.0.0.1:{free_port()}"]) == 1
        unanswered = _lines(capsys)["database"]
        assert (
            unanswered.startswith("FAIL ")
            and "holds it" in unanswered
            and "No gpuplan server answers" in unanswered
        )
