"""Owning as an investment: present values, straight-line book value, payback and IRR."""

from __future__ import annotations

import math

import pytest

from pricing.ownership import tco
from pricing.ownership.returns import book_values, investment_returns, schedule_values
from tests.pricing.ownership.test_tco import inputs

BUSY = [8 * 0.9 * 730.0] * 60


def _compare(rent: float, **changes: float) -> tco.Comparison:
    return tco.compare(
        inputs(**changes), gpus=8, busy_gpu_hours=BUSY, rent_usd_per_gpu_hour=rent, billing="per_busy_hour"
    )


def test_payback_is_the_break_even_month_and_discounting_delays_it() -> None:
    result = _compare(4.0)
    returns = investment_returns(result, 0.07)
    assert returns.payback_month == result.break_even_month is not None
    assert returns.discounted_payback_month is not None
    assert returns.discounted_payback_month >= returns.payback_month
    assert investment_returns(_compare(4.0), 0.0).discounted_payback_month == returns.payback_month


def test_the_irr_zeroes_the_present_value_of_the_savings() -> None:
    result = _compare(4.0)
    returns = investment_returns(result, 0.07)
    assert returns.irr_annual is not None and returns.irr_annual > 0.07  # it pays back within the horizon
    monthly = (1 + returns.irr_annual) ** (1 / 12) - 1
    savings = [f.rent_usd - f.own_usd for f in result.months]
    assert math.fsum(s / (1 + monthly) ** t for t, s in enumerate(savings)) == pytest.approx(0, abs=1e-3)
    # discounting the savings at the IRR or above makes owning no better than renting
    assert (result.npv_rent_usd - result.npv_own_usd > 0) == (returns.irr_annual > 0.07)


def test_no_irr_or_payback_when_owning_never_saves() -> None:
    returns = investment_returns(_compare(0.2), 0.07)
    assert returns.payback_month is None and returns.discounted_payback_month is None
    assert returns.irr_annual is None or returns.irr_annual < 0


def test_book_value_falls_straight_to_the_salvage_and_restarts_on_replacement() -> None:
    x = inputs(useful_life_years=2.0, residual_fraction=0.1)
    rows = book_values(x, 4, 36)
    capital, salvage = 4 * x.capital_usd_per_gpu, 4 * x.salvage_usd_per_gpu
    assert rows[0] == (0.0, capital)
    assert rows[12][1] == pytest.approx(capital - (capital - salvage) / 2)
    assert rows[24][1] == pytest.approx(capital)  # sold at salvage and a new fleet bought
    assert rows[23][1] == pytest.approx(salvage + (capital - salvage) / 24)
    assert all(d == pytest.approx((capital - salvage) / 24) for d, _ in rows[1:])


def test_present_values_sum_to_the_npvs() -> None:
    result = _compare(3.0)
    values = schedule_values(result, inputs(), 8)
    assert values[-1].cumulative_pv_own_usd == pytest.approx(result.npv_own_usd)
    assert values[-1].cumulative_pv_rent_usd == pytest.approx(result.npv_rent_usd)
    assert values[0].discount_factor == 1 and 0 < values[-1].discount_factor < 1
