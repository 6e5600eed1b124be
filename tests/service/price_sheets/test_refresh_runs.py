"""POST /v1/price-sheets/refresh answers 202 with a run polled at GET …/refresh/runs/{run_id}
(queued → running → done, each source's result); ``?wait=true`` answers 200 with the finished run."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.price_sheets.batches import RefreshBatches
from service.price_sheets.refresh import Refresher, run_lock_key
from service.price_sheets.sources import load_sources
from service.settings import Settings
from tests.pg_cluster import PgCluster
from tests.service.admin import AUTH, TOKEN
from tests.service.price_sheets.test_refresh import SHEET, write_sources


def _sources(tmp_path: Path) -> str:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    missing = tmp_path / "missing.csv"
    return write_sources(
        tmp_path,
        f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n'
        f'[[source]]\nname = "gone"\nurl = "{missing}"\nformat = "rental_csv"\nretries = 1\n',
    )


def _poll(client: TestClient[Any], location: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    run: dict[str, Any] = {}
    while time.monotonic() < deadline:
        run = client.get(location).json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"the run did not finish: {run}")


def test_a_refresh_is_accepted_then_polled_until_done(db_target: str, tmp_path: Path) -> None:
    settings = Settings(db_path=":memory:", admin_token=TOKEN, sources_file=_sources(tmp_path))
    with Store.open(db_target) as store, TestClient(create_app(settings, store=store)) as client:
        accepted = client.post("/v1/price-sheets/refresh", headers=AUTH)
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        location = accepted.headers["location"]
        assert location == f"/v1/price-sheets/refresh/runs/{body['run_id']}"
        assert body["sources"] == ["acme", "gone"] and body["status"] in ("queued", "running", "done")
        run = _poll(client, location)
        assert run["status"] == "done" and run["started_at"] and run["finished_at"]
        # (the scheduler's run at boot may have imported acme's sheet first)
        assert [r["source"] for r in run["runs"]] == ["acme", "gone"]
        assert run["runs"][0]["result"] in ("ok", "unchanged") and run["runs"][1]["result"] == "failed"
        assert run["requested_at"] <= run["started_at"] <= run["finished_at"]
        waited = client.post(
            "/v1/price-sheets/refresh", params={"source": "acme", "wait": "true"}, headers=AUTH
        )
        assert waited.status_code == 200 and waited.json()["status"] == "done"
        assert [r["result"] for r in waited.json()["runs"]] == ["unchanged"]
        assert waited.json()["run_id"] == run["run_id"] + 1
        missing = client.get("/v1/price-sheets/refresh/runs/999")
        assert missing.status_code == 404 and missing.headers["content-type"].startswith(
            "application/problem+json"
        )


def test_a_run_waits_queued_behind_the_one_running(db_target: str, tmp_path: Path) -> None:
    with Store.open(db_target) as store:
        refresher = Refresher(store, load_sources(_sources(tmp_path)), sleep=lambda _: None)
        batches = RefreshBatches(refresher)
        # held as a scheduled run of acme (here or in another replica) would hold it
        with store.run_lock(run_lock_key("acme"), wait=True):
            first = batches.submit(["acme"])
            second = batches.submit(["gone"])
            deadline = time.monotonic() + 10
            while batches.get(first.run_id).status == "queued" and time.monotonic() < deadline:
                time.sleep(0.02)
            assert batches.get(first.run_id).status == "running"
            assert batches.get(second.run_id).status == "queued" and batches.get(second.run_id).runs == []
        deadline = time.monotonic() + 10
        while batches.get(second.run_id).status != "done" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [r.result for r in batches.get(first.run_id).runs] == ["ok"]
        assert batches.get(second.run_id).status == "done"
        assert [r.result for r in batches.get(second.run_id).runs] == ["failed"]
        batches.close()


def test_runs_a_stopped_process_left_are_marked_abandoned(db_target: str, tmp_path: Path) -> None:
    with Store.open(db_target) as store:
        refresher = Refresher(store, load_sources(_sources(tmp_path)), sleep=lambda _: None)
        with store.run_lock(run_lock_key("acme"), wait=True):
            old = RefreshBatches(refresher)
            left = old.submit(["acme"])
            old._executor.shutdown(wait=False, cancel_futures=True)  # the process "stops", run queued
            time.sleep(0.1)
            later = RefreshBatches(refresher)  # the next start
            assert later.get(left.run_id).status == "abandoned"
            assert later.get(left.run_id).finished_at is not None
        old._executor.shutdown(wait=True)
        later.close()


def test_a_starting_replica_spares_the_batches_of_replicas_still_connected(pg_cluster: PgCluster) -> None:
    """PostgreSQL replicas share refresh_batches: a starting one abandons the unfinished batches of
    replicas that are gone, never those a live replica (a session named ``gpuplan host:pid``) runs."""
    url = pg_cluster.fresh_url()
    with (
        Store.open(url) as store,
        psycopg.connect(url, autocommit=True, application_name="gpuplan live-host:41 other") as _live,
    ):
        for batch_id, replica in [(901, "live-host:41"), (902, "gone-host:42"), (903, None)]:
            store.transaction(
                lambda cur, b=batch_id, r=replica: cur.execute(
                    "INSERT INTO refresh_batches (batch_id, status, sources, requested_at, run_ids, replica) "
                    "VALUES (?, 'running', ?::VARCHAR[], ?, ?::INTEGER[], ?)",
                    [b, ["acme"], datetime.now(UTC), [], r],
                )
            )
        batches = RefreshBatches(Refresher(store, []))
        try:
            states = {b: batches.get(b).status for b in (901, 902, 903)}
        finally:
            batches.close()
    assert states == {901: "running", 902: "abandoned", 903: "abandoned"}
