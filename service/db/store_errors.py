"""The store's errors, whichever backend raised them: one tuple to catch, and what an error means.

DuckDB raises ``duckdb.Error`` subclasses and PostgreSQL ``psycopg.Error`` subclasses (the pool's
``PoolTimeout`` among them); callers catch :data:`STORE_ERRORS` and ask :func:`is_write_conflict` (run
the transaction again) or :func:`is_store_unavailable` (a 503: the database cannot be written or
reached right now, rather than a query being wrong).
"""

from __future__ import annotations

from typing import Final

import duckdb
import psycopg
import psycopg.errors

__all__ = ["STORE_ERRORS", "is_store_invalidated", "is_store_unavailable", "is_write_conflict"]

STORE_ERRORS: Final[tuple[type[Exception], ...]] = (duckdb.Error, psycopg.Error)

_CONFLICTS: Final = (
    duckdb.TransactionException,  # DuckDB's optimistic concurrency control: "Conflict on update"
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
)
_DUCKDB_UNAVAILABLE: Final = (duckdb.IOException, duckdb.PermissionException, duckdb.FatalException)
_POSTGRES_UNAVAILABLE: Final = (
    psycopg.OperationalError,  # connection refused or lost, server shutting down, disk full, pool timeout
    psycopg.errors.ReadOnlySqlTransaction,  # a standby, or default_transaction_read_only
    psycopg.errors.InsufficientPrivilege,
)
_DUCKDB_MESSAGES: Final = ("read-only mode", "database has been invalidated")


def is_write_conflict(exc: BaseException) -> bool:
    """Whether another transaction's writes made this one fail, so running it again may succeed."""
    return isinstance(exc, _CONFLICTS)


def is_store_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be written or reached (rather than that a query is
    wrong): DuckDB's I/O, permission and fatal errors and its "read-only mode" refusal; PostgreSQL's
    connection and resource errors, a read-only transaction, a refused privilege."""
    if is_write_conflict(exc):
        return False
    if isinstance(exc, _DUCKDB_UNAVAILABLE + _POSTGRES_UNAVAILABLE):
        return True
    return isinstance(exc, duckdb.Error) and any(m in str(exc) for m in _DUCKDB_MESSAGES)


def is_store_invalidated(exc: BaseException) -> bool:
    """Whether ``exc`` says the embedded database is invalidated: after a fatal error (a full disk
    during a checkpoint, say) DuckDB refuses every later query on that connection, even once the cause
    is gone; only a new process (which replays the write-ahead log) serves again."""
    return isinstance(exc, duckdb.FatalException) or (
        isinstance(exc, duckdb.Error) and "database has been invalidated" in str(exc)
    )
