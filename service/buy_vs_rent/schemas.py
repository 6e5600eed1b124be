"""Request and response bodies of ``POST /v1/buy-vs-rent`` (msgspec Structs; OpenAPI comes from them).

:class:`OwnInputs` is the one description of every ownership input: its bounds and API description,
its unit and its CLI option (the units table and the CLI options are derived from it).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from pricing import GridCell, TornadoBar
from service.catalog.schemas import OfferKey
from solver import SolveOutcome

__all__ = [
    "Assumption",
    "BuyVsRentRequest",
    "BuyVsRentResponse",
    "HybridOut",
    "MonthRow",
    "OfferRef",
    "OwnInputs",
    "Recommendation",
    "RentInputs",
    "Sensitivity",
]

Commitment = Literal["on_demand", "1y", "3y"]
AssumptionSource = Literal["request", "ownership_sheet", "rental_sheet", "default", "derived"]

_Money = Annotated[float, Meta(gt=0, le=1e8)]
_Fraction = Annotated[float, Meta(ge=0, le=1)]


def _input(unit: str, flag: str, cli_help: str, description: str | None = None) -> Meta:
    """One ownership input, described once: the API's description, its unit (in ``assumptions``) and its
    ``gpuplan buy-vs-rent`` option (``service.buy_vs_rent.own_inputs`` reads them back)."""
    return Meta(description=description, extra={"unit": unit, "flag": flag, "help": cli_help})


class OwnInputs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Ownership inputs per GPU; each one left out defaults from the ownership sheet (or a cited default)."""

    purchase_price_usd_per_gpu: (
        Annotated[
            _Money,
            _input(
                "USD per GPU",
                "--purchase-price",
                "USD per GPU",
                "GPU price in USD (capital = price × server_overhead_factor)",
            ),
        ]
        | None
    ) = None
    server_overhead_factor: (
        Annotated[
            float,
            Meta(ge=1, le=10),
            _input(
                "ratio",
                "--server-overhead",
                "whole server cost per GPU / GPU price",
                "Whole server cost per GPU / GPU price",
            ),
        ]
        | None
    ) = None
    useful_life_years: (
        Annotated[
            float,
            Meta(gt=0, le=30),
            _input("years", "--life-years", "useful life in years", "Years until replacement"),
        ]
        | None
    ) = None
    residual_fraction: (
        Annotated[
            _Fraction,
            _input(
                "fraction of capital",
                "--residual",
                "salvage value at end of life / capital",
                "Salvage value at end of life / capital",
            ),
        ]
        | None
    ) = None
    power_kw_per_gpu: (
        Annotated[
            float,
            Meta(gt=0, le=100),
            _input(
                "kW",
                "--power-kw",
                "provisioned system power per GPU, kW",
                "Provisioned (nameplate) system power per GPU, kW",
            ),
        ]
        | None
    ) = None
    load_fraction: (
        Annotated[
            _Fraction,
            _input(
                "fraction of provisioned power",
                "--load-fraction",
                "share of the power a busy GPU draws",
                "Share of the provisioned power a busy GPU draws",
            ),
        ]
        | None
    ) = None
    idle_power_fraction: (
        Annotated[
            _Fraction,
            _input(
                "fraction of provisioned power",
                "--idle-fraction",
                "share of the power an idle GPU draws",
                "Share of the provisioned power an idle GPU draws",
            ),
        ]
        | None
    ) = None
    pue: (
        Annotated[
            float,
            Meta(ge=1, le=5),
            _input("ratio", "--pue", "power usage effectiveness", "Power usage effectiveness"),
        ]
        | None
    ) = None
    electricity_usd_per_kwh: (
        Annotated[float, Meta(ge=0, le=10), _input("USD/kWh", "--electricity", "USD per kWh")] | None
    ) = None
    colocation_usd_per_kw_month: (
        Annotated[
            float,
            Meta(ge=0, le=100_000),
            _input(
                "USD/kW-month",
                "--colocation",
                "USD per provisioned kW-month",
                "Charged on the provisioned kW, busy or idle",
            ),
        ]
        | None
    ) = None
    maintenance_fraction_per_year: (
        Annotated[
            _Fraction,
            _input(
                "fraction of capital per year",
                "--maintenance",
                "yearly maintenance / capital",
                "Yearly maintenance / capital",
            ),
        ]
        | None
    ) = None
    discount_rate: (
        Annotated[
            _Fraction,
            _input(
                "per year",
                "--discount-rate",
                "annual discount rate",
                "Annual discount rate (0: no discounting)",
            ),
        ]
        | None
    ) = None


class RentInputs(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The rent side: a price, or the cheapest current offer for the GPU, and the commitment."""

    usd_per_gpu_hour: (
        Annotated[
            float,
            Meta(gt=0, le=10_000, description="Rent per GPU-hour (for a commitment: the committed rate)"),
        ]
        | None
    ) = None
    commitment: Annotated[
        Commitment,
        Meta(description="on_demand: billed per busy GPU-hour; 1y / 3y: reserved, billed every hour"),
    ] = "on_demand"


class BuyVsRentRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Own vs rent one GPU type: give ``utilization`` or ``monthly_demand_gpu_hours`` (exactly one)."""

    gpu: Annotated[str, Meta(min_length=1, max_length=200, description="One GPU: id, name or alias")]
    horizon_months: Annotated[int, Meta(ge=1, le=240, description="Months compared (at most 240)")]
    gpu_count: (
        Annotated[
            int,
            Meta(ge=1, le=100_000, description="GPUs bought or rented (default with a profile: the peak)"),
        ]
        | None
    ) = None
    utilization: (
        Annotated[
            float, Meta(ge=1e-6, le=1, description="Busy share of the hours, in (0, 1] (at least 1e-6)")
        ]
        | None
    ) = None
    monthly_demand_gpu_hours: (
        Annotated[
            list[Annotated[float, Meta(ge=0, le=1e8)]],
            Meta(
                min_length=1,
                max_length=240,
                description="Busy GPU-hours per month; repeated to fill the horizon when shorter",
            ),
        ]
        | None
    ) = None
    portfolio_id: (
        Annotated[
            str,
            Meta(
                max_length=64,
                description="A stored portfolio (POST /v1/portfolios): its measured busy GPU-hours of this GPU "
                "per month are the demand (instead of utilization or monthly_demand_gpu_hours)",
            ),
        ]
        | None
    ) = None
    own: OwnInputs = msgspec.field(default_factory=OwnInputs)
    rent: RentInputs = msgspec.field(default_factory=RentInputs)


class Assumption(msgspec.Struct, kw_only=True):
    """One number the answer uses, and where it comes from."""

    name: str
    value: float
    unit: str
    source: AssumptionSource
    citation: str
    sheet_version: int | None = None
    confidence: str | None = None


class OfferRef(OfferKey, kw_only=True):
    """The rental offer the rent price comes from."""

    on_demand_usd_per_hour: float
    on_demand_usd_per_gpu_hour: float
    commitment_discount: float
    sheet_version: int
    sheet_source: str


class MonthRow(msgspec.Struct, kw_only=True):
    """One month of the schedule (month 0 = purchase). ``own_residual_usd`` ≤ 0 is value recovered."""

    month: int
    own_capital_usd: float
    own_opex_usd: float
    own_residual_usd: float
    own_usd: float
    rent_usd: float
    cumulative_own_usd: float
    cumulative_rent_usd: float
    hybrid_usd: float | None
    cumulative_hybrid_usd: float | None
    discount_factor: float
    """1 / (1 + monthly rate)^month: what a dollar of this month is worth at month 0."""
    pv_own_usd: float
    pv_rent_usd: float
    cumulative_pv_own_usd: float
    cumulative_pv_rent_usd: float
    depreciation_usd: float
    """Straight-line depreciation of the owned fleet in the month (capital − salvage over the life)."""
    book_value_usd: float
    """The owned fleet's book value at the end of the month."""


class Recommendation(msgspec.Struct, kw_only=True):
    choice: Literal["own", "rent", "hybrid"]
    reason: str


class Sensitivity(msgspec.Struct, kw_only=True):
    """Utilisation × rent price grid and the ±20 % tornado (sorted by swing) of the own advantage."""

    measure: str
    base_own_advantage_usd: float
    grid: list[GridCell]
    tornado: list[TornadoBar]


class HybridOut(msgspec.Struct, kw_only=True):
    """The own + rent fleet that minimises present cost, against all-own (peak) and all-rent."""

    owned_gpus: int
    reserved_gpus: int
    peak_gpus: int
    owned_gpu_hours: float
    rented_gpu_hours: float
    npv_hybrid_usd: float
    npv_all_own_usd: float
    npv_all_rent_usd: float
    total_hybrid_usd: float
    total_all_own_usd: float
    total_all_rent_usd: float
    solver: SolveOutcome | None


class BuyVsRentResponse(msgspec.Struct, kw_only=True):
    """Own vs rent: headline numbers, the monthly schedule, sensitivity and every assumption's source.

    Money is USD, unrounded. NPVs are present values of costs at month 0 (positive = cost); totals are
    undiscounted sums of the monthly cash flows (residual value credited).
    """

    gpu_id: str
    gpu_name: str
    gpu_count: int
    horizon_months: int
    utilization: float
    commitment: Commitment
    rent_billing: Literal["per_busy_hour", "reserved"]
    owned_usd_per_busy_gpu_hour: float
    rent_usd_per_gpu_hour: float
    rent_usd_per_busy_gpu_hour: float
    break_even_utilization: float | None
    break_even_own_cheaper: Literal["above", "below", "always", "never"]
    break_even_month: int | None
    npv_own_usd: float
    npv_rent_usd: float
    total_own_usd: float
    total_rent_usd: float
    payback_month: int | None
    """First month the cumulative saving of owning (rent − own, undiscounted) reaches zero."""
    discounted_payback_month: int | None
    """The same on present values."""
    irr_annual: float | None
    """Annual internal rate of return of owning instead of renting (None: the saving never changes sign)."""
    recommendation: Recommendation
    monthly: list[MonthRow]
    sensitivity: Sensitivity
    hybrid: HybridOut | None
    rent_offer: OfferRef | None
    ownership_sheet_versions: list[int]
    assumptions: list[Assumption]
