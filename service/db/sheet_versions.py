"""Immutable, content-addressed versions of price sheets in the store.

A sheet's rows and their order-independent hash travel together (:class:`SheetContent`, hashed once).
A version is added only when its hash differs from the source's latest version (identical content
creates none). The caller owns the transaction, so a version, its rows and its import report appear
together or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from operator import attrgetter, methodcaller
from typing import Final

import msgspec

from pricing import OwnershipDefault, OwnershipPrice, ProviderCost, RentalOffer, SheetKind
from service.db.backend import Cursor
from service.db.bulk import insert_columns
from service.db.sequences import next_id

__all__ = [
    "OFFER_COLUMNS",
    "SheetContent",
    "add_version",
    "content_hash",
    "insert_version",
    "latest_hash",
    "latest_version",
    "next_version",
    "ownership_sheet",
    "provider_costs_sheet",
    "rental_sheet",
    "set_report",
]

OFFER_COLUMNS: Final[tuple[str, ...]] = RentalOffer.__struct_fields__
_DIGEST: Final = methodcaller("digest")


def content_hash(items: Sequence[msgspec.Struct]) -> str:
    """A hash of a sheet's rows that ignores their order: the sorted hashes of the rows' values
    (MessagePack of each row's fields in order), hashed. 32 bytes a row are held at once, not the rows'
    encodings (a 300,000-row sheet's JSON is 250 MB)."""
    rows = map(hashlib.sha256, map(msgspec.msgpack.Encoder().encode, map(msgspec.structs.astuple, items)))
    return "sha256:" + hashlib.sha256(b"".join(sorted(map(_DIGEST, rows)))).hexdigest()


class SheetContent(msgspec.Struct, frozen=True, kw_only=True):
    """The rows of one sheet and their content hash: rental offers, ownership prices and defaults, or
    provider costs."""

    kind: SheetKind
    digest: str
    offers: tuple[RentalOffer, ...] = ()
    prices: tuple[OwnershipPrice, ...] = ()
    defaults: tuple[OwnershipDefault, ...] = ()
    costs: tuple[ProviderCost, ...] = ()

    @property
    def row_count(self) -> int:
        return len(self.offers) + len(self.prices) + len(self.defaults) + len(self.costs)


def rental_sheet(offers: Sequence[RentalOffer]) -> SheetContent:
    return SheetContent(kind="rental", digest=content_hash(offers), offers=tuple(offers))


def ownership_sheet(
    prices: Sequence[OwnershipPrice], defaults: Sequence[OwnershipDefault] = ()
) -> SheetContent:
    """Purchase prices and finance defaults, hashed together."""
    return SheetContent(
        kind="ownership",
        digest=content_hash([*prices, *defaults]),
        prices=tuple(prices),
        defaults=tuple(defaults),
    )


def provider_costs_sheet(costs: Sequence[ProviderCost]) -> SheetContent:
    return SheetContent(kind="provider_costs", digest=content_hash(costs), costs=tuple(costs))


def latest_hash(cur: Cursor, source: str, kind: SheetKind) -> str | None:
    row = cur.execute(
        "SELECT content_hash FROM price_sheets WHERE source = ? AND kind = ? ORDER BY version DESC LIMIT 1",
        [source, kind],
    ).fetchone()
    return str(row[0]) if row else None


def latest_version(cur: Cursor, source: str, kind: SheetKind) -> int | None:
    row = cur.execute(
        "SELECT max(version) FROM price_sheets WHERE source = ? AND kind = ?", [source, kind]
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def next_version(cur: Cursor) -> int:
    """A new version number (of any source), from its sequence."""
    return next_id(cur, "price_sheet_version_seq")


def _insert_rows(cur: Cursor, table: str, version: int, rows: Sequence[msgspec.Struct]) -> None:
    if rows:
        columns = {"version": [version] * len(rows)}
        columns.update((field, list(map(attrgetter(field), rows))) for field in rows[0].__struct_fields__)
        insert_columns(cur, table, columns)


def insert_version(
    cur: Cursor,
    version: int,
    content: SheetContent,
    *,
    source: str,
    fmt: str,
    fetched_at: datetime,
    origin: str,
    report: str | None = None,
) -> None:
    """Store ``content`` as version ``version`` of ``source`` (with its import report, if any)."""
    cur.execute(
        "INSERT INTO price_sheets (version, source, kind, format, content_hash, row_count, fetched_at, "
        "effective_at, created_at, origin, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, current_timestamp, ?, ?)",
        [
            version,
            source,
            content.kind,
            fmt,
            content.digest,
            content.row_count,
            fetched_at,
            fetched_at,
            origin,
            report,
        ],
    )
    _insert_rows(cur, "offers", version, content.offers)
    _insert_rows(cur, "ownership_prices", version, content.prices)
    _insert_rows(cur, "ownership_defaults", version, content.defaults)
    _insert_rows(cur, "provider_costs", version, content.costs)


def set_report(cur: Cursor, version: int, report: str) -> None:
    """Store the import report of ``version`` (written once its diff against the previous version,
    computed from both versions' stored rows, is known)."""
    cur.execute("UPDATE price_sheets SET report = ? WHERE version = ?", [report, version])


def add_version(
    cur: Cursor,
    content: SheetContent,
    *,
    source: str,
    fmt: str,
    fetched_at: datetime,
    origin: str,
) -> int | None:
    """Store ``content`` as a new version of ``source``; ``None`` when it equals the latest version."""
    if latest_hash(cur, source, content.kind) == content.digest:
        return None
    version = next_version(cur)
    insert_version(cur, version, content, source=source, fmt=fmt, fetched_at=fetched_at, origin=origin)
    return version
