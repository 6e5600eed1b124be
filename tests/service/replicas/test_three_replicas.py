"""Three ``gpuplan serve`` processes on one PostgreSQL database, all with the same refresh source: an
upload on one is in another's catalog within 2 s, a plan made on one is read from another, the source
is fetched once per interval (not once per replica), and a replica killed mid-refresh leaves no partial
version and the next run to another replica."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import httpx
import msgspec
import psycopg
import pytest

from service.price_sheets.refresh import RECENT_FRACTION, run_lock_key
from tests.conftest import BACKENDS
from tests.pg_cluster import PgCluster
from tests.service.admin import AUTH, TOKEN
from tests.service.live_server import serve_processes
from tests.service.replicas.source_server import SourceServer, source_server

pytestmark = pytest.mark.skipif(
    "postgresql" not in BACKENDS, reason="GPUPLAN_TEST_BACKENDS leaves out postgresql"
)

INTERVAL_S: Final = 2
"""The refresh interval of the test source (every replica schedules it)."""
JOB: Final = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora", "batch_size": 4}
HEADER: Final = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"


def _sheet(provider: str, price: float) -> str:
    return f"{HEADER}{provider},{provider}.h100x1,H100 SXM,1,eu-1,{price}\n{provider},{provider}.l4,L4,1,eu-1,0.5\n"


class Replicas(msgspec.Struct, kw_only=True):
    db: str
    urls: list[str]
    processes: list[subprocess.Popen[bytes]]
    source: SourceServer
    log: Path


@pytest.fixture(scope="module")
def replicas(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    folder = tmp_path_factory.mktemp("replicas")
    db = pg_cluster.fresh_url()
    with source_server(_sheet("live", 2.5)) as source:
        sources = folder / "sources.toml"
        sources.write_text(
            f'[[source]]\nname = "live"\nurl = "{source.url}"\nformat = "rental_csv"\n'
            f"interval_seconds = {INTERVAL_S}\ntimeout_seconds = 60\nretries = 1\n"
        )
        env = {"GPUPLAN_SOURCES": str(sources), "GPUPLAN_ADMIN_TOKEN": TOKEN, "GPUPLAN_LOG_FORMAT": "text"}
        log = folder / "replicas.log"
        with serve_processes(db, 3, env=env, log=log) as started:
            yield Replicas(
                db=db,
                urls=[url for url, _ in started],
                processes=[process for _, process in started],
                source=source,
                log=log,
            )


def _rows(db: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(db, autocommit=True) as connection:
        return connection.execute(sql.encode()).fetchall()


def test_an_upload_on_one_replica_is_in_anothers_catalog_within_two_seconds(replicas: Replicas) -> None:
    a, b = replicas.urls[0], replicas.urls[1]
    offers = {"provider": "upl"}
    assert httpx.get(f"{b}/v1/offers", params=offers).status_code == 400  # not a provider B knows yet
    sheets_before = httpx.get(f"{b}/health").json()["db"]["price_sheet_versions"]
    uploaded = httpx.post(
        f"{a}/v1/price-sheets",
        params={"source": "upl", "format": "rental_csv"},
        content=_sheet("upl", 1.75).encode(),
        headers=AUTH,
    )
    assert uploaded.status_code == 201, uploaded.text
    stored = time.monotonic()
    while (seen := httpx.get(f"{b}/v1/offers", params=offers)).status_code != 200:
        assert time.monotonic() - stored < 2.0, "B's catalog did not have A's upload within 2 s"
        time.sleep(0.02)
    elapsed = time.monotonic() - stored
    assert elapsed < 2.0
    assert sorted(o["price_per_hour_usd"] for o in seen.json()["items"]) == [0.5, 1.75]
    assert httpx.get(f"{b}/health").json()["db"]["price_sheet_versions"] > sheets_before


def test_a_plan_made_on_one_replica_is_read_from_another(replicas: Replicas) -> None:
    a, c = replicas.urls[0], replicas.urls[2]
    made = httpx.post(f"{a}/v1/plans", json=JOB | {"tokens": 1_000_000, "seq_len": 2048}, timeout=60)
    assert made.status_code == 201, made.text
    read = httpx.get(f"{c}/v1/plans/{made.json()['plan_id']}")
    assert read.status_code == 200
    assert read.json()["plan_id"] == made.json()["plan_id"] and read.json()["cost"] == made.json()["cost"]


def test_the_source_is_fetched_once_per_interval_not_once_per_replica(replicas: Replicas) -> None:
    window_s = 4 * INTERVAL_S
    start = time.monotonic()
    time.sleep(window_s)
    fetched = replicas.source.fetched_between(start, start + window_s)
    gaps = [later - earlier for earlier, later in itertools.pairwise(fetched)]
    # three replicas each fetching on their own schedule would fetch about 12 times, some together
    assert window_s / INTERVAL_S - 1 <= len(fetched) <= window_s / (RECENT_FRACTION * INTERVAL_S) + 1, fetched
    # a gap is measured when the source sees each fetch, not when its run started (the rule's clock):
    # on a loaded machine one run's request can arrive most of a second late, shortening the gap after
    # it; three independent schedules would leave gaps of ~0.7 s on average and some near 0
    assert all(gap > RECENT_FRACTION * INTERVAL_S - 0.8 for gap in gaps), gaps
    ran_by = _rows(replicas.db, "SELECT DISTINCT replica FROM refresh_runs WHERE source = 'live'")
    pids = {int(str(r[0]).rsplit(":", 1)[1]) for r in ran_by}
    assert pids <= {p.pid for p in replicas.processes}


def _prices(url: str, provider: str) -> set[float]:
    offers = httpx.get(f"{url}/v1/offers", params={"provider": provider}).json()["items"]
    return {float(o["price_per_hour_usd"]) for o in offers}


def _holder(db: str, key: str) -> int:
    """The pid of the replica whose session holds the run lock ``key`` (from its application_name)."""
    rows = _rows(
        db,
        "SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid IN "
        "(SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted) "
        f"AND application_name LIKE '% {key}'",
    )
    assert len(rows) == 1, rows
    replica = str(rows[0][0]).split()[1]  # "gpuplan host:pid key"
    return int(replica.rsplit(":", 1)[1])


def test_a_replica_killed_mid_refresh_leaves_no_partial_version_and_another_runs_next(
    replicas: Replicas,
) -> None:
    replicas.source.serve(_sheet("live", 3.25), hold=True)
    assert replicas.source.holding.wait(4 * INTERVAL_S), "no scheduled fetch came"
    killed = _holder(replicas.db, run_lock_key("live"))
    last_run = _rows(replicas.db, "SELECT max(run_id) FROM refresh_runs")[0][0]
    process = next(p for p in replicas.processes if p.pid == killed)
    os.kill(killed, signal.SIGKILL)
    process.wait(timeout=10)
    killed_at = time.monotonic()
    replicas.source.serve(_sheet("live", 3.25))  # answered at once from now on
    replicas.source.release()
    deadline = killed_at + 4 * INTERVAL_S
    newer = f"SELECT replica, version FROM refresh_runs WHERE source = 'live' AND run_id > {last_run}"
    while not (after := _rows(replicas.db, newer)):
        assert time.monotonic() < deadline, "no other replica refreshed the source after the kill"
        time.sleep(0.1)
    replica, version = after[0]
    assert not str(replica).endswith(f":{killed}") and version is not None  # the new sheet, imported
    partial = _rows(
        replicas.db,
        "SELECT p.version, p.row_count, count(o.version) FROM price_sheets p "
        "LEFT JOIN offers o ON o.version = p.version WHERE p.kind = 'rental' "
        "GROUP BY p.version, p.row_count HAVING count(o.version) <> p.row_count",
    )
    assert partial == []
    alive = [url for url, p in zip(replicas.urls, replicas.processes, strict=True) if p.pid != killed]
    deadline = time.monotonic() + 2.0
    for url in alive:  # the new prices reach the survivors' catalogs (within 2 s of the import)
        while 3.25 not in {
            o["price_per_hour_usd"]
            for o in httpx.get(f"{url}/v1/offers", params={"provider": "live"}).json()["items"]
        }:
            assert time.monotonic() < deadline, f"{url} did not load version {version}"
            time.sleep(0.05)
