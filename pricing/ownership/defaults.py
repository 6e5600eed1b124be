"""Default ownership inputs for one GPU, chosen from the ownership sheet, each with its source.

Pure: takes the current sheet's rows and returns values with citations. The choices:

* **Purchase price** (``purchase_price_usd_per_gpu``): among the GPU's priced rows, by the ``scope=``
  tag at the start of ``notes``: first rows whose scope converts directly (``system_per_gpu``,
  ``rack_per_gpu``: a whole server per GPU; ``gpu_only``: the card), then ``baseboard_per_gpu`` /
  ``hgx_unspecified_per_gpu``, then ``unclear``; within that, confidence high > medium > low, then
  the most recent ``price_date`` (``YYYY`` sorts before ``YYYY-01``), then whole-server before card
  before board, then the lower price.
* **Server overhead factor**, so that capital = price × factor covers a whole server:
  ``system_per_gpu`` / ``rack_per_gpu`` → 1 (the price already includes the host);
  ``gpu_only`` and ``unclear`` → the row's ``server_overhead_factor``, else
  ``server_overhead_factor_default`` (Epoch: 1.64); ``baseboard_per_gpu`` → 1 + the DGX H100
  non-GPU bill of materials per GPU (``dgx_h100_non_gpu_bom`` / 8) ÷ price; ``hgx_unspecified_per_gpu``
  → halfway between board and server (1 + half of that). When the user gives the price, it is taken
  as the GPU's own price: the factor is the most recent factor any row of that GPU states, else the
  default.
* **Power per GPU** (kW): the chosen row's ``system_power_w_per_gpu``, else the most recent row of
  the GPU that has one, else TDP (row, else catalog) × ``chip_to_server_power_default`` (Epoch: 1.8).
* **Load fraction**: ``avg_power_fraction_of_server_tdp_training`` (Epoch: 0.75 of server power).
* **PUE**: ``pue_default_other`` (Epoch's non-hyperscaler default, 1.25).
* **Electricity**: ``electricity_price_default_nag`` (USD 0.10/kWh).
* **Colocation**: ``colo_rate_na_primary`` (CBRE H2 2025 reprint; ``colo_rate_na_primary_250_500kw``
  is the older, better-sourced H2 2024 figure — pass it in the request to use it).
* **Useful life**: ``useful_life_epoch_ge2023`` (Epoch: 5 years for servers bought from 2023).
* **Maintenance**: the midpoint of ``maintenance_pct_of_purchase_per_year_low`` and ``_high`` / 100.
* Built-in defaults (not in the sheet), each cited: idle power fraction, residual fraction, discount
  rate (``BUILT_IN_DEFAULTS``).
* **Commitment discounts**: ``commit_discount_{provider}_{1y|3y}`` when the sheet has the provider,
  else the mean of the AWS, GCP and Azure rows of that term.

Where a sheet has several rows for one parameter, the most recent ``date`` wins, then the higher
confidence. A parameter the sheet lacks is returned as None (the caller asks the user for it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from pricing.sheets.ownership_rows import OwnershipDefault, OwnershipPrice

__all__ = [
    "BUILT_IN_DEFAULTS",
    "OwnershipChoice",
    "SheetDefault",
    "SheetPrice",
    "SourcedValue",
    "choose_defaults",
    "commitment_discount",
    "price_scope",
]

ValueSource = Literal["ownership_sheet", "default"]


class SourcedValue(msgspec.Struct, frozen=True, kw_only=True):
    """A default value and where it comes from (``sheet_version`` for sheet values)."""

    value: float
    unit: str
    source: ValueSource
    citation: str
    sheet_version: int | None = None
    confidence: str | None = None


class SheetPrice(OwnershipPrice, frozen=True, kw_only=True):
    """A purchase-price row with the ownership sheet version it belongs to."""

    sheet_version: int


class SheetDefault(OwnershipDefault, frozen=True, kw_only=True):
    """A finance-default row with the ownership sheet version it belongs to."""

    sheet_version: int


class OwnershipChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The default of every ownership input (None where the sheet has nothing), and the price row used."""

    purchase_price_usd_per_gpu: SourcedValue | None
    server_overhead_factor: SourcedValue | None
    useful_life_years: SourcedValue | None
    residual_fraction: SourcedValue
    power_kw_per_gpu: SourcedValue | None
    load_fraction: SourcedValue | None
    idle_power_fraction: SourcedValue
    pue: SourcedValue | None
    electricity_usd_per_kwh: SourcedValue | None
    colocation_usd_per_kw_month: SourcedValue | None
    maintenance_fraction_per_year: SourcedValue | None
    discount_rate: SourcedValue
    price_row: SheetPrice | None


BUILT_IN_DEFAULTS: Final[dict[str, SourcedValue]] = {
    "idle_power_fraction": SourcedValue(
        value=round((57.88 + 115.62 + 278.7) / (477.98 + 767.62 + 2444.5), 4),
        unit="fraction of provisioned power",
        source="default",
        citation=(
            "whole-instance power of an 8-GPU AWS p3dn.24xlarge at 0 % vs 100 % load (CPU package "
            "57.88/477.98 W, DRAM 115.62/767.62 W, GPUs 278.7/2444.5 W), as recorded in "
            "edwinlim0919/sustainable-deep-learning nvidia-gpu/tensorrt-llm/plotting/cost_data.py@067bba1b: "
            "452.2 W / 3690.1 W"
        ),
        confidence="low",
    ),
    "residual_fraction": SourcedValue(
        value=0.0,
        unit="fraction of capital",
        source="default",
        citation=(
            "no salvage: epoch-research/training-cost-trends hardware.py@3c6aafac amortises the whole "
            "hardware price linearly over the server life (get_server_lifetime); CoreWeave depreciates "
            "GPUs straight-line over six years (bizety.com 2025-09-23, citing its S-1)"
        ),
        confidence="medium",
    ),
    "discount_rate": SourcedValue(
        value=0.07,
        unit="per year",
        source="default",
        citation=(
            "OMB Circular A-94 (revised 1992-10-29) base-case real discount rate: 'the current guidance, "
            "issued on October 29, 1992, directs agencies to use a 7% discount rate' (US EPA OSWER "
            "Directive 9355.3-20)"
        ),
        confidence="medium",
    ),
}

_SCOPE = re.compile(r"scope=([a-z_]+)")
_TIER: Final = {
    "system_per_gpu": 0,
    "rack_per_gpu": 0,
    "gpu_only": 0,
    "baseboard_per_gpu": 1,
    "hgx_unspecified_per_gpu": 1,
    "unclear": 2,
}
_SCOPE_ORDER: Final = {
    "system_per_gpu": 0,
    "rack_per_gpu": 1,
    "gpu_only": 2,
    "baseboard_per_gpu": 3,
    "hgx_unspecified_per_gpu": 4,
    "unclear": 5,
}
_CONFIDENCE: Final = {"high": 0, "medium": 1, "low": 2}
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?")


def price_scope(notes: str) -> str:
    """The ``scope=`` tag of a price row's notes (``unclear`` when absent)."""
    found = _SCOPE.search(notes)
    return found.group(1) if found else "unclear"


def _date_key(text: str) -> tuple[int, int]:
    found = _DATE.match(text.strip())
    if not found:
        return (0, 0)
    return (int(found.group(1)), int(found.group(2) or 0))


def _confidence(text: str | None) -> int:
    return _CONFIDENCE.get((text or "").strip().lower(), len(_CONFIDENCE))


def _pick(defaults: Sequence[SheetDefault], parameter: str) -> SheetDefault | None:
    rows = [d for d in defaults if d.parameter == parameter]
    if not rows:
        return None
    return min(
        rows, key=lambda d: (tuple(-x for x in _date_key(d.date)), _confidence(d.confidence), d.source)
    )


def _cite(row: SheetDefault) -> str:
    when = f", {row.date}" if row.date else ""
    return f"ownership sheet parameter {row.parameter}: {row.source}{when}"


def _from_sheet(
    defaults: Sequence[SheetDefault], parameter: str, unit: str, scale: float = 1.0
) -> SourcedValue | None:
    row = _pick(defaults, parameter)
    if row is None:
        return None
    return SourcedValue(
        value=row.value * scale,
        unit=unit,
        source="ownership_sheet",
        citation=_cite(row),
        sheet_version=row.sheet_version,
        confidence=row.confidence or None,
    )


def _price_key(row: SheetPrice) -> tuple[int, int, tuple[int, int], int, float, str]:
    scope = price_scope(row.notes)
    year, month = _date_key(row.price_date)
    return (
        _TIER[scope],
        _confidence(row.confidence),
        (-year, -month),
        _SCOPE_ORDER[scope],
        row.purchase_price_usd,
        row.source,
    )


def _choose_price_row(prices: Sequence[SheetPrice]) -> SheetPrice | None:
    usable = [p for p in prices if p.purchase_price_usd > 0 and price_scope(p.notes) in _TIER]
    return min(usable, key=_price_key) if usable else None


def _row_citation(row: SheetPrice) -> str:
    dated = f" {row.price_date}" if row.price_date else ""
    return (
        f"ownership sheet price row for {row.gpu_name} ({row.price_basis}{dated}, "
        f"scope={price_scope(row.notes)}): {row.source} <{row.source_url}>"
    )


def _most_recent_factor(prices: Sequence[SheetPrice]) -> SheetPrice | None:
    rows = [p for p in prices if p.server_overhead_factor]
    if not rows:
        return None
    return min(rows, key=lambda p: (tuple(-x for x in _date_key(p.price_date)), _confidence(p.confidence)))


def _overhead(
    row: SheetPrice | None, prices: Sequence[SheetPrice], defaults: Sequence[SheetDefault]
) -> SourcedValue | None:
    generic = _from_sheet(defaults, "server_overhead_factor_default", "ratio")
    if row is None:  # the user's own price: take it as the GPU's price
        stated = _most_recent_factor(prices)
        if stated is None or stated.server_overhead_factor is None:
            return generic
        return SourcedValue(
            value=stated.server_overhead_factor,
            unit="ratio",
            source="ownership_sheet",
            citation=f"server_overhead_factor stated for this GPU by {_row_citation(stated)}",
            sheet_version=stated.sheet_version,
            confidence=stated.confidence or None,
        )
    scope = price_scope(row.notes)
    if scope in ("system_per_gpu", "rack_per_gpu"):
        return SourcedValue(
            value=1.0,
            unit="ratio",
            source="ownership_sheet",
            citation=f"the price already covers a whole server (scope={scope}): {_row_citation(row)}",
            sheet_version=row.sheet_version,
            confidence=row.confidence or None,
        )
    if scope in ("baseboard_per_gpu", "hgx_unspecified_per_gpu"):
        bom = _pick(defaults, "dgx_h100_non_gpu_bom")
        if bom is not None:
            share = 1.0 if scope == "baseboard_per_gpu" else 0.5
            host_per_gpu = bom.value / 8.0
            how = "" if share == 1.0 else "half of "
            return SourcedValue(
                value=1.0 + share * host_per_gpu / row.purchase_price_usd,
                unit="ratio",
                source="ownership_sheet",
                citation=(
                    f"1 + {how}the non-GPU bill of materials of an 8-GPU server (dgx_h100_non_gpu_bom "
                    f"{bom.value:g} / 8) ÷ the {scope} price; {_cite(bom)}"
                ),
                sheet_version=bom.sheet_version,
                confidence=bom.confidence or None,
            )
        return generic
    if row.server_overhead_factor:
        return SourcedValue(
            value=row.server_overhead_factor,
            unit="ratio",
            source="ownership_sheet",
            citation=f"server_overhead_factor of {_row_citation(row)}",
            sheet_version=row.sheet_version,
            confidence=row.confidence or None,
        )
    return generic


def _power(
    row: SheetPrice | None,
    prices: Sequence[SheetPrice],
    defaults: Sequence[SheetDefault],
    gpu_tdp_w: float | None,
) -> SourcedValue | None:
    with_power = [p for p in prices if p.system_power_w_per_gpu]
    if row is not None and row.system_power_w_per_gpu:
        source_row: SheetPrice | None = row
    elif with_power:
        source_row = min(with_power, key=lambda p: tuple(-x for x in _date_key(p.price_date)))
    else:
        source_row = None
    if source_row is not None and source_row.system_power_w_per_gpu:
        return SourcedValue(
            value=source_row.system_power_w_per_gpu / 1000.0,
            unit="kW",
            source="ownership_sheet",
            citation=f"system_power_w_per_gpu of {_row_citation(source_row)}",
            sheet_version=source_row.sheet_version,
            confidence=source_row.confidence or None,
        )
    tdp = next((p.gpu_tdp_w for p in prices if p.gpu_tdp_w), None) or gpu_tdp_w
    ratio = _pick(defaults, "chip_to_server_power_default")
    if tdp is None or ratio is None:
        return None
    return SourcedValue(
        value=tdp * ratio.value / 1000.0,
        unit="kW",
        source="ownership_sheet",
        citation=f"GPU TDP {tdp:g} W × chip_to_server_power_default {ratio.value:g}; {_cite(ratio)}",
        sheet_version=ratio.sheet_version,
        confidence=ratio.confidence or None,
    )


def _maintenance(defaults: Sequence[SheetDefault]) -> SourcedValue | None:
    low = _pick(defaults, "maintenance_pct_of_purchase_per_year_low")
    high = _pick(defaults, "maintenance_pct_of_purchase_per_year_high")
    if low is None or high is None:
        return None
    return SourcedValue(
        value=(low.value + high.value) / 2.0 / 100.0,
        unit="fraction of capital per year",
        source="ownership_sheet",
        citation=f"midpoint of {low.value:g}-{high.value:g} % per year; {_cite(low)}",
        sheet_version=low.sheet_version,
        confidence=low.confidence or None,
    )


def choose_defaults(
    prices: Sequence[SheetPrice],
    defaults: Sequence[SheetDefault],
    *,
    gpu_tdp_w: float | None,
    user_price: bool,
) -> OwnershipChoice:
    """Every ownership default for one GPU; ``prices`` are that GPU's rows of the current sheet."""
    row = None if user_price else _choose_price_row(prices)
    price = (
        SourcedValue(
            value=row.purchase_price_usd,
            unit="USD per GPU",
            source="ownership_sheet",
            citation=_row_citation(row),
            sheet_version=row.sheet_version,
            confidence=row.confidence or None,
        )
        if row is not None
        else None
    )
    return OwnershipChoice(
        purchase_price_usd_per_gpu=price,
        server_overhead_factor=_overhead(row, prices, defaults),
        useful_life_years=_from_sheet(defaults, "useful_life_epoch_ge2023", "years"),
        residual_fraction=BUILT_IN_DEFAULTS["residual_fraction"],
        power_kw_per_gpu=_power(row, prices, defaults, gpu_tdp_w),
        load_fraction=_from_sheet(
            defaults, "avg_power_fraction_of_server_tdp_training", "fraction of provisioned power"
        ),
        idle_power_fraction=BUILT_IN_DEFAULTS["idle_power_fraction"],
        pue=_from_sheet(defaults, "pue_default_other", "ratio"),
        electricity_usd_per_kwh=_from_sheet(defaults, "electricity_price_default_nag", "USD/kWh"),
        colocation_usd_per_kw_month=_from_sheet(defaults, "colo_rate_na_primary", "USD/kW-month"),
        maintenance_fraction_per_year=_maintenance(defaults),
        discount_rate=BUILT_IN_DEFAULTS["discount_rate"],
        price_row=row,
    )


def commitment_discount(
    defaults: Sequence[SheetDefault], provider: str, commitment: Literal["1y", "3y"]
) -> SourcedValue | None:
    """The fraction off on-demand for a 1- or 3-year commitment at ``provider``."""
    own = _from_sheet(defaults, f"commit_discount_{provider.lower()}_{commitment}", "fraction off on-demand")
    if own is not None:
        return own
    rows = [
        row
        for cloud in ("aws", "gcp", "azure")
        if (row := _pick(defaults, f"commit_discount_{cloud}_{commitment}")) is not None
    ]
    if not rows:
        return None
    return SourcedValue(
        value=sum(r.value for r in rows) / len(rows),
        unit="fraction off on-demand",
        source="ownership_sheet",
        citation=(
            f"no {commitment} discount in the sheet for {provider}: mean of "
            + ", ".join(f"{r.parameter} {r.value:g}" for r in rows)
            + f" ({rows[0].source})"
        ),
        sheet_version=rows[0].sheet_version,
        confidence="low",
    )
