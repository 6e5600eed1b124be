"""The DuckDB store: one connection per process, a cursor per request, and the catalog snapshot.

The process that opens the store owns its file (DuckDB allows one read-write process per file).
Writes go through :meth:`Store.transaction` (retried on a write conflict); after a write the caller
calls :meth:`Store.refresh_snapshot`, and requests that started earlier keep their snapshot.
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

import duckdb

from service.db.migrations import apply_migrations, current_schema_version
from service.db.open_errors import open_error
from service.db.seed import SeedReport, ensure_seeded
from service.db.snapshot import CatalogSnapshot, read_snapshot
from service.db.transactions import cursor_of, run_transaction

__all__ = ["Store"]

_log = logging.getLogger("gpuplan.store")


class Store:
    """An open gpuplan database: migrated, seeded, with a catalog snapshot. A context manager that
    closes the database on exit."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, path: str, seed_report: SeedReport) -> None:
        self._connection = connection
        self.path = path
        self.seed_report = seed_report
        self._snapshot_lock = threading.Lock()
        self.import_lock = threading.Lock()
        """Held while an import takes a version number and stores its version (numbers are unique)."""
        self._generations = itertools.count(1)
        with self.cursor() as cur:
            self._snapshot = read_snapshot(cur, next(self._generations))

    @classmethod
    def open(cls, path: str) -> Store:
        """Open (creating, migrating and seeding if needed) the database at ``path`` (``:memory:``
        allowed); a 503 ``StoreUnavailable`` naming the file and the cause when it cannot (held by
        another process, not a database, truncated, corrupt, no permission: ``open_errors``)."""
        started = time.perf_counter()
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            connection = duckdb.connect(path, config={"threads": 1})
        except (duckdb.Error, OSError) as exc:
            raise open_error(path, exc) from exc
        try:
            applied = apply_migrations(connection)
            report = ensure_seeded(connection)
            store = cls(connection, path, report)
        except duckdb.Error as exc:  # a file that opens but cannot be read through (a corrupt block)
            connection.close()
            raise open_error(path, exc) from exc
        except BaseException:
            connection.close()
            raise
        _log.info(
            "store %s open in %.0f ms (migrations applied: %s, seed %s)",
            path,
            (time.perf_counter() - started) * 1000,
            applied or "none",
            "loaded" if report.loaded else "already loaded",
        )
        return store

    def cursor(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A cursor of its own for one request or job (reads); always closed."""
        return cursor_of(self._connection)

    def transaction[T](self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """``work(cursor)`` in one transaction, retried on a write conflict (``service.db.transactions``)."""
        return run_transaction(self._connection, work)

    @property
    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    def refresh_snapshot(self) -> None:
        """Read a new snapshot after a write (a new sheet, new profiles) and swap it in."""
        with self.cursor() as cur, self._snapshot_lock:
            self._snapshot = read_snapshot(cur, next(self._generations))

    def schema_version(self) -> int:
        with self.cursor() as cur:
            return current_schema_version(cur)

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
