"""The history of price sheets: every version with its import report, and an offer's prices over time."""

from __future__ import annotations

from typing import Any

import msgspec

from service.db.store import Store
from service.errors import NotFound
from service.price_sheets.schemas import OfferHistory, PricePoint, SheetReport, SheetVersion, SheetVersionPage

__all__ = ["get_version", "list_versions", "offer_history"]

_VERSION_SELECT = (
    "SELECT p.version, p.source, p.kind, p.format, p.content_hash, p.row_count, p.fetched_at, p.created_at, "
    "p.origin, c.version IS NOT NULL, p.report FROM price_sheets p LEFT JOIN current_sheets c USING (version)"
)


_VERSION_FIELDS = (
    "version",
    "source",
    "kind",
    "format",
    "content_hash",
    "rows",
    "fetched_at",
    "created_at",
    "origin",
    "current",
)


def _version(row: tuple[Any, ...], with_report: bool) -> SheetVersion:
    version = msgspec.convert(dict(zip(_VERSION_FIELDS, row[:-1], strict=True)), SheetVersion)
    if with_report and row[-1]:
        version.report = msgspec.json.decode(str(row[-1]), type=SheetReport)
    return version


def list_versions(
    store: Store, *, source: str | None = None, limit: int = 50, offset: int = 0
) -> SheetVersionPage:
    """Every sheet version, newest first, each naming its source."""
    where = " WHERE p.source = ?" if source else ""
    params: list[object] = [source] if source else []
    with store.cursor() as cur:
        total_row = cur.execute(f"SELECT count(*) FROM price_sheets p{where}", params).fetchone()
        rows = cur.execute(
            f"{_VERSION_SELECT}{where} ORDER BY p.version DESC LIMIT ? OFFSET ?", [*params, limit, offset]
        ).fetchall()
    return SheetVersionPage(
        items=[_version(r, False) for r in rows],
        total=int(total_row[0]) if total_row else 0,
        limit=limit,
        offset=offset,
    )


def get_version(store: Store, version: int) -> SheetVersion:
    """One version with its import report (problems, warnings, diff)."""
    with store.cursor() as cur:
        row = cur.execute(f"{_VERSION_SELECT} WHERE p.version = ?", [version]).fetchone()
    if row is None:
        raise NotFound(f"no price-sheet version {version}")
    return _version(row, True)


def offer_history(store: Store, offer_id: str) -> OfferHistory:
    """The offer's prices over every version that listed it."""
    with store.cursor() as cur:
        rows = cur.execute(
            "SELECT o.version, s.source, s.fetched_at, o.price_per_hour_usd, o.spot_price_per_hour_usd, "
            "o.reserved_1y_price_per_hour_usd, o.reserved_3y_price_per_hour_usd, o.provider, o.instance_type, "
            "o.region, o.gpu_id, o.gpus_per_instance FROM offers o JOIN price_sheets s USING (version) "
            "WHERE o.offer_id = ? ORDER BY o.version",
            [offer_id],
        ).fetchall()
        listed = cur.execute("SELECT count(*) FROM current_offers WHERE offer_id = ?", [offer_id]).fetchone()
    if not rows:
        raise NotFound(f"no offer {offer_id!r} in any price-sheet version")
    last = rows[-1]
    current = bool(listed and listed[0])
    return OfferHistory(
        offer_id=offer_id,
        provider=last[7],
        instance_type=last[8],
        region=last[9],
        gpu_id=last[10],
        gpus_per_instance=int(last[11]),
        in_current_catalog=current,
        points=[
            PricePoint(
                version=int(r[0]),
                source=r[1],
                fetched_at=r[2],
                price_per_hour_usd=r[3],
                spot_price_per_hour_usd=r[4],
                reserved_1y_price_per_hour_usd=r[5],
                reserved_3y_price_per_hour_usd=r[6],
            )
            for r in rows
        ],
    )
