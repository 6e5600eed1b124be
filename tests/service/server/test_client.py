"""Every CLI command works while a running server holds the DuckDB file: it asks that server (found at
GPUPLAN_HOST:GPUPLAN_PORT, or named by ``--url``) and prints what it prints on a database of its own;
a file held by anything else is refused with the holder's PID and the ways out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from service.cli import main
from tests.service.live_server import free_port, serve_process

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
TOKEN = "client-test-admin-token-0123456789"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A ``gpuplan serve`` process holding a database file of its own: (its URL, the file)."""
    db = str(tmp_path_factory.mktemp("held") / "gpuplan.duckdb")
    with serve_process(db, env={"GPUPLAN_ADMIN_TOKEN": TOKEN}) as (url, _process):
        yield url, db


@pytest.fixture
def beside(served: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """This shell as a user's beside the server: GPUPLAN_DB is its file, GPUPLAN_PORT its port."""
    url, db = served
    parts = urlsplit(url)
    monkeypatch.setenv("GPUPLAN_DB", db)
    monkeypatch.setenv("GPUPLAN_HOST", str(parts.hostname))
    monkeypatch.setenv("GPUPLAN_PORT", str(parts.port))
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    return db


def _json(argv: list[str], capfd: pytest.CaptureFixture[str]) -> object:
    assert main(argv) == 0, capfd.readouterr().err
    return json.loads(capfd.readouterr().out)


READS = [
    ["gpus", "--json"],
    ["gpus", "--mig", "--json"],
    ["offers", "--gpu", "H100", "--min-gpus", "8", "--sort", "-price_per_hour_usd", "--json"],
    ["memory", str(EXAMPLES / "estimates" / "memory-qlora.json"), "--json"],
    ["throughput", str(EXAMPLES / "estimates" / "throughput-train.json"), "--json"],
    ["prices", "providers", "--json"],
    [
        "buy-vs-rent",
        "--gpu",
        "h100-sxm",
        "--gpu-count",
        "8",
        "--horizon-months",
        "36",
        "--utilization",
        "0.7",
        "--json",
    ],
]


@pytest.mark.parametrize("argv", READS, ids=lambda argv: " ".join(argv[:2]))
def test_a_read_beside_the_server_prints_what_it_prints_on_its_own_database(
    argv: list[str], beside: str, cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    through_server = _json(argv, capfd)
    assert _json([*argv, "--db", cli_db], capfd) == through_server


def test_db_stats_and_init_beside_the_server(
    beside: str, cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    stats = _json(["db", "stats", "--json"], capfd)
    assert isinstance(stats, dict) and stats["path"] == beside  # shown: the CLI sends the admin token
    local = _json(["db", "stats", "--json", "--db", cli_db], capfd)
    assert isinstance(local, dict) and {**local, "path": beside} == stats
    assert main(["db", "init"]) == 0
    out = capfd.readouterr().out
    assert "held by the gpuplan server" in out and "schema version" in out


def test_a_plan_and_the_sheet_history_beside_the_server(
    beside: str, capfd: pytest.CaptureFixture[str]
) -> None:
    plan = _json(["plan", str(EXAMPLES / "workloads" / "pretrain-1b.json"), "--json"], capfd)
    assert isinstance(plan, dict) and plan["plan_id"].startswith("pl-")
    assert main(["prices", "history", "--source", "seed"]) == 0
    assert "3 of 3 versions" in capfd.readouterr().out
    offer = _json(["offers", "--limit", "1", "--json"], capfd)
    assert isinstance(offer, dict)
    assert main(["prices", "history", "--offer", offer["items"][0]["offer_id"]]) == 0
    assert "version" in capfd.readouterr().out


def test_an_import_beside_the_server_needs_its_token(
    beside: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    sheet = str(EXAMPLES / "sheets" / "acme.csv")
    argv = ["prices", "import", sheet, "--source", "acme-client", "--format", "rental_csv"]
    monkeypatch.delenv("GPUPLAN_ADMIN_TOKEN")
    assert main(argv) == 1
    assert "set GPUPLAN_ADMIN_TOKEN" in capfd.readouterr().err
    monkeypatch.setenv("GPUPLAN_ADMIN_TOKEN", TOKEN)
    assert main(argv) == 0
    out = capfd.readouterr().out
    assert "ok, 4 of 4 rows usable" in out and "the first version of source acme-client: 4 added" in out
    assert "None" not in out
    assert main(argv) == 0
    assert "unchanged" in capfd.readouterr().out
    bad = Path(beside).parent / "bad.csv"
    bad.write_text(Path(sheet).read_text().replace("acme.l4", "acme.l4,extra", 1))
    assert main(["prices", "import", str(bad), "--source", "acme-client", "--format", "rental_csv"]) == 1
    assert "rejected" in capfd.readouterr().out
    assert main(["prices", "refresh"]) == 0  # the server's own sources: none configured
    assert "no sources configured" in capfd.readouterr().out


def test_a_problem_of_the_server_is_the_cli_error(beside: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["offers", "--provider", "awz"]) == 2
    assert "provider: unknown provider 'awz'" in capfd.readouterr().err
    assert main(["prices", "history", "--offer", "of-nope"]) == 1
    assert capfd.readouterr().err.startswith("gpuplan: ")


def test_url_names_the_server(
    served: tuple[str, str], cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    url, _ = served
    assert main(["gpus", "--url", url, "--json", "--db", cli_db]) == 0  # --url wins over --db
    assert json.loads(capfd.readouterr().out)["total"] == 56
    assert main(["--url", "http://127.0.0.1:9", "gpus"]) == 1
    assert "cannot reach http://127.0.0.1:9" in capfd.readouterr().err


def test_a_file_held_by_another_process_names_it(
    served: tuple[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """No server answers, or the one that answers is not the holder: the lock error, with the PID."""
    path = tmp_path / "other.duckdb"
    code = f"import duckdb, sys; c = duckdb.connect({str(path)!r}); print(1, flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline()  # the file is held now
            monkeypatch.setenv("GPUPLAN_PORT", str(free_port()))
            assert main(["gpus", "--db", str(path)]) == 1
            err = capfd.readouterr().err
            assert f"process {holder.pid} (" in err and "No gpuplan server answers" in err and "--url" in err
            monkeypatch.setenv("GPUPLAN_PORT", str(urlsplit(served[0]).port))
            assert main(["gpus", "--db", str(path)]) == 1
            err = capfd.readouterr().err
            assert f"process {holder.pid} (" in err and "serving another database" in err
        finally:
            holder.kill()
    assert os.path.exists(path)
