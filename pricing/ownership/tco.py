"""Own vs rent arithmetic for GPUs: owned cost per busy GPU-hour, monthly cash flows, NPV, break-even.

Pure functions on msgspec Structs; no I/O. Money is USD as floats, never rounded here.

Conventions (per GPU unless stated; ``u`` is the utilisation, the busy share of the hours):

* **Capital** = purchase price × server overhead factor (host, chassis, NICs on top of the GPU).
  Salvage (residual value) = capital × residual fraction, recovered at the end of the useful life.
* **Annualised capital**: straight line, (capital − salvage) / life, when the discount rate is 0;
  otherwise the capital recovery payment with residual value,
  (capital − salvage / (1 + r)^L) × r (1 + r)^L / ((1 + r)^L − 1).
* **Energy** per provisioned hour = kW × (u × load_fraction + (1 − u) × idle_power_fraction)
  × PUE × USD/kWh: ``power_kw_per_gpu`` is the provisioned (nameplate) system power per GPU, a busy
  GPU draws ``load_fraction`` of it, an idle one ``idle_power_fraction``.
* **Colocation** is charged on the provisioned kW, busy or idle: kW × USD/kW-month.
* **Maintenance** = fraction × capital per year.
* A year has 8,760 hours and a month 730 (8,760 / 12).
* **Owned USD per busy GPU-hour** = (annualised capital + maintenance) / 8,760 + colocation / 730
  + energy at ``u``, all divided by ``u``.

Cash-flow timing (the monthly schedule, NPV and break-even month):

* Month 0: the purchase (capital × GPUs). Months 1..H: opex at the end of each month (energy for the
  month's busy and idle hours, colocation, maintenance / 12) and rent.
* End of life (every ``round(12 × life)`` months, at least 1): the salvage value is recovered and,
  if the horizon continues, the GPUs are bought again at the same capital, so capacity never lapses.
* Horizon end: the unexpired value of the GPUs in service is credited — the present value of their
  remaining capital recovery payments plus the salvage (at a zero discount rate this is the
  straight-line book value); if the horizon ends exactly at end of life, the salvage itself.
* Rent: on-demand rent is billed for busy GPU-hours only; a 1- or 3-year commitment reserves the same
  number of GPUs for every hour of every month, busy or idle.
* NPV discounts month m by (1 + i)^m with the monthly rate i = (1 + r)^(1/12) − 1 derived from the
  annual rate r; costs are positive, credits negative.
* Break-even month: the first month (0..H) whose cumulative own cash flow is ≤ the cumulative rent,
  or None. Break-even utilisation compares the annualised per-hour costs (independent of the
  horizon), solved in closed form.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal

import msgspec
import numpy_financial as npf

__all__ = [
    "HOURS_PER_MONTH",
    "HOURS_PER_YEAR",
    "BreakEven",
    "Comparison",
    "HybridCoefficients",
    "MonthFlow",
    "OwnershipInputs",
    "RentBilling",
    "annualised_capital_usd",
    "break_even_utilization",
    "busy_energy_usd_per_hour",
    "compare",
    "discount_factors",
    "fixed_usd_per_gpu_hour",
    "hybrid_coefficients",
    "idle_energy_usd_per_hour",
    "monthly_rate",
    "npv",
    "own_cash_flows",
    "owned_usd_per_busy_gpu_hour",
    "remaining_value_usd",
    "rent_cash_flows",
]

HOURS_PER_YEAR: Final = 8760.0
HOURS_PER_MONTH: Final = HOURS_PER_YEAR / 12

RentBilling = Literal["per_busy_hour", "reserved"]
"""``per_busy_hour``: on-demand, billed for busy GPU-hours; ``reserved``: a commitment, every hour."""


class OwnershipInputs(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that prices one owned GPU (see the module docstring for the conventions)."""

    purchase_price_usd_per_gpu: float
    server_overhead_factor: float
    useful_life_years: float
    residual_fraction: float
    power_kw_per_gpu: float
    load_fraction: float
    idle_power_fraction: float
    pue: float
    electricity_usd_per_kwh: float
    colocation_usd_per_kw_month: float
    maintenance_fraction_per_year: float
    discount_rate: float

    @property
    def capital_usd_per_gpu(self) -> float:
        return self.purchase_price_usd_per_gpu * self.server_overhead_factor

    @property
    def salvage_usd_per_gpu(self) -> float:
        return self.capital_usd_per_gpu * self.residual_fraction

    @property
    def life_months(self) -> int:
        return max(1, round(self.useful_life_years * 12))


class MonthFlow(msgspec.Struct, frozen=True, kw_only=True):
    """One month of the schedule for the whole fleet; ``own_residual_usd`` is ≤ 0 (value recovered)."""

    month: int
    own_capital_usd: float
    own_opex_usd: float
    own_residual_usd: float
    rent_usd: float

    @property
    def own_usd(self) -> float:
        return self.own_capital_usd + self.own_opex_usd + self.own_residual_usd


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """Own vs rent over the horizon: the schedule, undiscounted totals, NPVs and the break-even month."""

    months: list[MonthFlow]
    total_own_usd: float
    total_rent_usd: float
    npv_own_usd: float
    npv_rent_usd: float
    break_even_month: int | None


class BreakEven(msgspec.Struct, frozen=True, kw_only=True):
    """Where owning and renting cost the same per busy GPU-hour, and on which side owning wins.

    ``own_cheaper``: ``above`` / ``below`` the break-even ``utilization``; ``always`` / ``never`` when
    the two costs do not cross in (0, 1] (``utilization`` is then None).
    """

    utilization: float | None
    own_cheaper: Literal["above", "below", "always", "never"]


class HybridCoefficients(msgspec.Struct, frozen=True, kw_only=True):
    """Present values (at month 0) that price a hybrid fleet linearly.

    ``owned_fixed_usd_per_gpu``: one owned GPU over the horizon if it were never busy (capital,
    replacements, terminal credit, colocation, maintenance, idle energy).
    ``owned_busy_usd_per_hour[m - 1]``: the extra energy of one busy owned GPU-hour in month m.
    ``rent_usd_per_hour[m - 1]``: one on-demand GPU-hour in month m.
    ``reserved_usd_per_gpu``: one GPU reserved for every hour of the horizon.
    """

    owned_fixed_usd_per_gpu: float
    owned_busy_usd_per_hour: list[float]
    rent_usd_per_hour: list[float]
    reserved_usd_per_gpu: float


def monthly_rate(annual_rate: float) -> float:
    """The monthly rate equivalent to an annual one: (1 + r)^(1/12) − 1."""
    return math.expm1(math.log1p(annual_rate) / 12.0)


def discount_factors(annual_rate: float, horizon_months: int) -> list[float]:
    """1 / (1 + i)^m for m = 0..horizon_months."""
    i = monthly_rate(annual_rate)
    return [float((1.0 + i) ** -m) for m in range(horizon_months + 1)]


def npv(flows: Sequence[float], rate_per_period: float) -> float:
    """Present value of ``flows[t]`` paid at the end of period t (t = 0 is now): ``numpy_financial.npv``."""
    return float(npf.npv(rate_per_period, list(flows)))


def annualised_capital_usd(inputs: OwnershipInputs) -> float:
    """Capital cost per GPU-year: straight line at r = 0, else capital recovery with residual value."""
    # Not ``numpy_financial.pmt``: it divides by (1 + r)^L − 1 computed as a difference, which is 0 for
    # rates below about 1e-16 (inf at r = 1e-300, a divide warning at r = 0); expm1 keeps it exact.
    capital = inputs.capital_usd_per_gpu
    salvage = inputs.salvage_usd_per_gpu
    life = inputs.useful_life_years
    r = inputs.discount_rate
    gain = math.expm1(life * math.log1p(r))  # (1 + r)^L − 1, exact for tiny rates
    if gain == 0:
        return (capital - salvage) / life
    growth = 1.0 + gain
    return (capital - salvage / growth) * r * growth / gain


def busy_energy_usd_per_hour(inputs: OwnershipInputs) -> float:
    """Energy cost of one busy GPU-hour: kW × load_fraction × PUE × USD/kWh."""
    return inputs.power_kw_per_gpu * inputs.load_fraction * inputs.pue * inputs.electricity_usd_per_kwh


def idle_energy_usd_per_hour(inputs: OwnershipInputs) -> float:
    """Energy cost of one idle GPU-hour: kW × idle_power_fraction × PUE × USD/kWh."""
    return inputs.power_kw_per_gpu * inputs.idle_power_fraction * inputs.pue * inputs.electricity_usd_per_kwh


def fixed_usd_per_gpu_hour(inputs: OwnershipInputs) -> float:
    """Cost of one provisioned GPU-hour that does not depend on use: capital, maintenance, colocation."""
    yearly = (
        annualised_capital_usd(inputs) + inputs.maintenance_fraction_per_year * inputs.capital_usd_per_gpu
    )
    colocation = inputs.power_kw_per_gpu * inputs.colocation_usd_per_kw_month / HOURS_PER_MONTH
    return yearly / HOURS_PER_YEAR + colocation


def owned_usd_per_busy_gpu_hour(inputs: OwnershipInputs, utilization: float) -> float:
    """Owned cost per busy GPU-hour at ``utilization`` (0 < u ≤ 1)."""
    u = utilization
    energy = u * busy_energy_usd_per_hour(inputs) + (1.0 - u) * idle_energy_usd_per_hour(inputs)
    return (fixed_usd_per_gpu_hour(inputs) + energy) / u


def break_even_utilization(
    inputs: OwnershipInputs, rent_usd_per_gpu_hour: float, billing: RentBilling
) -> BreakEven:
    """Closed form: own = a + b·u per provisioned hour; rent = R·u (on-demand) or R (reserved)."""
    idle = idle_energy_usd_per_hour(inputs)
    a = fixed_usd_per_gpu_hour(inputs) + idle
    b = busy_energy_usd_per_hour(inputs) - idle
    rent = rent_usd_per_gpu_hour
    # own − rent = alpha + beta·u
    alpha, beta = (a, b - rent) if billing == "per_busy_hour" else (a - rent, b)
    if beta != 0:
        root = -alpha / beta
        if 0 < root <= 1:
            return BreakEven(utilization=root, own_cheaper="above" if beta < 0 else "below")
        sign_on_interval = alpha + beta if root <= 0 else alpha
    else:
        sign_on_interval = alpha
    return BreakEven(utilization=None, own_cheaper="always" if sign_on_interval < 0 else "never")


def remaining_value_usd(inputs: OwnershipInputs, age_months: int) -> float:
    """Value of one GPU's capital ``age_months`` into its life.

    The present value of its remaining capital recovery payments plus the salvage, at the monthly
    rate; at a zero rate the straight-line book value capital − (capital − salvage) × age / life.
    """
    capital = inputs.capital_usd_per_gpu
    salvage = inputs.salvage_usd_per_gpu
    life = inputs.life_months
    left = life - min(max(age_months, 0), life)
    i = monthly_rate(inputs.discount_rate)
    if i == 0:
        return salvage + (capital - salvage) * left / life
    log_v = -math.log1p(i)
    annuity_life = -math.expm1(life * log_v) / i  # (1 − v^life) / i
    annuity_left = -math.expm1(left * log_v) / i
    payment = (capital - salvage * math.exp(life * log_v)) / annuity_life
    return payment * annuity_left + salvage * math.exp(left * log_v)


def own_cash_flows(
    inputs: OwnershipInputs, *, gpus: int, busy_gpu_hours: Sequence[float]
) -> list[tuple[float, float, float]]:
    """(capital, opex, residual) of the owned fleet for months 0..H, H = len(busy_gpu_hours).

    ``busy_gpu_hours[m - 1]`` is the fleet's busy GPU-hours in month m (at most gpus × 730).
    """
    horizon = len(busy_gpu_hours)
    life = inputs.life_months
    capital = gpus * inputs.capital_usd_per_gpu
    salvage = gpus * inputs.salvage_usd_per_gpu
    idle = idle_energy_usd_per_hour(inputs)
    extra_busy = busy_energy_usd_per_hour(inputs) - idle
    fixed_month = gpus * (
        inputs.power_kw_per_gpu * inputs.colocation_usd_per_kw_month
        + inputs.maintenance_fraction_per_year * inputs.capital_usd_per_gpu / 12.0
        + idle * HOURS_PER_MONTH
    )
    flows: list[tuple[float, float, float]] = [(capital, 0.0, 0.0)]
    for month in range(1, horizon + 1):
        opex = fixed_month + extra_busy * busy_gpu_hours[month - 1]
        bought = 0.0
        residual = 0.0
        if month % life == 0:
            residual -= salvage
            if month < horizon:
                bought = capital
        if month == horizon and month % life != 0:
            residual -= gpus * remaining_value_usd(inputs, month % life)
        flows.append((bought, opex, residual))
    return flows


def rent_cash_flows(
    rent_usd_per_gpu_hour: float, billing: RentBilling, *, gpus: int, busy_gpu_hours: Sequence[float]
) -> list[float]:
    """Rent for months 0..H: busy GPU-hours × price, or (reserved) gpus × 730 × price every month."""
    if billing == "reserved":
        monthly = [gpus * HOURS_PER_MONTH * rent_usd_per_gpu_hour for _ in busy_gpu_hours]
    else:
        monthly = [hours * rent_usd_per_gpu_hour for hours in busy_gpu_hours]
    return [0.0, *monthly]


def compare(
    inputs: OwnershipInputs,
    *,
    gpus: int,
    busy_gpu_hours: Sequence[float],
    rent_usd_per_gpu_hour: float,
    billing: RentBilling,
) -> Comparison:
    """Own vs rent for a fleet of ``gpus`` with the given busy GPU-hours per month."""
    own = own_cash_flows(inputs, gpus=gpus, busy_gpu_hours=busy_gpu_hours)
    rent = rent_cash_flows(rent_usd_per_gpu_hour, billing, gpus=gpus, busy_gpu_hours=busy_gpu_hours)
    months = [
        MonthFlow(month=m, own_capital_usd=c, own_opex_usd=o, own_residual_usd=s, rent_usd=rent[m])
        for m, (c, o, s) in enumerate(own)
    ]
    own_net = [f.own_usd for f in months]
    i = monthly_rate(inputs.discount_rate)
    break_even: int | None = None
    cumulative_own = cumulative_rent = 0.0
    for flow in months:
        cumulative_own += flow.own_usd
        cumulative_rent += flow.rent_usd
        if cumulative_own <= cumulative_rent:
            break_even = flow.month
            break
    return Comparison(
        months=months,
        total_own_usd=math.fsum(own_net),
        total_rent_usd=math.fsum(rent),
        npv_own_usd=npv(own_net, i),
        npv_rent_usd=npv(rent, i),
        break_even_month=break_even,
    )


def hybrid_coefficients(
    inputs: OwnershipInputs, *, horizon_months: int, rent_usd_per_gpu_hour: float
) -> HybridCoefficients:
    """The linear cost coefficients of the hybrid own + rent model (see ``solver.optimise.hybrid``)."""
    factors = discount_factors(inputs.discount_rate, horizon_months)
    idle_only = own_cash_flows(inputs, gpus=1, busy_gpu_hours=[0.0] * horizon_months)
    fixed = math.fsum(sum(flow) * factors[m] for m, flow in enumerate(idle_only))
    extra_busy = busy_energy_usd_per_hour(inputs) - idle_energy_usd_per_hour(inputs)
    return HybridCoefficients(
        owned_fixed_usd_per_gpu=fixed,
        owned_busy_usd_per_hour=[extra_busy * factors[m] for m in range(1, horizon_months + 1)],
        rent_usd_per_hour=[rent_usd_per_gpu_hour * factors[m] for m in range(1, horizon_months + 1)],
        reserved_usd_per_gpu=math.fsum(
            HOURS_PER_MONTH * rent_usd_per_gpu_hour * factors[m] for m in range(1, horizon_months + 1)
        ),
    )
