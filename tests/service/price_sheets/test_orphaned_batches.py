"""A refresh batch whose replica is gone reads as abandoned at once, not running until some process
restarts (issue 28 D23)."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar.testing import TestClient

from service.app import create_app
from service.db.backend import Cursor
from service.db.replica import replica_name
from service.db.sequences import next_id
from service.db.store import Store
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN


def _batch(store: Store, replica: str) -> int:
    def insert(cur: Cursor) -> int:
        batch_id = next_id(cur, "refresh_batch_id_seq")
        cur.execute(
            "INSERT INTO refresh_batches (batch_id, status, sources, requested_at, started_at, finished_at, "
            "run_ids, replica) VALUES (?, 'running', ?::VARCHAR[], ?, ?, NULL, ?::INTEGER[], ?)",
            [batch_id, ["acme"], datetime.now(UTC), datetime.now(UTC), [], replica],
        )
        return batch_id

    return store.transaction(insert)


def test_a_batch_of_a_replica_that_is_gone_is_abandoned_when_read(store: Store) -> None:
    with TestClient(create_app(Settings(db_path=":memory:", admin_token=TOKEN), store=store)) as client:
        gone = _batch(store, "a-host-that-stopped:4242")
        mine = _batch(store, replica_name())
        read = client.get(f"/v1/price-sheets/refresh/runs/{gone}", headers=AUTH)
        assert read.status_code == 200, read.text
        assert read.json()["status"] == "abandoned" and read.json()["finished_at"] is not None
        assert client.get(f"/v1/price-sheets/refresh/runs/{mine}", headers=AUTH).json()["status"] == "running"
