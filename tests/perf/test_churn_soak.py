"""Churn soak (issue 13, B12; issue 28 D24): plans from two clients without pause plus a price-sheet
upload every 2 s (each a new version, so a new catalog snapshot) against the real server, on DuckDB and
on PostgreSQL, for ``GPUPLAN_SOAK_SECONDS`` (default 600); prints the server's RSS curve (a sample
every tenth of the run) from the start (after a warm-up round) to the end. Run with ``make bench`` (or
``GPUPLAN_SOAK_SECONDS=60 .venv/bin/pytest tests/perf/test_churn_soak.py -m perf -s``).

Before the fix (throughput tables of every dead snapshot kept) RSS grew 200 → 486 MB in three minutes;
the test fails when RSS grows by more than half its starting value.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.perf.conftest import running_server
from tests.perf.workloads import PLAN_BODIES, SERVING_BODIES
from tests.pg_cluster import PgCluster

TOKEN = "soak-admin-token-0123456789"
SOAK_SECONDS = float(os.environ.get("GPUPLAN_SOAK_SECONDS", "600"))


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module", params=["duckdb", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    if request.param == "duckdb":
        db: Path | str = tmp_path_factory.mktemp("soak") / "soak.duckdb"
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        db = cluster.fresh_url()
    with running_server(db, GPUPLAN_ADMIN_TOKEN=TOKEN) as found:
        yield found


def _sheet(round_: int) -> bytes:
    return (
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"
        f"soak,s.h100x1,H100 SXM,1,eu-1,{2.0 + (round_ % 1000) / 1000:.3f}\n"
        f"soak,s.l4,L4,1,eu-1,{0.4 + (round_ % 1000) / 10000:.4f}\n"
    ).encode()


def _upload(client: httpx.Client, round_: int) -> None:
    upload = client.post(
        "/v1/price-sheets",
        params={"source": "soak", "format": "rental_csv"},
        content=_sheet(round_),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/csv"},
    )
    assert upload.status_code == 201, upload.text


def _plan_all(client: httpx.Client) -> int:
    for body in [*PLAN_BODIES, *SERVING_BODIES]:
        assert client.post("/v1/plans", json=body).status_code in (201, 422)
    return len(PLAN_BODIES) + len(SERVING_BODIES)


def test_rss_stays_flat_under_plans_and_uploads(server: tuple[str, int]) -> None:
    base, pid = server
    with httpx.Client(base_url=base, timeout=120) as client:
        for warm in range(3):
            _upload(client, warm)
            _plan_all(client)
        start = _rss_mib(pid)
        stop = time.monotonic() + SOAK_SECONDS
        plans = [0]

        def planner() -> None:
            with httpx.Client(base_url=base, timeout=120) as own:
                while time.monotonic() < stop:
                    plans[0] += _plan_all(own)

        workers = [threading.Thread(target=planner) for _ in range(2)]
        for worker in workers:
            worker.start()
        uploads, curve, began = 0, [start], time.monotonic()
        while time.monotonic() < stop:
            _upload(client, 3 + uploads)
            uploads += 1
            time.sleep(2)
            if time.monotonic() - began >= len(curve) * SOAK_SECONDS / 10:
                curve.append(_rss_mib(pid))
        for worker in workers:
            worker.join()
        end = _rss_mib(pid)
    print(
        f"\nchurn soak, {SOAK_SECONDS:.0f} s: {uploads} uploads, {plans[0]} plans besides; "
        f"server RSS {start:.0f} MiB at the start, {end:.0f} MiB at the end ({end / start:.2f}x); "
        f"every {SOAK_SECONDS / 10:.0f} s: {' '.join(f'{r:.0f}' for r in [*curve, end])} MiB"
    )
    assert end <= start * 1.5, (start, end)
