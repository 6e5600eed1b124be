"""Immutable, content-addressed versions of price sheets in the store.

A version is added only when its content differs from the source's latest version (identical content
creates none). The caller owns the transaction, so a version and its rows appear together or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

import duckdb
import msgspec

from pricing.offers import RentalOffer
from service.db.bulk import insert_rows

__all__ = ["OFFER_COLUMNS", "add_ownership_version", "add_rental_version", "content_hash", "latest_hash"]

OFFER_COLUMNS: tuple[str, ...] = tuple(f for f in RentalOffer.__struct_fields__)


def content_hash(items: Sequence[msgspec.Struct]) -> str:
    """A hash of a sheet's rows that ignores their order."""
    encoded = sorted(msgspec.json.encode(item) for item in items)
    digest = hashlib.sha256()
    for blob in encoded:
        digest.update(blob)
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def latest_hash(cur: duckdb.DuckDBPyConnection, source: str, kind: str) -> str | None:
    row = cur.execute(
        "SELECT content_hash FROM price_sheets WHERE source = ? AND kind = ? ORDER BY version DESC LIMIT 1",
        [source, kind],
    ).fetchone()
    return str(row[0]) if row else None


def _new_version(
    cur: duckdb.DuckDBPyConnection,
    *,
    source: str,
    kind: str,
    fmt: str,
    digest: str,
    row_count: int,
    fetched_at: datetime,
    origin: str,
    report: str | None = None,
) -> int:
    row = cur.execute("SELECT coalesce(max(version), 0) + 1 FROM price_sheets").fetchone()
    version = int(row[0]) if row else 1
    cur.execute(
        "INSERT INTO price_sheets (version, source, kind, format, content_hash, row_count, fetched_at, "
        "effective_at, created_at, origin, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, current_timestamp, ?, ?)",
        [version, source, kind, fmt, digest, row_count, fetched_at, fetched_at, origin, report],
    )
    return version


def add_rental_version(
    cur: duckdb.DuckDBPyConnection,
    *,
    source: str,
    fmt: str,
    offers: Sequence[RentalOffer],
    fetched_at: datetime,
    origin: str,
    report: str | None = None,
) -> int | None:
    """Store a new rental sheet version of ``source``; ``None`` when the content is unchanged."""
    digest = content_hash(offers)
    if latest_hash(cur, source, "rental") == digest:
        return None
    version = _new_version(
        cur,
        source=source,
        kind="rental",
        fmt=fmt,
        digest=digest,
        row_count=len(offers),
        fetched_at=fetched_at,
        origin=origin,
        report=report,
    )
    rows = [(version, *msgspec.structs.astuple(o)) for o in offers]
    insert_rows(cur, "offers", ("version", *OFFER_COLUMNS), rows)
    return version


def add_ownership_version(
    cur: duckdb.DuckDBPyConnection,
    *,
    source: str,
    fmt: str,
    prices: Sequence[msgspec.Struct],
    defaults: Sequence[msgspec.Struct],
    fetched_at: datetime,
    origin: str,
    report: str | None = None,
) -> int | None:
    """Store a new ownership sheet version (purchase prices and finance defaults together)."""
    digest = content_hash([*prices, *defaults])
    if latest_hash(cur, source, "ownership") == digest:
        return None
    version = _new_version(
        cur,
        source=source,
        kind="ownership",
        fmt=fmt,
        digest=digest,
        row_count=len(prices) + len(defaults),
        fetched_at=fetched_at,
        origin=origin,
        report=report,
    )
    if prices:
        fields = prices[0].__struct_fields__
        insert_rows(
            cur,
            "ownership_prices",
            ("version", *fields),
            [(version, *msgspec.structs.astuple(p)) for p in prices],
        )
    if defaults:
        fields = defaults[0].__struct_fields__
        insert_rows(
            cur,
            "ownership_defaults",
            ("version", *fields),
            [(version, *msgspec.structs.astuple(d)) for d in defaults],
        )
    return version
