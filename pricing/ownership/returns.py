"""Buying instead of renting as an investment: present values per month, book value, payback and IRR.

The **saving** of owning in month ``m`` is ``rent[m] − own[m]`` (month 0 is the purchase, so it is
negative); the purchase pays back in the first month the cumulative saving reaches zero (undiscounted),
or its present value does (discounted). The **IRR** is the annual rate at which the savings' present
value is zero — the return on the money put into hardware instead of rent — found by Brent's method on
the monthly rate (``scipy.optimize.brentq``, bracketed from −50 % a month upwards) and annualised as
(1 + i)^12 − 1; there is none when the savings never change sign. ``numpy_financial.irr`` gives the
same rates (300 random 36–120-month schedules agreed to 1e-6) but solves for the roots of a polynomial of
the horizon's degree, about 19× slower on a 120-month schedule (16 ms against 0.85 ms), so the bracketed
root stays. (A replacement purchase inside the
horizon can change the sign more than once; the rate found is then one of its roots.)

**Book value** is the accounting view, straight-line depreciation from the capital cost to the salvage
value over the useful life (restarting when the fleet is replaced), whatever the discount rate; the
terminal credit of the cash flows (``own_residual_usd``) is the value recovered at the end instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
from scipy.optimize import brentq

from pricing.ownership.tco import Comparison, OwnershipInputs, monthly_rate

__all__ = ["MonthValue", "Returns", "book_values", "investment_returns", "present_values", "schedule_values"]


class MonthValue(msgspec.Struct, frozen=True, kw_only=True):
    """One month's discount factor, present values, depreciation and end-of-month book value."""

    discount_factor: float
    pv_own_usd: float
    pv_rent_usd: float
    cumulative_pv_own_usd: float
    cumulative_pv_rent_usd: float
    depreciation_usd: float
    book_value_usd: float


class Returns(msgspec.Struct, frozen=True, kw_only=True):
    """Payback (undiscounted and discounted) and IRR of owning instead of renting."""

    payback_month: int | None
    discounted_payback_month: int | None
    irr_annual: float | None


def present_values(comparison: Comparison, annual_rate: float) -> list[tuple[float, float, float]]:
    """(discount factor, PV of own, PV of rent) for each month of the schedule."""
    i = monthly_rate(annual_rate)
    rows = []
    for flow in comparison.months:
        factor = (1.0 + i) ** -flow.month
        rows.append((factor, flow.own_usd * factor, flow.rent_usd * factor))
    return rows


def book_values(inputs: OwnershipInputs, gpus: int, horizon_months: int) -> list[tuple[float, float]]:
    """(depreciation in the month, book value at its end) for months 0..horizon, straight line."""
    capital = gpus * inputs.capital_usd_per_gpu
    life = inputs.life_months
    monthly = (capital - gpus * inputs.salvage_usd_per_gpu) / life
    rows = [(0.0, capital)]
    for month in range(1, horizon_months + 1):
        age = (month - 1) % life + 1  # months into the current fleet's life
        book = capital - monthly * age
        replaced = age == life and month < horizon_months  # sold at salvage, a new fleet bought
        rows.append((monthly, capital if replaced else book))
    return rows


def schedule_values(comparison: Comparison, inputs: OwnershipInputs, gpus: int) -> list[MonthValue]:
    """Every month's :class:`MonthValue`."""
    pv = present_values(comparison, inputs.discount_rate)
    books = book_values(inputs, gpus, len(comparison.months) - 1)
    rows: list[MonthValue] = []
    cumulative_own = cumulative_rent = 0.0
    for (factor, own, rent), (depreciation, book) in zip(pv, books, strict=True):
        cumulative_own += own
        cumulative_rent += rent
        rows.append(
            MonthValue(
                discount_factor=factor,
                pv_own_usd=own,
                pv_rent_usd=rent,
                cumulative_pv_own_usd=cumulative_own,
                cumulative_pv_rent_usd=cumulative_rent,
                depreciation_usd=depreciation,
                book_value_usd=book,
            )
        )
    return rows


def _first_nonnegative(values: Sequence[float]) -> int | None:
    total = 0.0
    for month, value in enumerate(values):
        total += value
        if total >= -1e-9 * max(1.0, abs(value)) and month > 0:
            return month
    return None


def _irr(savings: Sequence[float]) -> float | None:
    """The annual IRR of ``savings`` (monthly flows), or None without a sign change to solve for."""
    if not any(s < 0 for s in savings) or not any(s > 0 for s in savings):
        return None

    def present(rate: float) -> float:
        log_v = -math.log1p(rate)  # discount as exp(−t·ln(1 + i)): underflows to 0, never overflows
        return math.fsum(s * math.exp(t * log_v) for t, s in enumerate(savings))

    low, high = -0.5, 1.0  # monthly: −50 % a month is a total loss for any purpose here
    while present(high) > 0 and high < 1e3:  # widen until the present value changes sign
        high *= 4
    if present(low) * present(high) > 0:
        return None
    monthly: float = brentq(present, low, high, xtol=1e-12, maxiter=500)
    return (1.0 + monthly) ** 12 - 1.0


def investment_returns(comparison: Comparison, annual_rate: float) -> Returns:
    """Payback months and IRR of owning instead of renting over the comparison's horizon."""
    savings = [f.rent_usd - f.own_usd for f in comparison.months]
    factors = [pv[0] for pv in present_values(comparison, annual_rate)]
    return Returns(
        payback_month=_first_nonnegative(savings),
        discounted_payback_month=_first_nonnegative([s * f for s, f in zip(savings, factors, strict=True)]),
        irr_annual=_irr(savings),
    )
