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

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Final

import msgspec

from pricing import (
    CLASS_DEFAULT,
    OWNED_PROVIDER,
    SHEET_FORMATS,
    ParsedOffers,
    ParsedPrices,
    ParsedProviderCosts,
    ProviderCost,
    SheetContext,
    SheetFormat,
    SheetProblem,
)
from service.db.backend import Cursor
from service.db.sheet_versions import (
    SheetContent,
    insert_version,
    latest_hash,
    latest_version,
    next_version,
    ownership_sheet,
    provider_costs_sheet,
    rental_sheet,
    set_report,
)
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import ImportSuperseded, InvalidParameter
from service.price_sheets.diff import DIFF_DETAIL_LIMIT, sheet_diff
from service.price_sheets.gc_pause import collection_paused
from service.price_sheets.schemas import SheetDiff, SheetReport

__all__ = ["DEFAULT_MOVE_FACTOR", "DIFF_DETAIL_LIMIT", "check_sheet", "import_sheet", "source_lock"]

DEFAULT_MOVE_FACTOR: Final = 3.0
"""A price that moves by more than this factor (up or down) since the source's previous version is
flagged in the report as implausible (the sheet is still accepted)."""


def source_lock(source: str) -> str:
    """The transaction lock of ``source``'s versions: held while one is checked and stored."""
    return f"price_sheets:{source}"


class _Parsed(msgspec.Struct, frozen=True, kw_only=True):
    rows: int
    content: SheetContent
    problems: list[SheetProblem]
    warnings: list[str]


def _unknown_providers(snapshot: CatalogSnapshot, costs: list[ProviderCost]) -> list[str]:
    """A warning naming the providers of cost rows that no offer of the catalog comes from (a typo, or
    a provider whose offers are still to come: the rows are kept)."""
    unknown = sorted({c.provider for c in costs} - snapshot.providers - {CLASS_DEFAULT, OWNED_PROVIDER})
    if not unknown:
        return []
    return [f"cost rows for providers with no offer in the catalog: {', '.join(unknown)}"]


def _parse(
    snapshot: CatalogSnapshot, body: bytes, fmt: SheetFormat, source: str, provider: str | None
) -> _Parsed:
    """Rows read, the sheet's content, its problems and warnings (a 400 when the format needs a
    provider)."""
    spec = SHEET_FORMATS[fmt]
    file = f"{source}.{spec.extension}"
    rows, problems = spec.read(body, file)
    if problems:
        return _Parsed(rows=len(rows), content=rental_sheet([]), problems=problems, warnings=[])
    warnings = spec.warnings(rows)
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
            content = rental_sheet(offers)
        case ParsedPrices(prices=prices, problems=problems):
            content = ownership_sheet(prices)
        case ParsedProviderCosts(costs=costs, problems=problems):
            content = provider_costs_sheet(costs)
            warnings += _unknown_providers(snapshot, costs)
    return _Parsed(rows=len(rows), content=content, problems=problems, warnings=warnings)


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
    insert_version(
        cur, version, content, source=report.source, fmt=report.format, fetched_at=when, origin=origin
    )
    diff: SheetDiff | None = None
    warnings: list[str] = []
    if content.kind == "rental":  # against the source's previous version, both now in the store
        diff, warnings = sheet_diff(cur, latest, version, move_factor)
    stored = msgspec.structs.replace(
        report,
        result="ok",
        content_hash=content.digest,
        version=version,
        diff=diff,
        warnings=[*report.warnings, *warnings],
    )
    set_report(cur, version, msgspec.json.encode(stored).decode())
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
    """Validate ``body`` and, if it is clean and new, store it as a version of ``source`` atomically.
    Imports of one source in this process run one after another (:func:`_one_at_a_time`)."""
    with _one_at_a_time(source), collection_paused():
        return _import(store, source, fmt, body, provider, origin, fetched_at, move_factor)


_QUEUES: Final[dict[str, threading.RLock]] = {}
_QUEUES_GUARD: Final = threading.Lock()


@contextmanager
def _one_at_a_time(source: str) -> Iterator[None]:
    """Hold ``source``'s import queue: concurrent uploads of one source each read the version the
    previous one stored, instead of all racing from the same base and all but one being refused as
    superseded (30 writers retrying 8 times each left 9 never stored). Across replicas the supersede
    rule still guards, under the source's transaction lock."""
    with _QUEUES_GUARD:
        queue = _QUEUES.setdefault(source, threading.RLock())
    with queue:
        yield


def _import(
    store: Store,
    source: str,
    fmt: SheetFormat,
    body: bytes,
    provider: str | None,
    origin: str,
    fetched_at: datetime | None,
    move_factor: float,
) -> SheetReport:
    with store.cursor() as cur:
        base = latest_version(cur, source, SHEET_FORMATS[fmt].kind)
    parsed = _parse(store.snapshot, body, fmt, source, provider)
    content = parsed.content
    report = SheetReport(
        source=source,
        kind=SHEET_FORMATS[fmt].kind,
        format=fmt,
        result="rejected",
        rows=parsed.rows,
        accepted_rows=content.row_count,
        problems=parsed.problems,
        warnings=parsed.warnings,
    )
    if parsed.problems:
        return report
    when = fetched_at or datetime.now(UTC)
    stored = store.transaction(
        partial(
            _store,
            report=report,
            content=content,
            origin=origin,
            when=when,
            move_factor=move_factor,
            base=base,
        ),
        lock=source_lock(source),
    )
    del (
        content,
        parsed,
    )  # a large sheet's rows are in the store now: not held while the snapshot is read again
    if stored.result == "ok":
        store.refresh_snapshot()
    return stored


def check_sheet(
    snapshot: CatalogSnapshot, body: bytes, fmt: SheetFormat, source: str, provider: str | None
) -> tuple[int, list[SheetProblem]]:
    """Rows read and problems of ``body``, storing nothing (``gpuplan check``)."""
    with collection_paused():
        parsed = _parse(snapshot, body, fmt, source, provider)
    return parsed.rows, parsed.problems
