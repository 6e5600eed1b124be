"""The catalog snapshot: the store's small, hot reference data as Python objects, read once per change.

Requests read GPUs, alias rules, the offers a request can pick, profiles, current sheets and ownership
rows from the snapshot, never with point queries in a loop. Of the current offers it holds only those
a request can pick (``rental_parts``): a catalog of 300,000 offers made of a few thousand kinds of
instance is a few thousand objects, and a new snapshot reads only the rental versions added since the
one before it. A snapshot is immutable; a
write builds a new one and swaps it in, so a request keeps reading the snapshot it started with. Structures computed from one
snapshot alone (a profile index, a supply index) are built once per snapshot through a typed
:class:`Derived` key.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, cast

import msgspec

from pricing import (
    AliasRule,
    AliasTable,
    ProviderCost,
    ProviderCosts,
    RentalOffer,
    SheetDefault,
    SheetKind,
    SheetPrice,
)
from service.db.backend import Cursor
from service.db.gpu_rows import GPU_COLUMNS, gpu_from_row
from service.db.mig_profiles import read_mig_profiles
from service.db.rental_parts import CurrentOffer, RentalSupply, merge_parts, read_parts
from solver import GpuSpec, MeasuredProfile, ProfileIndex, ServingProfile, SliceSpec, scale_term, slices_of

__all__ = ["CatalogSnapshot", "CurrentOffer", "Derived", "OwnershipRows", "SheetInfo", "read_snapshot"]


class SheetInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One current price-sheet version (the latest of its source and kind)."""

    version: int
    source: str
    kind: SheetKind
    fetched_at: datetime
    content_hash: str


class OwnershipRows(msgspec.Struct, frozen=True, kw_only=True):
    """The current ownership sheets' rows: purchase prices by GPU id, and every finance default."""

    prices: dict[str, list[SheetPrice]]
    defaults: list[SheetDefault]


class Derived[T]:
    """The typed name of a structure built from one snapshot alone, at most once per snapshot.

    ``inputs``, where given, names the parts of the snapshot it is built from: a new snapshot whose
    inputs equal the old one's takes the old structure as it is (:meth:`CatalogSnapshot.take_over`)."""

    __slots__ = ("build", "inputs", "what")

    def __init__(
        self,
        what: str,
        build: Callable[[CatalogSnapshot], T],
        inputs: Callable[[CatalogSnapshot], object] | None = None,
    ) -> None:
        self.what = what
        self.build = build
        self.inputs = inputs

    def __repr__(self) -> str:
        return f"Derived({self.what!r})"


class _Built:
    """What has been derived from one snapshot (keyed by the :class:`Derived` objects themselves)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # re-entrant: a structure may be built from another one
        self._values: dict[Derived[Any], Any] = {}

    def get[T](self, snapshot: CatalogSnapshot, key: Derived[T]) -> T:
        with self._lock:
            if key not in self._values:
                self._values[key] = key.build(snapshot)
            return cast(T, self._values[key])  # stored under its own key, so it is a T

    def built(self) -> dict[Derived[Any], Any]:
        with self._lock:
            return dict(self._values)

    def put(self, key: Derived[Any], value: Any) -> None:
        with self._lock:
            self._values.setdefault(key, value)


class CatalogSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """Reference data and the known values of every filter, read once per store change.

    ``generation`` counts the snapshots of one store (a new one after every write), so caches keyed
    by it never mix results of two snapshots.
    """

    generation: int
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
    offer_counts: dict[str, int]
    """Current offers per provider."""
    price_sheet_versions: int
    profiles: tuple[MeasuredProfile, ...]
    serving: tuple[ServingProfile, ...]
    candidates: tuple[CurrentOffer, ...]
    """The current offers a request can pick, by offer id (``rental_parts.merge_parts``)."""
    sheets: tuple[SheetInfo, ...]
    ownership: OwnershipRows
    provider_costs: ProviderCosts
    mig_slices: dict[str, SliceSpec] = msgspec.field(default_factory=dict)
    """The MIG slices of the catalog's GPUs by slice id, apart from ``gpus`` (which lists whole GPUs)."""
    rental: RentalSupply = msgspec.field(default_factory=lambda: merge_parts({}))
    """The current rental versions' offers, by version and merged (``rental_parts``): the next
    snapshot takes over the versions still current, reads only the new ones, and merges again only
    the kinds of offers the versions added or dropped hold."""
    built: _Built = msgspec.field(default_factory=_Built)

    def alias_table(self) -> AliasTable:
        return AliasTable(self.alias_rules)

    def derive[T](self, key: Derived[T]) -> T:
        """``key.build(self)``, built once: a request stays consistent with the snapshot it started
        from, even if a new sheet is swapped in meanwhile."""
        return self.built.get(self, key)

    def take_over(self, older: CatalogSnapshot) -> None:
        """Keep what ``older`` derived from inputs this snapshot shares (a new price sheet leaves the
        profile index and its fitted class model as they were)."""
        for key, value in older.built.built().items():
            if key.inputs is not None and key.inputs(older) == key.inputs(self):
                self.built.put(key, value)

    def model_inputs(self) -> tuple[object, ...]:
        """What the throughput, memory and serving models read from a snapshot: the measured training
        and serving profiles and the GPUs (whole and MIG slices). A price sheet changes none of them,
        so what those models worked out (layouts, a supply shape's counts, estimates, capacities) is
        taken over by the next snapshot (``Derived(..., inputs=CatalogSnapshot.model_inputs)``)."""
        return (self.profiles, self.serving, self.gpus, self.mig_slices)

    def model_generation(self) -> int:
        """The generation of the oldest snapshot in the run of snapshots with these
        :meth:`model_inputs` (caches of model results key on it, not on :attr:`generation`)."""
        return self.derive(_MODEL_GENERATION)

    def warm(self) -> None:
        """Build the structures every plan needs now (the class-model fit and the efficiency-at-scale
        term take a second or two between them), so the first plan after a start or a change does not
        pay for them."""
        scale_term(self.profile_index())

    def gpu_spec(self, gpu_id: str) -> GpuSpec:
        """A whole GPU or a MIG slice by id (``KeyError`` when neither)."""
        found = self.gpus.get(gpu_id)
        return found if found is not None else self.mig_slices[gpu_id]

    def gpus_and_slices(self) -> dict[str, GpuSpec]:
        """Whole GPUs and MIG slices in one mapping (what a plan's supplies may run on)."""
        return self.derive(_WITH_SLICES)

    def profile_index(self) -> ProfileIndex:
        """The measured profiles indexed for the throughput model."""
        return self.derive(_PROFILE_INDEX)


_PROFILE_INDEX: Derived[ProfileIndex] = Derived(
    "profile index", lambda s: ProfileIndex(s.profiles, s.gpus), lambda s: (s.profiles, s.gpus)
)
_MODEL_GENERATION: Derived[int] = Derived(
    "model generation", lambda s: s.generation, CatalogSnapshot.model_inputs
)
_WITH_SLICES: Derived[dict[str, GpuSpec]] = Derived(
    "GPUs and slices", lambda s: {**s.gpus, **s.mig_slices}, lambda s: (s.gpus, s.mig_slices)
)


def _strings(cur: Cursor, sql: str) -> frozenset[str]:
    return frozenset(str(r[0]) for r in cur.execute(sql).fetchall() if r[0] is not None)


def _count(cur: Cursor, sql: str) -> int:
    row = cur.execute(sql).fetchone()
    return int(row[0]) if row else 0


_PROFILE_FIELDS = MeasuredProfile.__struct_fields__
_SERVING_FIELDS = ServingProfile.__struct_fields__
_OFFER_FIELDS = RentalOffer.__struct_fields__
_PRICE_FIELDS = tuple(f for f in SheetPrice.__struct_fields__ if f != "sheet_version")
_DEFAULT_FIELDS = tuple(f for f in SheetDefault.__struct_fields__ if f != "sheet_version")


def _read_profiles(cur: Cursor) -> tuple[MeasuredProfile, ...]:
    rows = cur.execute(
        f"SELECT {', '.join(_PROFILE_FIELDS)} FROM throughput_profiles ORDER BY profile_id"
    ).fetchall()
    return tuple(MeasuredProfile(**dict(zip(_PROFILE_FIELDS, row, strict=True))) for row in rows)


def _read_serving(cur: Cursor) -> tuple[ServingProfile, ...]:
    rows = cur.execute(
        f"SELECT {', '.join(_SERVING_FIELDS)} FROM serving_profiles ORDER BY serving_id"
    ).fetchall()
    return tuple(ServingProfile(**dict(zip(_SERVING_FIELDS, row, strict=True))) for row in rows)


_CURRENT_MEASUREMENTS: Final = (
    "SELECT m.profile FROM measurements m JOIN current_measurement_uploads u USING (version) "
    "WHERE m.kind = ? ORDER BY m.row_id"
)


def _read_measured[P: (ServingProfile, MeasuredProfile)](
    cur: Cursor, kind: str, into: type[P]
) -> tuple[P, ...]:
    """The rows of the current measurement uploads (service.measurements) of ``kind``, as the catalog rows
    they were stored as: they are read before the published rows, so a measured bucket of a user's wins."""
    return tuple(
        msgspec.json.decode(str(row[0]), type=into)
        for row in cur.execute(_CURRENT_MEASUREMENTS, [kind]).fetchall()
    )


def _read_sheets(cur: Cursor) -> tuple[SheetInfo, ...]:
    rows = cur.execute(
        "SELECT version, source, kind, fetched_at, content_hash FROM current_sheets ORDER BY version"
    ).fetchall()
    fields = ("version", "source", "kind", "fetched_at", "content_hash")
    return tuple(msgspec.convert(dict(zip(fields, row, strict=True)), SheetInfo) for row in rows)


def _read_ownership(cur: Cursor, sheets: tuple[SheetInfo, ...]) -> OwnershipRows:
    """The rows of the current ownership sheets (in stored order): the one ownership loader."""
    versions = [s.version for s in sheets if s.kind == "ownership"]
    if not versions:
        return OwnershipRows(prices={}, defaults=[])
    marks = ", ".join("?" for _ in versions)
    prices: dict[str, list[SheetPrice]] = {}
    for row in cur.execute(
        f"SELECT version, {', '.join(_PRICE_FIELDS)} FROM ownership_prices "
        f"WHERE version IN ({marks}) ORDER BY row_order",
        versions,
    ).fetchall():
        price = SheetPrice(sheet_version=int(row[0]), **dict(zip(_PRICE_FIELDS, row[1:], strict=True)))
        prices.setdefault(price.gpu_id, []).append(price)
    defaults = [
        SheetDefault(sheet_version=int(row[0]), **dict(zip(_DEFAULT_FIELDS, row[1:], strict=True)))
        for row in cur.execute(
            f"SELECT version, {', '.join(_DEFAULT_FIELDS)} FROM ownership_defaults "
            f"WHERE version IN ({marks}) ORDER BY row_order",
            versions,
        ).fetchall()
    ]
    return OwnershipRows(prices=prices, defaults=defaults)


_COST_FIELDS = ProviderCost.__struct_fields__


def _read_provider_costs(cur: Cursor, sheets: tuple[SheetInfo, ...]) -> ProviderCosts:
    """The rows of the current provider-cost sheets; a provider in several takes the newest version's."""
    versions = [s.version for s in sheets if s.kind == "provider_costs"]
    if not versions:
        return ProviderCosts([])
    marks = ", ".join("?" for _ in versions)
    rows = cur.execute(
        f"SELECT {', '.join(_COST_FIELDS)} FROM provider_costs WHERE version IN ({marks}) "
        "ORDER BY version, provider_class, provider",
        versions,
    ).fetchall()
    return ProviderCosts(
        [msgspec.convert(dict(zip(_COST_FIELDS, row, strict=True)), ProviderCost) for row in rows]
    )


def _read_gpus(cur: Cursor) -> dict[str, GpuSpec]:
    return {
        row[0]: gpu_from_row(row)
        for row in cur.execute(f"SELECT {', '.join(GPU_COLUMNS)} FROM gpus ORDER BY name").fetchall()
    }


def _read_aliases(cur: Cursor, gpus: dict[str, GpuSpec]) -> tuple[list[AliasRule], dict[str, list[str]]]:
    """The alias rules, and each GPU's other names (for the catalog pages)."""
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
    return rules, aliases_by_gpu


def read_snapshot(cur: Cursor, generation: int, previous: CatalogSnapshot | None = None) -> CatalogSnapshot:
    """Read the snapshot with ``cur``, in one read transaction: every part of it (the candidate offers
    and the counts of their kinds, the sheets and their rows) sees the same committed versions. The
    rental versions ``previous`` read (still current) are taken from it, not read again."""
    cur.execute(cur.dialect.begin_consistent_read)
    try:
        return _read_all(cur, generation, previous.rental if previous is not None else None)
    finally:
        cur.execute("ROLLBACK")  # it only read


def _read_all(cur: Cursor, generation: int, previous: RentalSupply | None) -> CatalogSnapshot:
    gpus = _read_gpus(cur)
    rules, aliases_by_gpu = _read_aliases(cur, gpus)
    sheets = _read_sheets(cur)
    known = previous.parts if previous is not None else {}
    current = read_parts(cur, (s.version for s in sheets if s.kind == "rental"), known)
    supply = merge_parts(current, previous)
    return CatalogSnapshot(
        generation=generation,
        gpus=gpus,
        alias_rules=rules,
        aliases_by_gpu=aliases_by_gpu,
        providers=frozenset(supply.offer_counts),
        regions=supply.regions,
        profile_models=_strings(cur, "SELECT DISTINCT model FROM throughput_profiles"),
        profile_tasks=_strings(cur, "SELECT DISTINCT task FROM throughput_profiles"),
        profile_metrics=_strings(cur, "SELECT DISTINCT metric FROM throughput_profiles"),
        profile_precisions=_strings(cur, "SELECT DISTINCT precision FROM throughput_profiles"),
        profiles=_read_profiles(cur) + _read_measured(cur, "training", MeasuredProfile),
        serving=_read_measured(cur, "serving", ServingProfile) + _read_serving(cur),
        candidates=supply.candidates,
        offer_counts=supply.offer_counts,
        sheets=sheets,
        ownership=_read_ownership(cur, sheets),
        provider_costs=_read_provider_costs(cur, sheets),
        mig_slices=slices_of(gpus, read_mig_profiles()),
        current_offer_count=supply.count,
        price_sheet_versions=_count(cur, "SELECT count(*) FROM price_sheets"),
        rental=supply,
    )
