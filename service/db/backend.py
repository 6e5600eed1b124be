"""The store's one interface over its two backends: embedded DuckDB and PostgreSQL.

Feature code runs SQL on a :class:`Cursor` with ``?`` placeholders and gets rows as tuples, whichever
backend holds the data; it writes through :meth:`Backend.transaction`. SQL is written so both accept
it; the few differences that cannot be (a type name in DDL, bulk loading) are the :class:`Dialect`'s
and the cursor's, not ``if backend == …`` in feature code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final, Literal, Protocol, Self
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec

__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "BackendName",
    "Cursor",
    "Dialect",
    "Listener",
    "display_target",
    "is_postgres_url",
    "redacted_url",
]

BackendName = Literal["duckdb", "postgresql"]
BACKEND_NAMES: Final[tuple[BackendName, ...]] = ("duckdb", "postgresql")
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def is_postgres_url(target: str) -> bool:
    """Whether ``--db`` / ``GPUPLAN_DB`` names a PostgreSQL database rather than a DuckDB file."""
    return target.startswith(_POSTGRES_SCHEMES)


def redacted_url(url: str) -> str:
    """``url`` without its password (in the user part or a ``password=`` parameter), for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = parts.query
    if query:
        pairs = [(k, "***" if k == "password" else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def display_target(target: str) -> str:
    """``--db`` / ``GPUPLAN_DB`` as messages show it: a file as given, a URL without its password."""
    return redacted_url(target) if is_postgres_url(target) else target


class Dialect(msgspec.Struct, frozen=True, kw_only=True):
    """What SQL cannot say the same way on both backends."""

    name: BackendName
    double_type: str
    """The name of the 8-byte float type in DDL (PostgreSQL has no ``DOUBLE``)."""
    begin_consistent_read: str
    """Starts a transaction whose every statement sees the same committed data: DuckDB's transactions
    do; PostgreSQL's default (READ COMMITTED) gives each statement its own view, REPEATABLE READ one."""


class Cursor(Protocol):
    """A cursor of one request, job or transaction: ``?`` placeholders, rows as tuples."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Self: ...

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk-insert ``rows`` (tuples in ``columns`` order); the fast path of each backend."""
        ...

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Bulk-insert the rows ``columns`` hold (column name → values, all of one length)."""
        ...


class Listener(Protocol):
    """A connection of its own that hears the notices of one channel (PostgreSQL ``LISTEN``)."""

    def wait(self, timeout_s: float) -> bool:
        """Whether a notice arrived within ``timeout_s`` (all that arrived are taken); a store error
        when the connection is lost."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    """An open database of either kind."""

    @property
    def name(self) -> BackendName: ...

    @property
    def display(self) -> str:
        """What to call the database in messages: the file, or the URL without its password."""
        ...

    @property
    def file(self) -> Path | None:
        """The database file, when there is one (not for ``:memory:`` or PostgreSQL)."""
        ...

    @property
    def shared(self) -> bool:
        """Whether other processes may write this database too (PostgreSQL replicas)."""
        ...

    def cursor(self) -> AbstractContextManager[Cursor]:
        """A cursor of its own for reads (each statement commits on its own); always closed."""
        ...

    def transaction[T](self, work: Callable[[Cursor], T], *, lock: str | None = None) -> T:
        """``work(cursor)`` in one transaction, retried on a write conflict. With ``lock``, no other
        transaction holding the same lock (in any process on this database) runs meanwhile, and
        ``work`` sees every write committed before it got the lock."""
        ...

    def startup_lock(self) -> AbstractContextManager[None]:
        """Held while a process migrates and seeds, so processes starting together take turns."""
        ...

    def run_lock(self, key: str, *, wait: bool) -> AbstractContextManager[bool]:
        """Held for a whole job (a refresh run), by one thread of one process on this database at a
        time: yields whether it was got (``wait``: after the holder lets go; else at once or not at
        all). A process that dies holding it lets go (PostgreSQL ends its session)."""
        ...

    def listen(self, channel: str) -> Listener | None:
        """A listener to the notices of ``channel``; ``None`` where no other process writes this
        database (DuckDB), so there is nothing to hear."""
        ...

    def live_replicas(self) -> frozenset[str]:
        """The ``host:pid`` names (``service.db.replica``) of the processes connected to this database
        now, this one included."""
        ...

    def checkpoint(self) -> None:
        """Write everything to the database files now (a no-op where the server does it)."""
        ...

    def close(self) -> None: ...
