"""A live source retires the shipped (``seed``) offers of its provider.

A source configured with ``retire_seed_provider = true`` sells the same provider's instances as the
shipped sheet, at live prices: without this both stay current and plans see each instance twice, once
at a stale price. After each successful run of such a source, the shipped offers of its provider are
dropped from the current catalog by storing a new version of the ``seed`` source without them (history
keeps the old version; nothing is stored when they are gone already).
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from pricing import RentalOffer
from service.db.backend import Cursor
from service.db.seed import SEED_SOURCE
from service.db.sheet_versions import (
    OFFER_COLUMNS,
    insert_version,
    latest_version,
    next_version,
    rental_sheet,
)
from service.db.store import Store
from service.price_sheets.importer import source_lock

__all__ = ["retire_seed_provider"]


def _retire(cur: Cursor, provider: str, by: str) -> int | None:
    version = latest_version(cur, SEED_SOURCE, "rental")
    if version is None:
        return None
    rows = cur.execute(
        f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers WHERE version = ?", [version]
    ).fetchall()
    offers = [msgspec.convert(dict(zip(OFFER_COLUMNS, r, strict=True)), RentalOffer) for r in rows]
    kept = [o for o in offers if o.provider != provider]
    if len(kept) == len(offers):
        return None
    fmt, fetched_at = cur.execute(
        "SELECT format, fetched_at FROM price_sheets WHERE version = ?", [version]
    ).fetchone() or ("cloud-prices-csv", datetime.now(UTC))
    new = next_version(cur)
    insert_version(
        cur,
        new,
        rental_sheet(kept),
        source=SEED_SOURCE,
        fmt=str(fmt),
        fetched_at=fetched_at,
        origin=f"shipped offers of {provider!r} retired: source {by!r} replaces them",
    )
    return new


def retire_seed_provider(store: Store, provider: str, *, by: str) -> int | None:
    """Drop ``provider``'s shipped offers from the current catalog (source ``by`` replaces them); the new
    ``seed`` version, or ``None`` when there were none left to drop."""
    version = store.transaction(lambda cur: _retire(cur, provider, by), lock=source_lock(SEED_SOURCE))
    if version is not None:
        store.refresh_snapshot()
    return version
