"""Stored plans are kept ``GPUPLAN_PLAN_RETENTION_DAYS`` days (0: forever), then deleted (a plan's
summary is in its row); the scheduler runs :func:`delete_expired_plans` every hour.

Plans are the one table that grows with traffic (every ``POST /v1/plans``); a service that keeps them
forever grows its database, and on DuckDB its memory, without bound. A deleted plan's URL answers 404.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from service.db.backend import Cursor
from service.db.store import Store

__all__ = ["delete_expired_plans"]

_log = logging.getLogger("gpuplan.retention")


def delete_expired_plans(store: Store, days: float, now: datetime | None = None) -> int:
    """Delete the plans created more than ``days`` days before ``now``; how many went (0 for ``days`` 0)."""
    if days <= 0:
        return 0
    cutoff = (now or datetime.now(UTC)) - timedelta(days=days)

    def delete(cur: Cursor) -> int:
        row = cur.execute("SELECT count(*) FROM plans WHERE created_at < ?", [cutoff]).fetchone()
        cur.execute("DELETE FROM plans WHERE created_at < ?", [cutoff])
        return int(row[0]) if row else 0

    deleted = store.transaction(delete)
    if deleted:
        _log.info("deleted %d plan(s) older than %g day(s)", deleted, days)
    return deleted
