"""The store: a database of either backend (DuckDB file or PostgreSQL), migrated and seeded, and the
catalog snapshot.

``Store.open`` picks PostgreSQL for a ``postgresql://`` (or ``postgres://``) URL and a DuckDB file for
anything else (``:memory:`` allowed). Reads take a cursor of their own; writes go through
:meth:`Store.transaction` (retried on a write conflict); after a write the caller calls
:meth:`Store.refresh_snapshot`, and requests that started earlier keep their snapshot. A server on a
database other processes write too (PostgreSQL replicas) calls :meth:`Store.watch_catalog`, which
reloads the snapshot when their writes change the catalog (``catalog_watch``).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

from service.db.backend import Backend, BackendName, Cursor, is_postgres_url
from service.db.catalog_watch import CATALOG_CHANNEL, CatalogWatcher
from service.db.duckdb_backend import DuckDbBackend
from service.db.generation import CatalogState, read_catalog_state
from service.db.migrations import apply_migrations, current_schema_version
from service.db.open_errors import open_error
from service.db.postgres_backend import PostgresBackend
from service.db.seed import SeedReport, ensure_seeded
from service.db.snapshot import CatalogSnapshot, read_snapshot
from service.db.store_errors import STORE_ERRORS

__all__ = ["Store", "open_backend"]

_log = logging.getLogger("gpuplan.store")


def open_backend(target: str) -> Backend:
    """The database ``target`` names (``--db`` / ``GPUPLAN_DB``), connected but not yet migrated."""
    return PostgresBackend.open(target) if is_postgres_url(target) else DuckDbBackend.open(target)


class Store:
    """An open gpuplan database: migrated, seeded, with a catalog snapshot. A context manager that
    closes the database on exit."""

    def __init__(self, backend: Backend, seed_report: SeedReport) -> None:
        self.backend = backend
        self.path = backend.display
        """The database in messages: the file, or the PostgreSQL URL without its password."""
        self.seed_report = seed_report
        self._snapshot_lock = threading.Lock()
        self._generations = itertools.count(1)
        self._watcher: CatalogWatcher | None = None
        self._warming = False
        with self.cursor() as cur:
            self._state = read_catalog_state(cur)
            self._snapshot = read_snapshot(cur, next(self._generations))

    @classmethod
    def open(cls, target: str) -> Store:
        """Open (creating, migrating and seeding if needed) the database ``target`` names; a 503
        ``StoreUnavailable`` naming the database and the cause when it cannot (a DuckDB file held by
        another process, not a database, truncated, corrupt, no permission: ``open_errors``; a
        PostgreSQL server that does not answer or refuses the login). Processes starting together on
        one PostgreSQL database migrate and seed one after another."""
        started = time.perf_counter()
        backend = open_backend(target)
        try:
            with backend.startup_lock():
                applied = apply_migrations(backend)
                report = ensure_seeded(backend)
            store = cls(backend, report)
        except STORE_ERRORS as exc:  # a file that opens but cannot be read through (a corrupt block)
            backend.close()
            raise open_error(backend.display, exc) from exc
        except BaseException:
            backend.close()
            raise
        _log.info(
            "store %s open in %.0f ms (%s; migrations applied: %s, seed %s)",
            backend.display,
            (time.perf_counter() - started) * 1000,
            backend.name,
            applied or "none",
            "loaded" if report.loaded else "already loaded",
        )
        return store

    @property
    def backend_name(self) -> BackendName:
        """``duckdb`` or ``postgresql`` (``/health`` reports it)."""
        return self.backend.name

    @property
    def file(self) -> Path | None:
        """The DuckDB file, when the database is one (not ``:memory:``, not PostgreSQL)."""
        return self.backend.file

    def cursor(self) -> AbstractContextManager[Cursor]:
        """A cursor of its own for one request or job (reads); always closed."""
        return self.backend.cursor()

    def transaction[T](self, work: Callable[[Cursor], T], *, lock: str | None = None) -> T:
        """``work(cursor)`` in one transaction, retried on a write conflict; ``lock`` serializes the
        transactions that name it, across processes on PostgreSQL (``Backend.transaction``)."""
        return self.backend.transaction(work, lock=lock)

    def run_lock(self, key: str, *, wait: bool) -> AbstractContextManager[bool]:
        """A lock held for a whole job, across the processes on this database (``Backend.run_lock``):
        yields whether it was got (with ``wait``, always, once the holder lets go)."""
        return self.backend.run_lock(key, wait=wait)

    @property
    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    def refresh_snapshot(self) -> None:
        """Read a new snapshot after a write (a new sheet, new profiles) and swap it in; what the old
        one derived from unchanged inputs is kept, and a serving store warms the rest."""
        with self.cursor() as cur, self._snapshot_lock:
            state = read_catalog_state(cur)  # before the snapshot: a write in between reads as a change
            snapshot = read_snapshot(cur, next(self._generations), self._snapshot)
            snapshot.take_over(self._snapshot)
            self._snapshot = snapshot
            self._state = state
        if self._warming:
            self._warm(snapshot)

    def keep_warm(self) -> None:
        """Build what plans need with every snapshot, from now on, in the background (a server calls
        this at start: its first plan then costs what the others do)."""
        self._warming = True
        self._warm(self._snapshot)

    @staticmethod
    def _warm(snapshot: CatalogSnapshot) -> None:
        threading.Thread(target=snapshot.warm, name="gpuplan-warm", daemon=True).start()

    @property
    def snapshot_state(self) -> CatalogState:
        """The catalog state read just before the current snapshot."""
        return self._state

    def catalog_state(self) -> CatalogState:
        """The catalog state now, cheaply: when another process's write makes it differ from
        :attr:`snapshot_state`, the snapshot is stale (a replica polls this to know when to refresh)."""
        with self.cursor() as cur:
            return read_catalog_state(cur)

    def reload_if_changed(self) -> bool:
        """Refresh the snapshot when another process's write changed the catalog state; whether it did."""
        started = time.perf_counter()
        if self.catalog_state() == self._state:
            return False
        self.refresh_snapshot()
        _log.info(
            "catalog snapshot reloaded after another process's write (generation %d, %.0f ms)",
            self._snapshot.generation,
            (time.perf_counter() - started) * 1000,
        )
        return True

    def watch_catalog(self, *, poll_s: float = 1.0) -> None:
        """Follow other processes' writes (a thread, stopped by :meth:`close`): reload on their notice,
        or at the latest after ``poll_s``. Nothing on DuckDB, whose only writer is this process."""
        if self._watcher is not None or not self.backend.shared:
            return
        self._watcher = CatalogWatcher(
            lambda: self.backend.listen(CATALOG_CHANNEL), self.reload_if_changed, poll_s=poll_s
        )
        self._watcher.start()

    def schema_version(self) -> int:
        with self.cursor() as cur:
            return current_schema_version(cur)

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        self.backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
