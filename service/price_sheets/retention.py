"""Superseded price-sheet versions are kept ``GPUPLAN_SHEET_RETENTION_DAYS`` days (0: forever), and the
newest ``GPUPLAN_SHEET_RETENTION_KEEP`` of each source and kind whatever their age; the scheduler runs
:func:`delete_superseded_versions` every hour (issue 28 D24).

A source refreshed every few minutes adds a version each time its prices move; kept forever, their
rows grow the database (and, on DuckDB, its memory) without bound. The current version of each source
and kind is never deleted, nor any version a stored plan references: a plan names every sheet version
it priced against (``price_sheet.versions[].version``, each offer's and default's ``sheet_version``),
so such a version goes only once the plans that name it have expired (``GPUPLAN_PLAN_RETENTION_DAYS``).
A deleted version's rows go with it, in one transaction; ``GET /v1/price-sheets/{version}`` answers 404.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Final

from service.db.backend import Cursor
from service.db.store import Store

__all__ = ["delete_superseded_versions"]

_log = logging.getLogger("gpuplan.retention")

_ROW_TABLES: Final = ("offers", "ownership_prices", "ownership_defaults", "provider_costs")
_CANDIDATES: Final = """
    SELECT version, created_at FROM (
        SELECT version, created_at,
               row_number() OVER (PARTITION BY source, kind ORDER BY version DESC) AS newest,
               lag(created_at) OVER (PARTITION BY source, kind ORDER BY version DESC) AS superseded_at
        FROM price_sheets) AS ranked
    WHERE newest > ? AND created_at < ? AND superseded_at < ?"""
"""The versions past the current one and the ``keep`` newest superseded ones, stored before the cutoff
and superseded before the grace."""
_GRACE: Final = timedelta(hours=1)
"""A version superseded less than this long ago may still be in a snapshot a plan under way prices
against (and will name when it is stored): it is kept that long, whatever ``days``."""
_REFERENCED: Final = {
    "duckdb": "SELECT DISTINCT unnest(regexp_extract_all(CAST(plan AS VARCHAR), "
    "'\"(?:sheet_)?version\":(\\d+)', 1)) FROM plans WHERE created_at >= ?",
    "postgresql": "SELECT DISTINCT (regexp_matches(CAST(plan AS VARCHAR), "
    "'\"(?:sheet_)?version\":(\\d+)', 'g'))[1] FROM plans WHERE created_at >= ?",
}
"""The sheet versions the plans stored since a time name (plans store compact JSON: ``"version":12``)."""
_CLOCK_SLACK: Final = timedelta(days=1)
"""A plan made before a version was stored cannot name it; plans are stamped by the replica that made
them and versions by the database, so the plans looked at start a day before the oldest candidate."""
_BATCH: Final = 500


def _deletable(cur: Cursor, keep: int, cutoff: datetime, now: datetime) -> list[int]:
    candidates = cur.execute(_CANDIDATES, [keep + 1, cutoff, now - _GRACE]).fetchall()
    if not candidates:
        return []
    since = min(created for _, created in candidates) - _CLOCK_SLACK
    named = {int(v) for (v,) in cur.execute(_REFERENCED[cur.dialect.name], [since]).fetchall()}
    return sorted(int(version) for version, _ in candidates if int(version) not in named)


def delete_superseded_versions(store: Store, days: float, keep: int = 0, now: datetime | None = None) -> int:
    """Delete the superseded versions stored more than ``days`` days before ``now``, except each source
    and kind's ``keep`` newest superseded ones and those a stored plan names; how many went (0 for
    ``days`` 0)."""
    if days <= 0:
        return 0
    now = now or datetime.now(UTC)
    cutoff = now - timedelta(days=days)

    def delete(cur: Cursor) -> int:
        versions = _deletable(cur, keep, cutoff, now)
        for start in range(0, len(versions), _BATCH):
            batch = versions[start : start + _BATCH]
            marks = ", ".join("?" for _ in batch)
            for table in (*_ROW_TABLES, "price_sheets"):
                cur.execute(f"DELETE FROM {table} WHERE version IN ({marks})", batch)
        return len(versions)

    deleted = store.transaction(delete, lock="sheet-retention")
    if deleted:
        store.refresh_snapshot()
        _log.info("deleted %d superseded price-sheet version(s) older than %g day(s)", deleted, days)
    return deleted
