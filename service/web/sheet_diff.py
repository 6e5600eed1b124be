"""The difference between two rental sheet versions, offer by offer: added, removed and repriced
offers with their provider, instance type, region and GPU, and the old and new price."""

from __future__ import annotations

from typing import Final

import msgspec

from service.db.store import Store
from service.errors import InvalidParameter

__all__ = ["OfferLine", "PriceMove", "VersionDiff", "diff_versions"]

_COLUMNS: Final = "offer_id, provider, instance_type, region, gpu_id, gpus_per_instance, price_per_hour_usd, spot_price_per_hour_usd"


class OfferLine(msgspec.Struct, frozen=True, kw_only=True):
    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpu_id: str
    gpus_per_instance: int
    price_per_hour_usd: float | None
    spot_price_per_hour_usd: float | None


class PriceMove(msgspec.Struct, frozen=True, kw_only=True):
    offer: OfferLine
    field: str
    old: float | None
    new: float | None


class VersionDiff(msgspec.Struct, frozen=True, kw_only=True):
    old_version: int
    new_version: int
    added: list[OfferLine]
    removed: list[OfferLine]
    moved: list[PriceMove]


def _offers(store: Store, version: int, field: str) -> dict[str, OfferLine]:
    with store.cursor() as cur:
        kind = cur.execute("SELECT kind FROM price_sheets WHERE version = ?", [version]).fetchone()
        if kind is None:
            raise InvalidParameter(field, f"no sheet version {version}")
        if kind[0] != "rental":
            raise InvalidParameter(field, f"version {version} is a {kind[0]} sheet; compare rental sheets")
        rows = cur.execute(f"SELECT {_COLUMNS} FROM offers WHERE version = ?", [version]).fetchall()
    fields = OfferLine.__struct_fields__
    return {row[0]: OfferLine(**dict(zip(fields, row, strict=True))) for row in rows}


def diff_versions(store: Store, old: int, new: int) -> VersionDiff:
    """What changed from rental version ``old`` to ``new`` (any two, of any sources)."""
    before, after = _offers(store, old, "from"), _offers(store, new, "to")
    moved = [
        PriceMove(offer=line, field=field, old=getattr(before[key], field), new=getattr(line, field))
        for key, line in sorted(after.items())
        if key in before
        for field in ("price_per_hour_usd", "spot_price_per_hour_usd")
        if getattr(before[key], field) != getattr(line, field)
    ]
    return VersionDiff(
        old_version=old,
        new_version=new,
        added=sorted((o for k, o in after.items() if k not in before), key=_order),
        removed=sorted((o for k, o in before.items() if k not in after), key=_order),
        moved=moved,
    )


def _order(line: OfferLine) -> tuple[str, str, str]:
    return line.provider, line.instance_type, line.region
