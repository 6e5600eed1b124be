"""Scheduled refresh from configured sources: results, retries, status, scheduling, and the admin API."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.price_sheets.refresh import Refresher
from service.price_sheets.sources import SourceConfig, load_sources
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN

SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd
acme,a.h100x1,H100 SXM,1,eu-1,2.6
acme,a.l4,L4,1,eu-1,0.5
"""


def write_sources(tmp_path: Path, body: str) -> str:
    path = tmp_path / "sources.toml"
    path.write_text(body)
    return str(path)


def test_sources_file_is_validated(tmp_path: Path) -> None:
    good = write_sources(
        tmp_path, f'[[source]]\nname = "acme"\nurl = "{tmp_path}/a.csv"\nformat = "rental_csv"\n'
    )
    assert [s.name for s in load_sources(good)] == ["acme"]
    trial = "".join(  # a file or a loopback server may be asked every second (trials, tests)
        f'[[source]]\nname = "{name}"\nurl = "{url}"\nformat = "rental_csv"\ninterval_seconds = 1\n'
        for name, url in [
            ("f", f"{tmp_path}/a.csv"),
            ("l", "http://127.0.0.1:9/a.csv"),
            ("h", "http://localhost/a"),
        ]
    )
    assert [s.interval_seconds for s in load_sources(write_sources(tmp_path, trial))] == [1, 1, 1]
    for body, message in [
        ('[[source]]\nname = "acme"\n', "url"),
        ('[[source]]\nname = "acme"\nurl = "x"\nformat = "xml"\n', "format"),
        ('[[source]]\nname = "Bad!"\nurl = "x"\nformat = "rental_csv"\n', "source[0].name"),
        ('[[source]]\nname = "v"\nurl = "x"\nformat = "cloud_catalog_csv"\n', "needs a provider"),
        (
            '[[source]]\nname = "a"\nurl = "x"\nformat = "rental_csv"\ninterval_seconds = 0\n',
            "interval_seconds",
        ),
        (
            '[[source]]\nname = "a"\nurl = "https://example.com/a.csv"\nformat = "rental_csv"\ninterval_seconds = 59\n',
            "must be >= 60 for a remote URL, got 59",
        ),
        ("not toml ][", "not valid TOML"),
    ]:
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            load_sources(write_sources(tmp_path, body))


@pytest.fixture
def store(db_target: str) -> Iterator[Store]:
    opened = Store.open(db_target)
    yield opened
    opened.close()


def test_file_source_ok_unchanged_rejected_failed(store: Store, tmp_path: Path) -> None:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    waits: list[float] = []
    source = SourceConfig(name="acme", url=str(sheet), format="rental_csv", retries=3)
    refresher = Refresher(store, [source], sleep=waits.append)
    first = refresher.run("acme")
    assert first.result == "ok" and first.version is not None and first.attempts == 1
    assert refresher.run("acme").result == "unchanged"
    sheet.write_text(SHEET + "acme,broken,Z9000,1,eu-1,1\n")
    rejected = refresher.run("acme")
    assert (
        rejected.result == "rejected"
        and "Z9000" not in (rejected.error or "")
        and "line 4" in (rejected.error or "")
    )
    sheet.unlink()
    failed = refresher.run("acme")
    assert failed.result == "failed" and failed.attempts == 3 and "cannot read" in (failed.error or "")
    assert waits == [1.0, 2.0]  # exponential backoff between attempts
    # the accepted version is still current after the rejected and failed runs
    assert store.snapshot.offer_counts["acme"] == 2
    assert refresher.last_runs()["acme"].result == "failed"


class _Handler(http.server.BaseHTTPRequestHandler):
    body = SHEET.encode()

    def do_GET(self) -> None:
        if self.path == "/missing":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_base() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_source_with_status_and_size_limits(store: Store, http_base: str) -> None:
    sources = [
        SourceConfig(name="web", url=f"{http_base}/sheet.csv?token=secret", format="rental_csv"),
        SourceConfig(name="gone", url=f"{http_base}/missing", format="rental_csv", retries=1),
        SourceConfig(
            name="small", url=f"{http_base}/sheet.csv", format="rental_csv", max_bytes=10, retries=1
        ),
    ]
    refresher = Refresher(store, sources, sleep=lambda _: None)
    assert refresher.run("web").result == "ok"
    assert sources[0].public_url().endswith("/sheet.csv") and "secret" not in sources[0].public_url()
    gone = refresher.run("gone")
    assert gone.result == "failed" and "HTTP 404" in (gone.error or "")
    small = refresher.run("small")
    assert small.result == "failed" and "max_bytes" in (small.error or "")


def test_scheduler_runs_at_boot_and_api_reports_and_runs_now(db_target: str, tmp_path: Path) -> None:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    sources = write_sources(tmp_path, f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    store = Store.open(db_target)
    settings = Settings(db_path=":memory:", admin_token=TOKEN, sources_file=sources)
    try:
        with TestClient(create_app(settings, store=store)) as client:
            assert "refresh:acme" in client.get("/health").json()["scheduler"]["jobs"]
            deadline = time.monotonic() + 20
            status: dict[str, Any] = {}
            while time.monotonic() < deadline:
                status = client.get("/v1/price-sheets/refresh").json()["sources"][0]
                if status["last_run"]:
                    break
                time.sleep(0.1)
            assert status["last_run"]["result"] == "ok" and status["next_run_at"]
            assert client.post("/v1/price-sheets/refresh").status_code == 401
            auth = AUTH
            runs = client.post("/v1/price-sheets/refresh?wait=true", headers=auth).json()["runs"]
            assert [r["result"] for r in runs] == ["unchanged"]
            bad = client.post("/v1/price-sheets/refresh", params={"source": "nope"}, headers=auth)
            assert bad.status_code == 400 and bad.json()["field"] == "source"
    finally:
        store.close()


@pytest.mark.parametrize("run_scheduler", [True, False])
def test_scheduler_off_schedules_nothing_yet_is_ready_and_refreshes_on_request(
    tmp_path: Path, run_scheduler: bool
) -> None:
    """GPUPLAN_SCHEDULER=off: replicas that share a database leave refreshes to one CronJob, yet the
    sources stay configured (refresh now works) and readiness does not wait for a scheduler."""
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    sources = write_sources(tmp_path, f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    store = Store.open(":memory:")
    settings = Settings(
        db_path=":memory:", admin_token=TOKEN, sources_file=sources, run_scheduler=run_scheduler
    )
    try:
        with TestClient(create_app(settings, store=store)) as client:
            scheduler = client.get("/health").json()["scheduler"]
            assert scheduler == (
                {"running": True, "jobs": ["refresh:acme"]}
                if run_scheduler
                else {"running": False, "jobs": []}
            )
            ready = client.get("/health/ready")
            assert ready.status_code == 200, ready.text
            checks = [c["name"] for c in ready.json()["checks"]]
            assert ("scheduler_running" in checks) is run_scheduler
            status = client.get("/v1/price-sheets/refresh").json()["sources"][0]
            assert status["name"] == "acme" and (status["next_run_at"] is not None) is run_scheduler
            runs = client.post("/v1/price-sheets/refresh?wait=true", headers=AUTH).json()["runs"]
            assert [r["source"] for r in runs] == ["acme"]
            assert runs[0]["result"] in (("ok", "unchanged") if run_scheduler else ("ok",))
    finally:
        store.close()


def test_the_refresh_status_withholds_file_paths_and_errors_without_the_token(tmp_path: Path) -> None:
    missing = tmp_path / "secret-dir" / "gone.csv"
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "acme"\nurl = "{missing}"\nformat = "rental_csv"\nretries = 1\n')
    store = Store.open(":memory:")
    settings = Settings(db_path=":memory:", sources_file=str(sources), admin_token=TOKEN, run_scheduler=False)
    with TestClient(create_app(settings, store=store)) as client:
        ran = client.post("/v1/price-sheets/refresh", params={"wait": "true"}, headers=AUTH)
        assert ran.status_code == 200, ran.text
        (public,) = client.get("/v1/price-sheets/refresh").json()["sources"]
        (told,) = client.get("/v1/price-sheets/refresh", headers=AUTH).json()["sources"]
        home = client.get("/").text
    store.close()
    assert public["last_run"]["result"] == "failed"
    assert "secret-dir" not in str(public) and "secret-dir" not in home
    assert public["url"] == public["last_run"]["error"] == "(shown with the admin token)"
    assert str(missing) == told["url"] and "gone.csv" in told["last_run"]["error"]
