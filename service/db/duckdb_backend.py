"""The embedded DuckDB backend: one connection per process, a cursor per request or transaction.

The process that opens the file owns it (DuckDB allows one read-write process per file), so the locks
of :meth:`DuckDbBackend.transaction` and :meth:`DuckDbBackend.run_lock` are in-process locks, the
former taken before the transaction begins (a DuckDB transaction reads the database as it was when it
began), and no other process's writes need listening for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Final, Self

import duckdb

from service.db.backend import BackendName, Cursor, Dialect, Listener
from service.db.bulk import scan_columns, scan_rows
from service.db.open_errors import open_error
from service.db.replica import replica_name
from service.db.transactions import retrying

__all__ = ["DUCKDB_DIALECT", "MEMORY_LIMIT", "DuckDbBackend", "DuckDbCursor"]

MEMORY_LIMIT: Final = "1GB"
"""DuckDB's buffer memory cap. Its default, 80 % of the machine's RAM, let the process grow from 260 to
~800 MB under plan churn (issue 28 D24): the store's working set is tens of MB, and beyond the cap
DuckDB spills large operations to a temporary file next to a file database."""

DUCKDB_DIALECT: Final = Dialect(
    name="duckdb", double_type="DOUBLE", begin_consistent_read="BEGIN TRANSACTION"
)


class DuckDbCursor:
    """A DuckDB cursor as the store's :class:`~service.db.backend.Cursor`."""

    __slots__ = ("_raw",)
    dialect: Final = DUCKDB_DIALECT

    def __init__(self, raw: duckdb.DuckDBPyConnection) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Self:
        self._raw.execute(sql, params)
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._raw.fetchone()

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._raw.fetchall()

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        scan_rows(self._raw, table, columns, rows)

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        scan_columns(self._raw, table, columns)


class DuckDbBackend:
    """A DuckDB file (or ``:memory:``) opened read-write by this process."""

    name: Final[BackendName] = "duckdb"

    def __init__(self, connection: duckdb.DuckDBPyConnection, path: str) -> None:
        self._connection = connection
        self._path = path
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    @classmethod
    def open(cls, path: str) -> DuckDbBackend:
        """Connect to ``path`` (its folder created); a 503 ``StoreUnavailable`` naming the cause when
        the file cannot be opened (``open_errors``)."""
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            return cls(duckdb.connect(path, config={"threads": 1, "memory_limit": MEMORY_LIMIT}), path)
        except (duckdb.Error, OSError) as exc:
            raise open_error(path, exc) from exc

    @property
    def display(self) -> str:
        return self._path

    @property
    def shared(self) -> bool:
        return False

    @property
    def file(self) -> Path | None:
        return None if self._path == ":memory:" else Path(self._path)

    @contextmanager
    def _raw_cursor(self) -> Iterator[DuckDbCursor]:
        raw = self._connection.cursor()
        try:
            yield DuckDbCursor(raw)
        finally:
            raw.close()

    def cursor(self) -> AbstractContextManager[Cursor]:
        return self._raw_cursor()

    def _lock(self, key: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(key, threading.Lock())

    def _attempt[T](self, work: Callable[[Cursor], T]) -> T:
        with self._raw_cursor() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                result = work(cur)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            return result

    def transaction[T](self, work: Callable[[Cursor], T], *, lock: str | None = None) -> T:
        with self._lock(lock) if lock is not None else nullcontext():
            return retrying(lambda: self._attempt(work))

    def startup_lock(self) -> AbstractContextManager[None]:
        return nullcontext()  # no other process can have the file open

    @contextmanager
    def _held(self, key: str, wait: bool) -> Iterator[bool]:
        lock = self._lock(f"run:{key}")
        got = lock.acquire(blocking=wait)
        try:
            yield got
        finally:
            if got:
                lock.release()

    def run_lock(self, key: str, *, wait: bool) -> AbstractContextManager[bool]:
        return self._held(key, wait)

    def listen(self, channel: str) -> Listener | None:
        return None  # this process is the file's only writer

    def live_replicas(self) -> frozenset[str]:
        return frozenset({replica_name()})  # one process holds the file

    def checkpoint(self) -> None:
        with self._raw_cursor() as cur:
            cur.execute("CHECKPOINT")

    def close(self) -> None:
        self._connection.close()
