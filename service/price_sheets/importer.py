"""Import a price sheet: look its format up once, validate it, diff it, store it as a version.

A sheet with any problem is rejected whole and nothing changes. An accepted sheet becomes an
immutable version of its source (content hash, rows, the diff against the source's previous version,
warnings for implausible price moves, and this report, stored with it); identical content creates no
version. The current catalog is the latest version of every source, swapped in atomically: readers
keep the snapshot they started with.

Concurrent imports (uploads racing each other or a refresh, in one process or in several on one
PostgreSQL database) are safe: version numbers come from a sequence, so they never collide; and an
import stores nothing when another version of its source was stored after it started
(``ImportSuperseded``, a 409) — a slow upload whose client has gone cannot replace newer data with
older. The check and the store run under the source's transaction lock (:func:`source_lock`), so no
other import of the source commits in between.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

import msgspec

from pricing.offers import ParsedOffers, RentalOffer, SheetProblem
from pricing.sheet_formats import (
    SHEET_FORMATS,
    ParsedPrices,
    ParsedProviderCosts,
    SheetContext,
    SheetFormat,
)
from service.db.backend import Cursor
from service.db.sheet_versions import (
    OFFER_COLUMNS,
    SheetContent,
    insert_version,
    latest_hash,
    latest_version,
    next_version,
    ownership_sheet,
    provider_costs_sheet,
    rental_sheet,
)
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import ImportSuperseded, InvalidParameter
from service.price_sheets.schemas import DiffOffer, PriceChange, SheetDiff, SheetReport

__all__ = ["DEFAULT_MOVE_FACTOR", "DIFF_DETAIL_LIMIT", "check_sheet", "import_sheet", "source_lock"]

DIFF_DETAIL_LIMIT: Final = 200
"""Added and removed offers described in full in a diff (``added``/``removed`` list every id): a first
import of a 300,000-row sheet would otherwise store a report larger than the sheet."""

DEFAULT_MOVE_FACTOR: Final = 3.0
"""A price that moves by more than this factor (up or down) since the source's previous version is
flagged in the report as implausible (the sheet is still accepted)."""

_PRICE_FIELDS: Final = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)


def source_lock(source: str) -> str:
    """The transaction lock of ``source``'s versions: held while one is checked and stored."""
    return f"price_sheets:{source}"


def _previous_offers(cur: Cursor, source: str) -> tuple[int | None, dict[str, RentalOffer]]:
    version = latest_version(cur, source, "rental")
    if version is None:
        return None, {}
    rows = cur.execute(
        f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers WHERE version = ?", [version]
    ).fetchall()
    offers = [msgspec.convert(dict(zip(OFFER_COLUMNS, r, strict=True)), RentalOffer) for r in rows]
    return version, {o.offer_id: o for o in offers}


def _diff_offer(offer: RentalOffer) -> DiffOffer:
    return DiffOffer(
        offer_id=offer.offer_id,
        provider=offer.provider,
        instance_type=offer.instance_type,
        region=offer.region,
        gpu=offer.gpu_id,
        gpus_per_instance=offer.gpus_per_instance,
        price_per_hour_usd=offer.price_per_hour_usd,
    )


def _diff(
    previous_version: int | None,
    before: dict[str, RentalOffer],
    after: tuple[RentalOffer, ...],
    factor: float,
) -> tuple[SheetDiff, list[str]]:
    now = {o.offer_id: o for o in after}
    changed: list[PriceChange] = []
    warnings: list[str] = []
    for offer_id, new in sorted(now.items()):
        old = before.get(offer_id)
        if old is None:
            continue
        for field in _PRICE_FIELDS:
            a, b = getattr(old, field), getattr(new, field)
            if a == b:
                continue
            changed.append(
                PriceChange(
                    offer_id=offer_id,
                    field=field,
                    old=a,
                    new=b,
                    provider=new.provider,
                    instance_type=new.instance_type,
                    region=new.region,
                    gpu=new.gpu_id,
                )
            )
            if a and b and max(a / b, b / a) > factor:
                warnings.append(
                    f"{new.provider} {new.instance_type} ({new.region}) {field}: {a:g} -> {b:g} "
                    f"(x{b / a:.2f}, more than the plausible factor {factor:g})"
                )
    added, removed = sorted(set(now) - set(before)), sorted(set(before) - set(now))
    diff = SheetDiff(
        previous_version=previous_version,
        added=added,
        removed=removed,
        changed=changed,
        added_offers=[_diff_offer(now[i]) for i in added[:DIFF_DETAIL_LIMIT]],
        removed_offers=[_diff_offer(before[i]) for i in removed[:DIFF_DETAIL_LIMIT]],
    )
    return diff, warnings


def _parse(
    snapshot: CatalogSnapshot, body: bytes, fmt: SheetFormat, source: str, provider: str | None
) -> tuple[int, SheetContent, list[SheetProblem]]:
    """Rows read, the sheet's content and its problems (a 400 when the format needs a provider)."""
    spec = SHEET_FORMATS[fmt]
    file = f"{source}.{spec.extension}"
    rows, problems = spec.read(body, file)
    if problems:
        return len(rows), rental_sheet([]), problems
    if spec.needs_provider and not provider:
        raise InvalidParameter("provider", "the cloud-catalog format names no provider: give provider=NAME")
    sheet = SheetContext(
        file=file,
        source=f"source {source!r}",
        provider=provider,
        aliases=snapshot.alias_table(),
        gpus=snapshot.gpus,
        mig_slices=snapshot.mig_slices,
    )
    match spec.parse(rows, sheet):
        case ParsedOffers(offers=offers, problems=problems):
            return len(rows), rental_sheet(offers), problems
        case ParsedPrices(prices=prices, problems=problems):
            return len(rows), ownership_sheet(prices), problems
        case ParsedProviderCosts(costs=costs, problems=problems):
            return len(rows), provider_costs_sheet(costs), problems


def _store(
    cur: Cursor,
    report: SheetReport,
    content: SheetContent,
    *,
    origin: str,
    when: datetime,
    move_factor: float,
    base: int | None,
) -> SheetReport:
    """In one transaction: unchanged, or a new version stored with its (final) report — unless a
    version newer than ``base`` (the latest when the import started) has been stored meanwhile."""
    if latest_hash(cur, report.source, content.kind) == content.digest:
        return msgspec.structs.replace(report, result="unchanged", content_hash=content.digest)
    latest = latest_version(cur, report.source, content.kind)
    if latest != base:
        raise ImportSuperseded(
            f"version {latest} of source {report.source!r} was stored while this sheet was being imported "
            f"(it started from version {base}); nothing was stored. Send the sheet again if it should "
            "replace that version.",
            source=report.source,
            version=latest,
        )
    version = next_version(cur)
    diff: SheetDiff | None = None
    warnings: list[str] = []
    if content.kind == "rental":
        diff, warnings = _diff(*_previous_offers(cur, report.source), content.offers, move_factor)
    stored = msgspec.structs.replace(
        report, result="ok", content_hash=content.digest, version=version, diff=diff, warnings=warnings
    )
    insert_version(
        cur,
        version,
        content,
        source=report.source,
        fmt=report.format,
        fetched_at=when,
        origin=origin,
        report=msgspec.json.encode(stored).decode(),
    )
    return stored


def import_sheet(
    store: Store,
    *,
    source: str,
    fmt: SheetFormat,
    body: bytes,
    provider: str | None = None,
    origin: str,
    fetched_at: datetime | None = None,
    move_factor: float = DEFAULT_MOVE_FACTOR,
) -> SheetReport:
    """Validate ``body`` and, if it is clean and new, store it as a version of ``source`` atomically."""
    with store.cursor() as cur:
        base = latest_version(cur, source, SHEET_FORMATS[fmt].kind)
    rows, content, problems = _parse(store.snapshot, body, fmt, source, provider)
    report = SheetReport(
        source=source,
        kind=SHEET_FORMATS[fmt].kind,
        format=fmt,
        result="rejected",
        rows=rows,
        accepted_rows=content.row_count,
        problems=problems,
        warnings=[],
    )
    if problems:
        return report
    when = fetched_at or datetime.now(UTC)
    stored = store.transaction(
        lambda cur: _store(
            cur, report, content, origin=origin, when=when, move_factor=move_factor, base=base
        ),
        lock=source_lock(source),
    )
    if stored.result == "ok":
        store.refresh_snapshot()
    return stored


def check_sheet(
    snapshot: CatalogSnapshot, body: bytes, fmt: SheetFormat, source: str, provider: str | None
) -> tuple[int, list[SheetProblem]]:
    """Rows read and problems of ``body``, storing nothing (``gpuplan check``)."""
    rows, _content, problems = _parse(snapshot, body, fmt, source, provider)
    return rows, problems
