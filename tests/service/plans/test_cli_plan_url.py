"""`gpuplan plan --url` plans through a running server while that server holds the database file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.cli import main
from tests.service.live_server import free_port, serve_process

ROOT = Path(__file__).resolve().parents[3]
WORKLOAD = ROOT / "examples" / "workloads" / "lora.json"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A `gpuplan serve` process on a database file of its own: (its URL, the file)."""
    db = str(tmp_path_factory.mktemp("served") / "gpuplan.duckdb")
    with serve_process(db) as (url, _process):
        yield url, db


def test_plan_through_the_server_that_holds_the_db(
    server: tuple[str, str], capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, db = server
    monkeypatch.setenv("GPUPLAN_PORT", str(free_port()))  # no server there: the file is refused
    assert main(["plan", str(WORKLOAD), "--db", db]) == 1
    assert "holds it" in capfd.readouterr().err
    monkeypatch.setenv("GPUPLAN_PORT", url.rsplit(":", 1)[1])  # the holder is asked
    assert main(["plan", str(WORKLOAD), "--db", db, "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["kind"] == "fine_tune"
    assert main(["plan", str(WORKLOAD), "--url", url, "--json"]) == 0
    plan = json.loads(capfd.readouterr().out)
    assert plan["plan_id"].startswith("pl-") and plan["kind"] == "fine_tune"
    assert main(["plan", str(WORKLOAD), "--url", url]) == 0
    assert "pl-" in capfd.readouterr().out


def test_plan_through_a_server_reports_its_problems(
    server: tuple[str, str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    url, _ = server
    impossible = tmp_path / "w.json"
    impossible.write_text(
        json.dumps(
            {
                "kind": "fine_tune",
                "model": {"name": "Llama 3.2 1B"},
                "method": "lora",
                "tokens": 10**8,
                "constraints": {"providers": ["no-such-provider"]},
            }
        )
    )
    assert main(["plan", str(impossible), "--url", url]) in (2, 3)
    assert capfd.readouterr().err.startswith("gpuplan: ")
    assert main(["plan", str(WORKLOAD), "--url", "http://127.0.0.1:9"]) == 1
    assert "cannot reach" in capfd.readouterr().err
