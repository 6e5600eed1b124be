"""Provider-level costs: what a seller charges beyond the instance-hour (storage, data transfer) and
how its capacity behaves (start-up time, download and checkpoint-write rates, spot preemptions).

A provider-costs sheet (format ``provider_costs_csv``, versioned like the price sheets) has one row per
provider with its class (``hyperscaler``, ``neocloud``, ``marketplace``, ``owned``) and the figures
it publishes, and one row per class with provider ``*``: the cited defaults for every empty cell and
for providers the sheet does not list (those take the defaults of their class in the shared table,
``solver.provider_class``: a provider it does not know either is a ``marketplace``; the citation says
so). Owned GPUs (``OWNED_PROVIDER``) take the ``owned`` class row.

The sheet's class picks which default row fills a provider's gaps, nothing else. The class that the
interruption rate and the network between instances depend on is the shared table's, so the two
rules cannot disagree about a provider (the shipped sheet agrees with the table; a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec

from pricing.cells import cell_choice, cell_float, cell_text
from pricing.errors import SheetRowError
from pricing.sheets.offers import SheetProblem, collect_rows
from solver import (
    COMPUTE_ONLY_TERMS,
    DEFAULT_RESTART_MINUTES,
    OWNED_PROVIDER,
    PROVIDER_CLASSES,
    GpuSpec,
    ProviderClass,
    SupplyTerms,
    interruption_rate,
    provider_class,
)

__all__ = [
    "CLASS_DEFAULT",
    "COST_FIELDS",
    "OWNED_PROVIDER",
    "PROVIDER_CLASSES",
    "ParsedProviderCosts",
    "ProviderClass",
    "ProviderCost",
    "ProviderCosts",
    "ResolvedCost",
    "parse_provider_costs",
    "terms_of",
]

CLASS_DEFAULT: Final = "*"
"""The provider name of a class's default row."""

COST_FIELDS: Final = (
    "storage_usd_per_gb_month",
    "egress_usd_per_gb",
    "ingress_usd_per_gb",
    "startup_minutes",
    "download_gbps",
    "checkpoint_write_gbps",
    "preemptions_per_hour",
)
_POSITIVE: Final = frozenset({"download_gbps", "checkpoint_write_gbps"})
_CAPS: Final[dict[str, float]] = {
    "storage_usd_per_gb_month": 100.0,
    "egress_usd_per_gb": 100.0,
    "ingress_usd_per_gb": 100.0,
    "startup_minutes": 10_080.0,
    "download_gbps": 10_000.0,
    "checkpoint_write_gbps": 10_000.0,
    "preemptions_per_hour": 100.0,
}
"""Upper bounds a cell must respect (a value above is a typo, not a price)."""


class ProviderCost(msgspec.Struct, frozen=True, kw_only=True):
    """One row of a provider-costs sheet; ``None``: the provider publishes nothing (class default)."""

    provider: str
    provider_class: ProviderClass
    storage_usd_per_gb_month: float | None
    egress_usd_per_gb: float | None
    ingress_usd_per_gb: float | None
    startup_minutes: float | None
    download_gbps: float | None
    checkpoint_write_gbps: float | None
    preemptions_per_hour: float | None
    source: str
    notes: str


class ParsedProviderCosts(msgspec.Struct, frozen=True, kw_only=True):
    """The rows a provider-costs sheet yields and every row it could not use."""

    costs: list[ProviderCost]
    problems: list[SheetProblem]


def _parse_row(row: Mapping[str, Any]) -> ProviderCost:
    provider = cell_text(row, "provider", required=True)
    kind = cell_choice(row, "provider_class", PROVIDER_CLASSES)
    if kind is None:
        raise SheetRowError("provider_class", f"empty; one of {', '.join(PROVIDER_CLASSES)}")
    values: dict[str, float | None] = {}
    for field in COST_FIELDS:
        value = cell_float(
            row,
            field,
            positive=field in _POSITIVE,
            required=provider == CLASS_DEFAULT,
            maximum=math.inf,  # the column's own cap below says more
        )
        if value is not None and not 0 <= value <= _CAPS[field]:
            raise SheetRowError(field, f"{value:g} is outside 0–{_CAPS[field]:g}")
        values[field] = value
    return ProviderCost(
        provider=provider,
        provider_class=kind,  # type: ignore[arg-type]  # cell_choice returned one of PROVIDER_CLASSES
        source=cell_text(row, "source", required=True),
        notes=cell_text(row, "notes"),
        **values,
    )


def parse_provider_costs(rows: Iterable[tuple[int, Mapping[str, Any]]], file: str) -> ParsedProviderCosts:
    """Rows → provider costs; a provider (or class default) listed twice is a problem."""
    costs, problems = collect_rows(
        rows,
        file,
        _parse_row,
        lambda c: (c.provider, c.provider_class) if c.provider == CLASS_DEFAULT else c.provider,
        "duplicate provider",
    )
    return ParsedProviderCosts(costs=costs, problems=problems)


class ResolvedCost(msgspec.Struct, frozen=True, kw_only=True):
    """One provider's figures with every gap filled from its class default, and where each came from."""

    provider: str
    provider_class: ProviderClass
    values: dict[str, float]
    sources: dict[str, str]
    """Per figure, short: ``"<provider>'s published figure"`` or ``"<class> default"``."""
    citation: str
    """Where the provider's figures and its class defaults come from (the sheet rows' sources)."""

    def supply_terms(self, gpu: GpuSpec, *, spot: bool) -> SupplyTerms:
        """The terms of a supply of this provider's ``gpu`` (spot: preemptions apply)."""
        rate = interruption_rate(gpu.architecture, provider_class(self.provider))
        v = self.values
        return SupplyTerms(
            startup_hours=v["startup_minutes"] / 60,
            download_gbps=v["download_gbps"],
            checkpoint_write_gbps=v["checkpoint_write_gbps"],
            storage_usd_per_gb_month=v["storage_usd_per_gb_month"],
            egress_usd_per_gb=v["egress_usd_per_gb"],
            ingress_usd_per_gb=v["ingress_usd_per_gb"],
            preemptions_per_hour=v["preemptions_per_hour"] if spot else 0.0,
            interruptions_per_gpu_hour=rate.per_gpu_hour,
            network_interruption_share=rate.network_share,
            restart_hours=DEFAULT_RESTART_MINUTES / 60,
            shared_storage=self.provider_class != "marketplace",  # separate hosts share no storage
        )


def terms_of(cost: ResolvedCost | None, gpu: GpuSpec, *, spot: bool) -> SupplyTerms:
    """A supply's terms: its provider's (``cost``), or compute only when none is known."""
    return COMPUTE_ONLY_TERMS if cost is None else cost.supply_terms(gpu, spot=spot)


class ProviderCosts:
    """The current provider-cost rows, resolved per provider (class defaults filling the gaps)."""

    def __init__(self, rows: Sequence[ProviderCost]) -> None:
        self._defaults = {r.provider_class: r for r in rows if r.provider == CLASS_DEFAULT}
        self._rows = {r.provider: r for r in rows if r.provider != CLASS_DEFAULT}
        self._resolved: dict[str, ResolvedCost] = {}

    @property
    def rows(self) -> list[ProviderCost]:
        return [*self._defaults.values(), *self._rows.values()]

    def provider_class(self, provider: str) -> ProviderClass:
        row = self._rows.get(provider)
        return row.provider_class if row is not None else provider_class(provider)

    def resolve(self, provider: str) -> ResolvedCost | None:
        """``provider``'s figures (``"owned"``: the owned class); ``None`` when its class has no
        default row (no provider-costs sheet loaded)."""
        found = self._resolved.get(provider)
        if found is not None:
            return found
        row = self._rows.get(provider)
        kind: ProviderClass = "owned" if provider == OWNED_PROVIDER else self.provider_class(provider)
        default = self._defaults.get(kind)
        if default is None:
            return None
        values: dict[str, float] = {}
        sources: dict[str, str] = {}
        for field in COST_FIELDS:
            own = None if row is None else getattr(row, field)
            if own is not None:
                values[field], sources[field] = own, f"{provider}'s published figure"
            else:
                values[field], sources[field] = getattr(default, field), f"{kind} default"
        listed = "" if row is None else f"{provider}'s figures: {row.source}; "
        unlisted = (
            "" if row is not None or kind == "owned" else f"{provider} is not in the sheet, so a {kind}; "
        )
        found = self._resolved[provider] = ResolvedCost(
            provider=provider,
            provider_class=kind,
            values=values,
            sources=sources,
            citation=f"{unlisted}{listed}{kind} defaults: {default.source}",
        )
        return found
