"""Price-sheet versions: import (validate, diff, store in one transaction), history, reports.

A sheet with any problem is rejected whole and nothing changes. An accepted sheet becomes an
immutable version of its source (content hash, rows, the diff against the source's previous version,
warnings for implausible price moves); identical content creates no version. The current catalog is
the latest version of every source, swapped in atomically: readers keep the snapshot they started with.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Literal

import duckdb
import msgspec

from pricing.offers import RentalOffer, SheetProblem
from pricing.ownership import OwnershipPrice
from pricing.sheet_formats import (
    SheetFormat,
    SheetRows,
    parse_ownership_rows,
    parse_rental_rows,
    parse_skypilot_rows,
    read_rows,
)
from service.db.seed import SEED_SOURCE
from service.db.sheet_versions import (
    OFFER_COLUMNS,
    add_ownership_version,
    add_rental_version,
    content_hash,
    latest_hash,
)
from service.db.store import Store
from service.errors import InvalidParameter, NotFound

__all__ = [
    "DEFAULT_MOVE_FACTOR",
    "OfferHistory",
    "PriceChange",
    "PricePoint",
    "SheetDiff",
    "SheetReport",
    "SheetVersion",
    "SheetVersionPage",
    "get_version",
    "import_sheet",
    "list_versions",
    "offer_history",
    "validate_source_name",
]

DEFAULT_MOVE_FACTOR = 3.0
"""A price that moves by more than this factor (up or down) since the source's previous version is
flagged in the report as implausible (the sheet is still accepted)."""

_SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_PRICE_FIELDS = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)


class PriceChange(msgspec.Struct, kw_only=True):
    offer_id: str
    field: str
    old: float | None
    new: float | None


class SheetDiff(msgspec.Struct, kw_only=True):
    """Offers added, removed and repriced against the source's previous version."""

    previous_version: int | None
    added: list[str]
    removed: list[str]
    changed: list[PriceChange]


class SheetReport(msgspec.Struct, kw_only=True):
    """What an import did: ``ok`` (a new version), ``unchanged`` (identical content) or ``rejected``."""

    source: str
    kind: Literal["rental", "ownership"]
    format: str
    result: Literal["ok", "unchanged", "rejected"]
    rows: int
    accepted_rows: int
    problems: list[SheetProblem]
    warnings: list[str]
    content_hash: str | None = None
    version: int | None = None
    diff: SheetDiff | None = None


class SheetVersion(msgspec.Struct, kw_only=True):
    version: int
    source: str
    kind: str
    format: str
    content_hash: str
    rows: int
    fetched_at: datetime
    created_at: datetime
    origin: str
    current: bool
    report: SheetReport | None = None


class SheetVersionPage(msgspec.Struct, kw_only=True):
    items: list[SheetVersion]
    total: int
    limit: int
    offset: int


class PricePoint(msgspec.Struct, kw_only=True):
    version: int
    source: str
    fetched_at: datetime
    price_per_hour_usd: float | None
    spot_price_per_hour_usd: float | None
    reserved_1y_price_per_hour_usd: float | None
    reserved_3y_price_per_hour_usd: float | None


class OfferHistory(msgspec.Struct, kw_only=True):
    """An offer's price in every sheet version that listed it, oldest first."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpu_id: str
    gpus_per_instance: int
    in_current_catalog: bool
    points: list[PricePoint]


def validate_source_name(source: str, *, field: str = "source") -> str:
    if not _SOURCE_NAME.match(source):
        raise InvalidParameter(field, "1-64 characters: lower-case letters, digits, '.', '_' or '-'")
    if source == SEED_SOURCE:
        raise InvalidParameter(field, f"{SEED_SOURCE!r} is the shipped data's source; choose another name")
    return source


def _previous_offers(
    cur: duckdb.DuckDBPyConnection, source: str
) -> tuple[int | None, dict[str, RentalOffer]]:
    row = cur.execute(
        "SELECT max(version) FROM price_sheets WHERE source = ? AND kind = 'rental'", [source]
    ).fetchone()
    version = None if row is None or row[0] is None else int(row[0])
    if version is None:
        return None, {}
    rows = cur.execute(
        f"SELECT {', '.join(OFFER_COLUMNS)} FROM offers WHERE version = ?", [version]
    ).fetchall()
    offers = [RentalOffer(**dict(zip(OFFER_COLUMNS, r, strict=True))) for r in rows]
    return version, {o.offer_id: o for o in offers}


def _diff(
    previous_version: int | None, before: dict[str, RentalOffer], after: list[RentalOffer], factor: float
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
            changed.append(PriceChange(offer_id=offer_id, field=field, old=a, new=b))
            if a and b and max(a / b, b / a) > factor:
                warnings.append(
                    f"{new.provider} {new.instance_type} ({new.region}) {field}: {a:g} -> {b:g} "
                    f"(x{b / a:.2f}, more than the plausible factor {factor:g})"
                )
    diff = SheetDiff(
        previous_version=previous_version,
        added=sorted(set(now) - set(before)),
        removed=sorted(set(before) - set(now)),
        changed=changed,
    )
    return diff, warnings


_Items = list[RentalOffer] | list[OwnershipPrice]


def _parse(
    store: Store, body: bytes, fmt: SheetFormat, source: str, provider: str | None
) -> tuple[SheetRows, _Items, list[SheetProblem]]:
    snapshot = store.snapshot
    aliases = snapshot.alias_table()
    file = f"{source}.{'json' if fmt.endswith('json') else 'csv'}"
    rows, problems = read_rows(body, fmt, file)
    if problems:
        return rows, [], problems
    origin = f"source {source!r}"
    if fmt in ("rental_csv", "rental_json"):
        parsed = parse_rental_rows(
            rows, file=file, source=origin, provider=provider, aliases=aliases, gpus=snapshot.gpus
        )
        return rows, parsed.offers, parsed.problems
    if fmt == "cloud_catalog_csv":
        if not provider:
            raise InvalidParameter(
                "provider", "the cloud-catalog format names no provider: give provider=NAME"
            )
        parsed = parse_skypilot_rows(
            rows, file=file, source=origin, provider=provider, aliases=aliases, gpus=snapshot.gpus
        )
        return rows, parsed.offers, parsed.problems
    prices, problems = parse_ownership_rows(rows, file=file, aliases=aliases, gpus=snapshot.gpus)
    return rows, prices, problems


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
    kind: Literal["rental", "ownership"] = "ownership" if fmt == "ownership_csv" else "rental"
    rows, items, problems = _parse(store, body, fmt, source, provider)
    report = SheetReport(
        source=source,
        kind=kind,
        format=fmt,
        result="rejected",
        rows=len(rows),
        accepted_rows=len(items),
        problems=problems,
        warnings=[],
    )
    if problems:
        return report
    when = fetched_at or datetime.now(UTC)
    for attempt in range(5):
        try:
            return _store(store, report, items, kind, fmt, origin, when, move_factor)
        except duckdb.TransactionException:  # a concurrent writer touched the same rows: retry
            time.sleep(0.05 * (attempt + 1))
    return _store(store, report, items, kind, fmt, origin, when, move_factor)


def _store(
    store: Store,
    report: SheetReport,
    items: _Items,
    kind: Literal["rental", "ownership"],
    fmt: str,
    origin: str,
    when: datetime,
    move_factor: float,
) -> SheetReport:
    with store.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        try:
            digest = content_hash(items)
            if latest_hash(cur, report.source, kind) == digest:
                cur.execute("ROLLBACK")
                report.result, report.content_hash = "unchanged", digest
                return report
            if kind == "rental":
                offers = [item for item in items if isinstance(item, RentalOffer)]
                previous, before = _previous_offers(cur, report.source)
                report.diff, report.warnings = _diff(previous, before, offers, move_factor)
                report.result, report.content_hash = "ok", digest
                report.version = add_rental_version(
                    cur,
                    source=report.source,
                    fmt=fmt,
                    offers=offers,
                    fetched_at=when,
                    origin=origin,
                    report=msgspec.json.encode(report).decode(),
                )
            else:
                report.result, report.content_hash = "ok", digest
                report.version = add_ownership_version(
                    cur,
                    source=report.source,
                    fmt=fmt,
                    prices=items,
                    defaults=[],
                    fetched_at=when,
                    origin=origin,
                    report=msgspec.json.encode(report).decode(),
                )
            # the stored report carries its own version number
            cur.execute(
                "UPDATE price_sheets SET report = ? WHERE version = ?",
                [msgspec.json.encode(report).decode(), report.version],
            )
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
    store.refresh_snapshot()
    return report


_VERSION_SELECT = (
    "SELECT p.version, p.source, p.kind, p.format, p.content_hash, p.row_count, p.fetched_at, p.created_at, "
    "p.origin, c.version IS NOT NULL, p.report FROM price_sheets p LEFT JOIN current_sheets c USING (version)"
)


def _version(row: tuple[object, ...], with_report: bool) -> SheetVersion:
    report = msgspec.json.decode(str(row[10]), type=SheetReport) if with_report and row[10] else None
    return SheetVersion(
        version=int(row[0]),  # type: ignore[call-overload]
        source=str(row[1]),
        kind=str(row[2]),
        format=str(row[3]),
        content_hash=str(row[4]),
        rows=int(row[5]),  # type: ignore[call-overload]
        fetched_at=row[6],  # type: ignore[arg-type]
        created_at=row[7],  # type: ignore[arg-type]
        origin=str(row[8]),
        current=bool(row[9]),
        report=report,
    )


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
    if not rows:
        raise NotFound(f"no offer {offer_id!r} in any price-sheet version")
    last = rows[-1]
    current = any(c.offer.offer_id == offer_id for c in store.snapshot.offers)
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
