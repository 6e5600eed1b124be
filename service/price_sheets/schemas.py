"""Price-sheet bodies: import reports, versions, an offer's price history, refresh runs and status."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from pricing import SheetKind, SheetProblem

__all__ = [
    "DiffOffer",
    "OfferHistory",
    "PriceChange",
    "PricePoint",
    "RefreshRun",
    "RefreshStatus",
    "SheetDiff",
    "SheetReport",
    "SheetVersion",
    "SheetVersionPage",
    "SourceStatus",
]


class PriceChange(msgspec.Struct, kw_only=True):
    """One price of one offer that moved: which instance, GPU and region, and old → new."""

    offer_id: str
    field: str
    old: float | None
    new: float | None
    provider: str = ""
    instance_type: str = ""
    region: str = ""
    gpu: str = ""
    """The catalog GPU id (these four are empty in reports stored before they existed)."""


class DiffOffer(msgspec.Struct, kw_only=True):
    """An offer a new version adds or removes, as a person recognises it."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpu: str
    gpus_per_instance: int
    price_per_hour_usd: float | None


class SheetDiff(msgspec.Struct, kw_only=True):
    """Offers added, removed and repriced against the source's previous version."""

    previous_version: int | None
    added: list[str]
    removed: list[str]
    changed: list[PriceChange]
    added_offers: list[DiffOffer] = msgspec.field(default_factory=list)
    """The first 200 of ``added``, described (instance type, region, GPU, price)."""
    removed_offers: list[DiffOffer] = msgspec.field(default_factory=list)
    """The first 200 of ``removed``, described."""


class SheetReport(msgspec.Struct, kw_only=True):
    """What an import did: ``ok`` (a new version), ``unchanged`` (identical content) or ``rejected``."""

    source: str
    kind: SheetKind
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


class RefreshRun(msgspec.Struct, kw_only=True):
    source: str
    started_at: datetime
    finished_at: datetime
    result: Literal["ok", "unchanged", "rejected", "failed"]
    attempts: int
    error: str | None = None
    version: int | None = None
    report: SheetReport | None = None


class SourceStatus(msgspec.Struct, kw_only=True):
    name: str
    url: str
    format: str
    provider: str | None
    interval_seconds: int
    next_run_at: datetime | None
    last_run: RefreshRun | None


class RefreshStatus(msgspec.Struct, kw_only=True):
    """Every configured source with its last run and next scheduled run."""

    sources: list[SourceStatus]
