"""The DuckDB store: one connection per process, a cursor per request, and an in-memory snapshot.

The process that opens the store owns its file (DuckDB allows one read-write process per file). The
snapshot holds the small, hot reference data (GPUs, alias rules, known filter values) as Python
objects, so requests never run point queries in a loop; it is rebuilt after every write.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import cast

import duckdb
import msgspec

from pricing.aliases import AliasRule, AliasTable
from pricing.offers import RentalOffer
from service.errors import StoreUnavailable
from service.migrations import apply_migrations, current_schema_version
from service.seed import SeedReport, ensure_seeded
from solver.calibration import ProfileIndex
from solver.gpus import GpuSpec
from solver.profiles import MeasuredProfile, ServingProfile

__all__ = ["CatalogSnapshot", "CurrentOffer", "SheetInfo", "Store"]

_log = logging.getLogger("gpuplan.store")


class CurrentOffer(msgspec.Struct, frozen=True, kw_only=True):
    """An offer of a current rental sheet, with the sheet version it belongs to."""

    offer: RentalOffer
    sheet_version: int


class SheetInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One current price-sheet version (the latest of its source and kind)."""

    version: int
    source: str
    kind: str
    fetched_at: datetime
    content_hash: str


class CatalogSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """Reference data and the known values of every filter, read once per store change."""

    gpus: dict[str, GpuSpec]
    alias_rules: list[AliasRule]
    aliases_by_gpu: dict[str, list[str]]
    providers: frozenset[str]
    regions: frozenset[str]
    profile_models: frozenset[str]
    profile_tasks: frozenset[str]
    profile_metrics: frozenset[str]
    profile_precisions: frozenset[str]
    current_offer_count: int
    price_sheet_versions: int
    profiles: tuple[MeasuredProfile, ...]
    serving: tuple[ServingProfile, ...]
    offers: tuple[CurrentOffer, ...]
    sheets: tuple[SheetInfo, ...]
    derived: dict[str, object] = msgspec.field(default_factory=dict)
    """Structures built from this snapshot alone (profile index, supply index), built once on demand."""

    def alias_table(self) -> AliasTable:
        return AliasTable(self.alias_rules)


def _strings(cur: duckdb.DuckDBPyConnection, sql: str) -> frozenset[str]:
    return frozenset(str(r[0]) for r in cur.execute(sql).fetchall() if r[0] is not None)


def _count(cur: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = cur.execute(sql).fetchone()
    return int(row[0]) if row else 0


_PROFILE_FIELDS = MeasuredProfile.__struct_fields__


def _read_profiles(cur: duckdb.DuckDBPyConnection) -> tuple[MeasuredProfile, ...]:
    rows = cur.execute(
        f"SELECT {', '.join(_PROFILE_FIELDS)} FROM throughput_profiles ORDER BY profile_id"
    ).fetchall()
    return tuple(MeasuredProfile(**dict(zip(_PROFILE_FIELDS, row, strict=True))) for row in rows)


_SERVING_FIELDS = ServingProfile.__struct_fields__


def _read_serving(cur: duckdb.DuckDBPyConnection) -> tuple[ServingProfile, ...]:
    rows = cur.execute(
        f"SELECT {', '.join(_SERVING_FIELDS)} FROM serving_profiles ORDER BY serving_id"
    ).fetchall()
    return tuple(ServingProfile(**dict(zip(_SERVING_FIELDS, row, strict=True))) for row in rows)


_OFFER_FIELDS = RentalOffer.__struct_fields__


def _read_offers(cur: duckdb.DuckDBPyConnection) -> tuple[CurrentOffer, ...]:
    rows = cur.execute(
        f"SELECT version, {', '.join(_OFFER_FIELDS)} FROM current_offers ORDER BY offer_id"
    ).fetchall()
    return tuple(
        CurrentOffer(
            offer=RentalOffer(**dict(zip(_OFFER_FIELDS, row[1:], strict=True))), sheet_version=int(row[0])
        )
        for row in rows
    )


def _read_sheets(cur: duckdb.DuckDBPyConnection) -> tuple[SheetInfo, ...]:
    rows = cur.execute(
        "SELECT version, source, kind, fetched_at, content_hash FROM current_sheets ORDER BY version"
    ).fetchall()
    return tuple(
        SheetInfo(
            version=int(v), source=str(src), kind=str(kind), fetched_at=fetched, content_hash=str(digest)
        )
        for v, src, kind, fetched, digest in rows
    )


def _read_snapshot(cur: duckdb.DuckDBPyConnection) -> CatalogSnapshot:
    fields = GpuSpec.__struct_fields__
    gpus = {
        row[0]: GpuSpec(**dict(zip(fields, row, strict=True)))
        for row in cur.execute(f"SELECT {', '.join(fields)} FROM gpus ORDER BY name").fetchall()
    }
    names = {gpu_id: gpu.name for gpu_id, gpu in gpus.items()}
    rules: list[AliasRule] = []
    aliases_by_gpu: dict[str, list[str]] = {}
    for alias, gpu_id, context, evidence in cur.execute(
        "SELECT alias, gpu_id, context, evidence FROM gpu_aliases ORDER BY alias, context"
    ).fetchall():
        rules.append(
            AliasRule(
                alias=alias, canonical_gpu=names.get(gpu_id, gpu_id), context=context, evidence=evidence
            )
        )
        known = aliases_by_gpu.setdefault(gpu_id, [])
        if alias != names.get(gpu_id) and alias not in known:
            known.append(alias)
    return CatalogSnapshot(
        gpus=gpus,
        alias_rules=rules,
        aliases_by_gpu=aliases_by_gpu,
        providers=_strings(cur, "SELECT DISTINCT provider FROM current_offers"),
        regions=_strings(cur, "SELECT DISTINCT region FROM current_offers"),
        profile_models=_strings(cur, "SELECT DISTINCT model FROM throughput_profiles"),
        profile_tasks=_strings(cur, "SELECT DISTINCT task FROM throughput_profiles"),
        profile_metrics=_strings(cur, "SELECT DISTINCT metric FROM throughput_profiles"),
        profile_precisions=_strings(cur, "SELECT DISTINCT precision FROM throughput_profiles"),
        profiles=_read_profiles(cur),
        serving=_read_serving(cur),
        offers=_read_offers(cur),
        sheets=_read_sheets(cur),
        current_offer_count=_count(cur, "SELECT count(*) FROM current_offers"),
        price_sheet_versions=_count(cur, "SELECT count(*) FROM price_sheets"),
    )


class Store:
    """An open gpuplan database: migrated, seeded, with a catalog snapshot."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, path: str, seed_report: SeedReport) -> None:
        self._connection = connection
        self.path = path
        self.seed_report = seed_report
        self._snapshot_lock = threading.Lock()
        with self.cursor() as cur:
            self._snapshot = _read_snapshot(cur)
        self._derived_lock = threading.Lock()

    @classmethod
    def open(cls, path: str) -> Store:
        """Open (creating and seeding if needed) the database at ``path`` (``:memory:`` allowed)."""
        started = time.perf_counter()
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = duckdb.connect(path, config={"threads": 1})
        except duckdb.IOException as exc:
            raise StoreUnavailable(
                f"cannot open the database {path!r}: {exc}. Another gpuplan process (a running server?) "
                "holds it; stop that process or point --db / GPUPLAN_DB at another file."
            ) from exc
        try:
            cur = connection.cursor()
            try:
                applied = apply_migrations(cur)
                report = ensure_seeded(cur)
            finally:
                cur.close()
        except BaseException:
            connection.close()
            raise
        store = cls(connection, path, report)
        _log.info(
            "store %s open in %.0f ms (migrations applied: %s, seed %s)",
            path,
            (time.perf_counter() - started) * 1000,
            applied or "none",
            "loaded" if report.loaded else "already loaded",
        )
        return store

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of its own for one request or job; always closed."""
        cur = self._connection.cursor()
        try:
            yield cur
        finally:
            cur.close()

    @property
    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    def refresh_snapshot(self) -> None:
        """Re-read the snapshot after a write (a new sheet, new profiles)."""
        with self.cursor() as cur, self._snapshot_lock:
            self._snapshot = _read_snapshot(cur)

    def derived[T](self, snapshot: CatalogSnapshot, name: str, build: Callable[[CatalogSnapshot], T]) -> T:
        """``build(snapshot)``, built once per snapshot: what a request reads stays consistent with the
        snapshot it started from, even if a new sheet is swapped in meanwhile."""
        with self._derived_lock:
            if name not in snapshot.derived:
                snapshot.derived[name] = build(snapshot)
            return cast(T, snapshot.derived[name])

    @property
    def profile_index(self) -> ProfileIndex:
        """The measured profiles of the current snapshot indexed for the throughput model."""
        return self.profile_index_of(self.snapshot)

    def profile_index_of(self, snapshot: CatalogSnapshot) -> ProfileIndex:
        return self.derived(snapshot, "profile_index", lambda s: ProfileIndex(s.profiles, s.gpus))

    def schema_version(self) -> int:
        with self.cursor() as cur:
            return current_schema_version(cur)

    def close(self) -> None:
        self._connection.close()
