"""The PostgreSQL backend: a psycopg 3 connection pool shared by every request of one process, and by
any number of processes (replicas) on the same database.

Pooled connections run in autocommit (a read holds no transaction open); a transaction is
``conn.transaction()`` on a pooled connection. Its lock is a transaction-level advisory lock
(``pg_advisory_xact_lock``), released at commit or rollback, so it orders transactions of every
process; under PostgreSQL's default READ COMMITTED each statement after it sees what was committed
before. ``json`` columns are read as text, as DuckDB returns them, and sessions use UTC.

A run lock (:meth:`PostgresBackend.run_lock`) is a session advisory lock on a connection of its own,
opened for the run and closed after it: a process killed mid-run loses its session and so the lock.
A listener is another such connection, in ``LISTEN``. Every session names its replica in
``application_name`` (``pg_stat_activity`` shows who holds a run lock).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Final, Self

import psycopg
import psycopg.sql
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from service.db.backend import BackendName, Cursor, Dialect, Listener, redacted_url
from service.db.bulk import copy_columns, copy_rows
from service.db.placeholders import to_format_placeholders
from service.db.replica import replica_name
from service.db.transactions import retrying
from service.errors import StoreUnavailable

__all__ = ["POOL_MAX_SIZE", "POSTGRES_DIALECT", "PgCursor", "PgListener", "PostgresBackend"]

POSTGRES_DIALECT: Final = Dialect(
    name="postgresql",
    double_type="DOUBLE PRECISION",
    begin_consistent_read="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
)
POOL_MAX_SIZE: Final = 10
"""Connections one process opens at most (requests beyond wait for one, up to ``_POOL_WAIT_S``)."""
_POOL_WAIT_S: Final = 10.0
_CONNECT_TIMEOUT_S: Final = 10
_STARTUP_LOCK: Final = "SELECT pg_advisory_lock(hashtextextended('gpuplan:startup', 0))"
_STARTUP_UNLOCK: Final = "SELECT pg_advisory_unlock(hashtextextended('gpuplan:startup', 0))"
_XACT_LOCK: Final = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_RUN_LOCK: Final = "SELECT pg_advisory_lock(hashtextextended(%s, 0)), true"
_RUN_TRY_LOCK: Final = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"
_NAME_MAX: Final = 63
"""PostgreSQL's longest ``application_name`` (longer ones are cut)."""


def _session_name(*parts: str) -> str:
    return " ".join(("gpuplan", replica_name(), *parts))[:_NAME_MAX]


class PgCursor:
    """A psycopg cursor as the store's :class:`~service.db.backend.Cursor` (``?`` read as ``%s``)."""

    __slots__ = ("_raw",)
    dialect: Final = POSTGRES_DIALECT

    def __init__(self, raw: psycopg.Cursor[Any]) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Self:
        if params is None:
            self._raw.execute(sql.encode())  # bytes: psycopg types queries as literal strings or bytes
        else:  # without parameters psycopg reads no placeholders either
            self._raw.execute(to_format_placeholders(sql).encode(), params)
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._raw.fetchone()
        return row

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self._raw.fetchall()
        return rows

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        copy_rows(self._raw, table, columns, rows)

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        copy_columns(self._raw, table, columns)


def _configure(connection: psycopg.Connection[Any]) -> None:
    connection.adapters.register_loader("json", TextLoader)
    connection.adapters.register_loader("jsonb", TextLoader)
    connection.execute("SET TimeZone TO 'UTC'")


class PgListener:
    """A connection in ``LISTEN channel`` (:class:`~service.db.backend.Listener`)."""

    def __init__(self, connection: psycopg.Connection[Any], channel: str) -> None:
        self._connection = connection
        try:
            connection.execute(psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(channel)))
        except BaseException:
            connection.close()
            raise

    def wait(self, timeout_s: float) -> bool:
        return any(True for _ in self._connection.notifies(timeout=timeout_s, stop_after=1))

    def close(self) -> None:
        self._connection.close()


class PostgresBackend:
    """A PostgreSQL database (which must exist), through a connection pool."""

    name: Final[BackendName] = "postgresql"

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]], url: str) -> None:
        self._pool = pool
        self._url = url
        self._display = redacted_url(url)

    @classmethod
    def open(cls, url: str) -> PostgresBackend:
        """Connect once (so a wrong host, password or database name is named at once), then open the
        pool; a 503 ``StoreUnavailable`` naming the cause when the database cannot be reached."""
        try:
            psycopg.connect(url, connect_timeout=_CONNECT_TIMEOUT_S).close()
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise StoreUnavailable(
                f"cannot open the database {redacted_url(url)!r}: {reason} (the database must exist; "
                "check the host, port, user, password and database name of --db / GPUPLAN_DB)."
            ) from exc
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX_SIZE,
            kwargs={
                "autocommit": True,
                "connect_timeout": _CONNECT_TIMEOUT_S,
                "application_name": _session_name(),
            },
            configure=_configure,
            check=ConnectionPool.check_connection,  # a connection the server dropped is replaced, not handed out
            timeout=_POOL_WAIT_S,
            name="gpuplan",
            open=False,
        )
        pool.open(wait=True, timeout=_POOL_WAIT_S)
        return cls(pool, url)

    @property
    def display(self) -> str:
        return self._display

    @property
    def shared(self) -> bool:
        return True

    @property
    def file(self) -> Path | None:
        return None

    @contextmanager
    def _raw_cursor(self) -> Iterator[PgCursor]:
        with self._pool.connection() as connection, connection.cursor() as raw:
            yield PgCursor(raw)

    def cursor(self) -> AbstractContextManager[Cursor]:
        return self._raw_cursor()

    def _attempt[T](self, work: Callable[[Cursor], T], lock: str | None) -> T:
        with self._pool.connection() as connection, connection.transaction(), connection.cursor() as raw:
            if lock is not None:
                raw.execute(_XACT_LOCK, [lock])
            return work(PgCursor(raw))

    def transaction[T](self, work: Callable[[Cursor], T], *, lock: str | None = None) -> T:
        return retrying(lambda: self._attempt(work, lock))

    @contextmanager
    def _startup(self) -> Iterator[None]:
        with self._pool.connection() as connection:
            connection.execute(_STARTUP_LOCK)
            try:
                yield
            finally:
                connection.execute(_STARTUP_UNLOCK)

    def startup_lock(self) -> AbstractContextManager[None]:
        return self._startup()

    def _connect(self, purpose: str) -> psycopg.Connection[Any]:
        """A connection outside the pool, for as long as one lock or listener lives."""
        return psycopg.connect(
            self._url,
            autocommit=True,
            connect_timeout=_CONNECT_TIMEOUT_S,
            application_name=_session_name(purpose),
        )

    @contextmanager
    def _run_locked(self, key: str, wait: bool) -> Iterator[bool]:
        with self._connect(key) as connection:  # closing it lets go of the lock, whatever happened
            row = connection.execute(_RUN_LOCK if wait else _RUN_TRY_LOCK, [key]).fetchone()
            yield bool(row and row[-1])

    def run_lock(self, key: str, *, wait: bool) -> AbstractContextManager[bool]:
        return self._run_locked(key, wait)

    def listen(self, channel: str) -> Listener:
        return PgListener(self._connect(f"listen {channel}"), channel)

    def live_replicas(self) -> frozenset[str]:
        """Read from the sessions' ``application_name`` (``gpuplan host:pid …``) in ``pg_stat_activity``."""
        with self._raw_cursor() as cur:
            names = cur.execute(
                "SELECT DISTINCT application_name FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name LIKE 'gpuplan %'"
            ).fetchall()
        return frozenset(
            {replica_name()} | {str(name).split(" ")[1] for (name,) in names if " " in str(name)}
        )

    def checkpoint(self) -> None:
        """Nothing: the server writes its files itself (``CHECKPOINT`` needs a superuser)."""

    def close(self) -> None:
        self._pool.close()
