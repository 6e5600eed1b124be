"""The diff of a new rental-sheet version against the source's previous one, computed in SQL.

Both versions' rows are in the store once the new version is written (inside the import's
transaction), so the store compares them: only changed prices, and the ids of added and removed
offers, come back to Python (a 300,000-row sheet is never held twice as objects to be compared).
Ids are sorted here, not in SQL, so the order does not depend on the database's collation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from service.db.backend import Cursor
from service.price_sheets.schemas import DiffOffer, PriceChange, SheetDiff

__all__ = ["DIFF_DETAIL_LIMIT", "sheet_diff"]

DIFF_DETAIL_LIMIT: Final = 200
"""Added and removed offers described in full in a diff (``added``/``removed`` list every id): a first
import of a 300,000-row sheet would otherwise store a report larger than the sheet."""

_PRICE_FIELDS: Final = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)

_CHANGED: Final = (
    "SELECT n.offer_id, n.provider, n.instance_type, n.region, n.gpu_id, "
    + ", ".join(f"o.{f}, n.{f}" for f in _PRICE_FIELDS)
    + " FROM offers n JOIN offers o ON o.offer_id = n.offer_id WHERE n.version = ? AND o.version = ? AND ("
    + " OR ".join(f"o.{f} IS DISTINCT FROM n.{f}" for f in _PRICE_FIELDS)
    + ")"
)
_ONLY_IN: Final = (
    "SELECT offer_id FROM offers a WHERE a.version = ? "
    "AND NOT EXISTS (SELECT 1 FROM offers b WHERE b.version = ? AND b.offer_id = a.offer_id)"
)


def _only_in(cur: Cursor, version: int, other: int | None) -> list[str]:
    """The ids of offers of ``version`` that ``other`` lacks, sorted."""
    if other is None:
        rows = cur.execute("SELECT offer_id FROM offers WHERE version = ?", [version]).fetchall()
    else:
        rows = cur.execute(_ONLY_IN, [version, other]).fetchall()
    return sorted(str(row[0]) for row in rows)


def _described(cur: Cursor, version: int, ids: Sequence[str]) -> list[DiffOffer]:
    """The first :data:`DIFF_DETAIL_LIMIT` of ``ids`` (offers of ``version``), in that order."""
    ids = ids[:DIFF_DETAIL_LIMIT]
    if not ids:
        return []
    rows = cur.execute(
        "SELECT offer_id, provider, instance_type, region, gpu_id, gpus_per_instance, price_per_hour_usd "
        f"FROM offers WHERE version = ? AND offer_id IN ({', '.join('?' for _ in ids)})",
        [version, *ids],
    ).fetchall()
    found = {
        row[0]: DiffOffer(
            offer_id=row[0],
            provider=row[1],
            instance_type=row[2],
            region=row[3],
            gpu=row[4],
            gpus_per_instance=int(row[5]),
            price_per_hour_usd=row[6],
        )
        for row in rows
    }
    return [found[i] for i in ids]


def _changes(cur: Cursor, previous: int, version: int, factor: float) -> tuple[list[PriceChange], list[str]]:
    """Every price that moved (by offer id, then field), and a warning for each that moved more than
    ``factor`` either way."""
    changed: list[PriceChange] = []
    warnings: list[str] = []
    for row in sorted(cur.execute(_CHANGED, [version, previous]).fetchall()):
        offer_id, provider, instance_type, region, gpu = row[:5]
        for index, field in enumerate(_PRICE_FIELDS):
            a, b = row[5 + 2 * index], row[6 + 2 * index]
            if a == b:
                continue
            changed.append(
                PriceChange(
                    offer_id=offer_id,
                    field=field,
                    old=a,
                    new=b,
                    provider=provider,
                    instance_type=instance_type,
                    region=region,
                    gpu=gpu,
                )
            )
            if a and b and max(a / b, b / a) > factor:
                warnings.append(
                    f"{provider} {instance_type} ({region}) {field}: {a:g} -> {b:g} "
                    f"(x{b / a:.2f}, more than the plausible factor {factor:g})"
                )
    return changed, warnings


def sheet_diff(cur: Cursor, previous: int | None, version: int, factor: float) -> tuple[SheetDiff, list[str]]:
    """Version ``version`` against ``previous`` (``None``: the source's first version), and the
    warnings for prices that moved by more than ``factor``."""
    added = _only_in(cur, version, previous)
    removed = [] if previous is None else _only_in(cur, previous, version)
    changed, warnings = ([], []) if previous is None else _changes(cur, previous, version, factor)
    diff = SheetDiff(
        previous_version=previous,
        added=added,
        removed=removed,
        changed=changed,
        added_offers=_described(cur, version, added),
        removed_offers=[] if previous is None else _described(cur, previous, removed),
    )
    return diff, warnings
