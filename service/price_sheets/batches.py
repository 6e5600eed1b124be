"""Refresh runs requested over HTTP (``POST /v1/price-sheets/refresh``): queued, run in the background
and polled at ``GET /v1/price-sheets/refresh/runs/{run_id}``.

One requested run (a *batch* in ``refresh_batches``) refreshes one source or every configured source;
each source's result is a row of ``refresh_runs`` as before. Batches run one after another on one worker
thread, and a source's own lock keeps its runs from overlapping with the scheduler's. Each batch records
the replica that runs it; a batch that a stopped process left queued or running is marked ``abandoned``
when a process starts (on a shared database: only the batches of replicas no longer connected), and
when it is read while its replica is gone.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Literal

import msgspec

from service.db.backend import Cursor
from service.db.replica import replica_name
from service.db.sequences import next_id
from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.errors import NotFound
from service.price_sheets.refresh import RUN_COLUMNS, Refresher, run_of_row
from service.price_sheets.schemas import RefreshRun

__all__ = ["RefreshBatch", "RefreshBatches"]

_log = logging.getLogger("gpuplan.refresh")

BatchStatus = Literal["queued", "running", "done", "failed", "abandoned"]


class RefreshBatch(msgspec.Struct, kw_only=True):
    """A requested refresh: its state, and each source's run as it finishes (``runs``)."""

    run_id: int
    status: BatchStatus
    """queued → running → done; failed on an unexpected error; abandoned when the server stopped first."""
    sources: list[str]
    requested_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    runs: list[RefreshRun]


class RefreshBatches:
    """Queues requested refreshes of ``refresher``'s sources and records them in the store."""

    def __init__(self, refresher: Refresher) -> None:
        self.refresher = refresher
        self.store: Store = refresher.store
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuplan-refresh")
        try:
            self._abandon_orphans()
        except STORE_ERRORS as exc:  # best effort: a store that cannot be written still serves reads
            _log.warning("could not mark unfinished refresh runs abandoned: %s", exc)

    def submit(self, sources: list[str]) -> RefreshBatch:
        """Queue a refresh of ``sources``; it runs in the background."""
        batch_id = self._create(sources)
        self._executor.submit(self._work, batch_id, sources)
        return self.get(batch_id)

    def run_now(self, sources: list[str]) -> RefreshBatch:
        """Refresh ``sources`` in the calling thread and return the finished batch (``?wait=true``)."""
        batch_id = self._create(sources)
        self._work(batch_id, sources)
        return self.get(batch_id)

    def close(self) -> None:
        """Stop taking batches: queued ones are dropped (the next start marks them abandoned), the
        running one finishes (it writes to the store, which closes next)."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _abandon_orphans(self) -> None:
        """Unfinished batches that will never finish: those of replicas that are gone (a stopped or
        killed process), and this process's own name's (a process starts with no batch of its own)."""
        others = sorted(self.store.backend.live_replicas() - {replica_name()})
        spared = (
            f" AND (replica IS NULL OR replica NOT IN ({', '.join('?' for _ in others)}))" if others else ""
        )
        self.store.transaction(
            lambda cur: cur.execute(
                "UPDATE refresh_batches SET status = 'abandoned', finished_at = ? "
                f"WHERE status IN ('queued', 'running'){spared}",
                [datetime.now(UTC), *others],
            )
        )

    def _abandon_if_orphaned(self, batch_id: int) -> None:
        with self.store.cursor() as cur:
            row = cur.execute(
                "SELECT replica FROM refresh_batches WHERE batch_id = ? AND status IN ('queued', 'running')",
                [batch_id],
            ).fetchone()
        if row is None or row[0] is None or row[0] == replica_name():
            return
        if row[0] in self.store.backend.live_replicas():
            return
        self.store.transaction(
            lambda cur: cur.execute(
                "UPDATE refresh_batches SET status = 'abandoned', finished_at = ? "
                "WHERE batch_id = ? AND status IN ('queued', 'running')",
                [datetime.now(UTC), batch_id],
            )
        )

    def _create(self, sources: list[str]) -> int:
        def insert(cur: Cursor) -> int:
            batch_id = next_id(cur, "refresh_batch_id_seq")
            cur.execute(
                "INSERT INTO refresh_batches (batch_id, status, sources, requested_at, started_at, "
                "finished_at, run_ids, replica) VALUES (?, 'queued', ?::VARCHAR[], ?, NULL, NULL, "
                "?::INTEGER[], ?)",
                [batch_id, sources, datetime.now(UTC), [], replica_name()],
            )
            return batch_id

        return self.store.transaction(insert)

    def _set(self, batch_id: int, sql: str, params: list[object]) -> None:
        self.store.transaction(
            lambda cur: cur.execute(
                f"UPDATE refresh_batches SET {sql} WHERE batch_id = ?", [*params, batch_id]
            )
        )

    def _work(self, batch_id: int, sources: list[str]) -> None:
        self._set(batch_id, "status = 'running', started_at = ?", [datetime.now(UTC)])
        status = "done"
        try:
            for name in sources:
                run_id, _run = self.refresher.run_recorded(name)
                self._set(batch_id, "run_ids = array_append(run_ids, ?::INTEGER)", [run_id])
        except Exception:
            _log.exception("refresh run %s failed", batch_id)
            status = "failed"
        self._set(batch_id, "status = ?, finished_at = ?", [status, datetime.now(UTC)])

    def get(self, batch_id: int) -> RefreshBatch:
        """One requested refresh with the runs of its sources so far; 404 when there is none. An
        unfinished batch whose replica is gone (killed, stopped) is marked abandoned when it is read,
        instead of showing ``running`` until some process restarts."""
        self._abandon_if_orphaned(batch_id)
        with self.store.cursor() as cur:
            row = cur.execute(
                "SELECT status, sources, requested_at, started_at, finished_at, run_ids "
                "FROM refresh_batches WHERE batch_id = ?",
                [batch_id],
            ).fetchone()
            if row is None:
                raise NotFound(f"no refresh run {batch_id}")
            run_ids = [int(i) for i in row[5]]
            marks = ", ".join("?" for _ in run_ids)
            found = (
                cur.execute(
                    f"SELECT run_id, {RUN_COLUMNS} FROM refresh_runs WHERE run_id IN ({marks})", run_ids
                ).fetchall()
                if run_ids
                else []
            )
            by_id = {int(r[0]): r[1:] for r in found}
            runs = [by_id[i] for i in run_ids if i in by_id]
        return RefreshBatch(
            run_id=batch_id,
            status=row[0],
            sources=list(row[1]),
            requested_at=row[2],
            started_at=row[3],
            finished_at=row[4],
            runs=[run_of_row(r) for r in runs],
        )
