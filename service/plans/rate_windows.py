"""The plan rate limit's counts in the database, shared by every replica of a PostgreSQL store.

Litestar's rate limit keeps each client's window in the process (a memory store), so three replicas
behind a load balancer would let a client make three times ``GPUPLAN_PLAN_RATE``. On PostgreSQL every
replica counts in one table instead: one statement per plan request counts it and answers the window's
count and its end, atomically (``INSERT … ON CONFLICT DO UPDATE … RETURNING`` takes the row's lock, so
concurrent requests on any replica are counted one after another). The window starts at a client's
first request and lasts the rate's unit, as Litestar's does; the clock is the database's, so replicas'
clocks need not agree. Windows that ended are deleted now and then (``delete_expired``).

DuckDB serves one process, whose memory store is exact; this module is used on PostgreSQL only.
"""

from __future__ import annotations

from typing import Final

from service.db.store import Store

__all__ = ["RateWindows"]

_NOW: Final = "CAST(floor(extract(epoch FROM clock_timestamp())) AS BIGINT)"
_HIT: Final = f"""
INSERT INTO rate_limit_windows AS w (client_key, hits, reset_at) VALUES (?, 1, {_NOW} + ?)
ON CONFLICT (client_key) DO UPDATE SET
    hits = CASE WHEN w.reset_at <= {_NOW} THEN 1 ELSE w.hits + 1 END,
    reset_at = CASE WHEN w.reset_at <= {_NOW} THEN excluded.reset_at ELSE w.reset_at END
RETURNING hits, reset_at
"""


class RateWindows:
    """Fixed rate windows per client key in ``store``'s ``rate_limit_windows`` table."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def hit(self, key: str, window_s: int) -> tuple[int, int]:
        """Count one request of ``key``: the requests counted in its window, this one included (refused
        ones count too: a client over the limit stays over it until the window ends), and the window's
        end (Unix seconds)."""
        row = self.store.transaction(lambda cur: cur.execute(_HIT, [key, window_s]).fetchone())
        assert row is not None  # INSERT … RETURNING answers one row
        return int(row[0]), int(row[1])

    def delete_expired(self) -> None:
        """Forget the windows that have ended."""
        self.store.transaction(
            lambda cur: cur.execute(f"DELETE FROM rate_limit_windows WHERE reset_at <= {_NOW}")
        )
