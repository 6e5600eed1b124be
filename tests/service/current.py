"""Every current offer, read from the store: the snapshot holds only the offers a request can pick."""

from __future__ import annotations

import msgspec

from pricing.sheets.offers import RentalOffer
from service.db.sheet_versions import OFFER_COLUMNS
from service.db.store import Store

__all__ = ["current_offers"]


def current_offers(store: Store) -> list[RentalOffer]:
    with store.cursor() as cur:
        rows = cur.execute(
            f"SELECT {', '.join(OFFER_COLUMNS)} FROM current_offers ORDER BY offer_id"
        ).fetchall()
    return [msgspec.convert(dict(zip(OFFER_COLUMNS, row, strict=True)), RentalOffer) for row in rows]
