from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from solver.optimise.hybrid import HybridProblem, enumerate_hybrid, evaluate_fleet, solve_hybrid

CAP = 730.0


def problem(
    demand: list[float],
    *,
    fixed: float = 1500.0,
    busy: float = 0.1,
    rent: float = 2.0,
    billing: Literal["per_busy_hour", "reserved"] = "per_busy_hour",
    reserved: float | None = None,
) -> HybridProblem:
    months = len(demand)
    return HybridProblem(
        demand_gpu_hours=demand,
        hours_per_gpu_month=CAP,
        owned_fixed_usd_per_gpu=fixed,
        owned_busy_usd_per_hour=[busy] * months,
        rent_usd_per_hour=[rent] * months,
        rent_billing=billing,
        reserved_usd_per_gpu=reserved if reserved is not None else rent * 0.6 * CAP * months,
    )


def test_base_load_is_owned_and_spikes_rented() -> None:
    # two GPUs busy every month, a third and fourth only in two months of twelve
    demand = [2 * CAP] * 10 + [4 * CAP] * 2
    # an owned GPU costs 14,400 for the year + 0.1 per busy hour; renting it for a whole month costs
    # 1,460, so a GPU busy every month (17,520) is worth owning and one busy two months (2,920) is not
    result = solve_hybrid(problem(demand, fixed=12 * 1200.0))
    assert result.best.owned_gpus == 2
    assert result.best.rented_gpu_hours == [0.0] * 10 + [2 * CAP] * 2
    assert result.outcome is not None and result.outcome.status == "optimal"
    assert result.best.cost_usd <= min(result.all_own.cost_usd, result.all_rent.cost_usd)
    assert result.all_own.owned_gpus == 4 and result.all_rent.owned_gpus == 0


def test_all_rent_and_all_own_are_the_extremes() -> None:
    demand = [100.0, 1500.0, 700.0]
    p = problem(demand)
    assert p.peak_gpus == 3
    own = evaluate_fleet(p, 3)
    rent = evaluate_fleet(p, 0)
    assert own is not None and sum(own.rented_gpu_hours) == 0
    assert rent is not None and sum(rent.served_gpu_hours) == 0
    assert rent.cost_usd == pytest.approx(2.0 * sum(demand))
    assert own.cost_usd == pytest.approx(3 * 1500.0 + 0.1 * sum(demand))


def test_reserved_rent_buys_whole_gpus() -> None:
    demand = [CAP * 1.5, CAP * 0.2]
    p = problem(demand, billing="reserved", reserved=1000.0, fixed=5000.0)
    result = solve_hybrid(p)
    assert (result.best.owned_gpus, result.best.reserved_gpus) == (0, 2)
    assert result.best.cost_usd == pytest.approx(2000.0)
    assert evaluate_fleet(p, 0, 1) is None  # one reserved GPU cannot serve 1.5 GPU-months


demands = st.lists(st.floats(0.0, 4 * CAP, allow_nan=False), min_size=1, max_size=12).filter(
    lambda d: max(d) > 0
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    demand=demands,
    fixed=st.floats(0.0, 5000.0),
    busy=st.floats(0.0, 3.0),
    rent=st.floats(0.1, 5.0),
    billing=st.sampled_from(["per_busy_hour", "reserved"]),
    reserved=st.floats(100.0, 20_000.0),
)
@example(demand=[1.19e-07], fixed=0.0, busy=0.0, rent=1.0, billing="reserved", reserved=100.0)  # small demand
@example(demand=[1.5e-242], fixed=0.0, busy=0.0, rent=1.0, billing="reserved", reserved=100.0)  # negligible
@example(
    demand=[732.0, 1e-06], fixed=1.0, busy=0.0, rent=1.0, billing="per_busy_hour", reserved=100.0
)  # tiny month
@example(
    demand=[731.0, 1461.0], fixed=731.0, busy=0.0, rent=0.99999, billing="per_busy_hour", reserved=100.0
)  # near tie
def test_milp_agrees_with_enumeration(
    demand: list[float],
    fixed: float,
    busy: float,
    rent: float,
    billing: Literal["per_busy_hour", "reserved"],
    reserved: float,
) -> None:
    p = problem(demand, fixed=fixed, busy=busy, rent=rent, billing=billing, reserved=reserved)
    milp = solve_hybrid(p)
    oracle = enumerate_hybrid(p)
    assert milp.outcome is not None and milp.outcome.status == "optimal"
    assert milp.best.cost_usd == pytest.approx(oracle.best.cost_usd, rel=1e-7, abs=1e-6)
    assert milp.outcome.objective == pytest.approx(oracle.best.cost_usd, rel=1e-6, abs=1e-4)
    assert oracle.best.cost_usd <= min(oracle.all_own.cost_usd, oracle.all_rent.cost_usd) + 1e-6
    for month, d in enumerate(demand):
        served, rented = milp.best.served_gpu_hours[month], milp.best.rented_gpu_hours[month]
        assert served + rented == pytest.approx(d)
        assert served <= milp.best.owned_gpus * CAP + 1e-6
        if billing == "reserved":
            assert rented <= milp.best.reserved_gpus * CAP + 1e-6
