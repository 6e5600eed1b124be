"""Pricing the configuration grid on arrays agrees with the plain loop it replaced."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.costs.charges import COMPUTE_ONLY_TERMS, NOTHING_MOVED
from solver.optimise.config_grid import ConfigGrid, select

_Supply = tuple[list[float | None], float, int, int, int]  # step hours, price, increment, group, gpu


def _billable(hours: float, increment_s: int) -> float:
    if increment_s <= 0:
        return hours
    return math.ceil(hours * 3600 / increment_s - 1e-9) * increment_s / 3600


def _reference(
    supplies: list[_Supply], deadline: float | None, budget: float | None
) -> tuple[list[int], int, dict[int, int], dict[int, int]]:
    """The scalar loop: rows kept, feasible count, and per GPU the deadline and budget rejections."""
    rows: list[tuple[float, float, int, int]] = []  # cost, hours, index, group
    late: dict[int, tuple[float, int]] = {}  # gpu -> (hours, index): the fastest past the deadline
    dear: dict[int, tuple[float, int]] = {}  # gpu -> (cost, index): the cheapest over the budget
    i = -1
    for steps, price, increment, group, gpu in supplies:
        for units, hours in enumerate(steps, start=1):
            i += 1
            if hours is None:
                continue
            if deadline is not None and hours > deadline:
                if gpu not in late or hours < late[gpu][0]:
                    late[gpu] = (hours, i)
                continue
            cost = price * units * _billable(hours, increment)
            if budget is not None and cost > budget:
                if gpu not in dear or cost < dear[gpu][0]:
                    dear[gpu] = (cost, i)
                continue
            rows.append((cost, hours, i, group))
    keep: set[int] = set()
    best = math.inf
    for _cost, hours, i, _ in sorted(rows):
        if hours < best:
            keep.add(i)
            best = hours
    by_cost: dict[int, tuple[float, float, int]] = {}
    by_time: dict[int, tuple[float, float, int]] = {}
    for cost, hours, i, group in rows:
        by_cost[group] = min(by_cost.get(group, (math.inf, math.inf, 0)), (cost, hours, i))
        by_time[group] = min(by_time.get(group, (math.inf, math.inf, 0)), (hours, cost, i))
    keep.update(v[2] for v in by_cost.values())
    keep.update(v[2] for v in by_time.values())
    return (
        sorted(keep),
        len(rows),
        {g: v[1] for g, v in late.items()},
        {g: v[1] for g, v in dear.items()},
    )


_steps = st.lists(
    st.one_of(st.none(), st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.25, 10.0])), min_size=1, max_size=4
)
_supplies = st.lists(
    st.tuples(
        _steps,
        st.sampled_from([0.5, 1.0, 2.0, 2.5]),
        st.sampled_from([0, 1, 60, 3600]),
        st.integers(0, 3),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(_supplies, st.sampled_from([None, 2.0, 5.0]), st.sampled_from([None, 4.0, 15.0]))
def test_select_matches_the_scalar_loop(
    supplies: list[_Supply], deadline: float | None, budget: float | None
) -> None:
    grid = ConfigGrid()
    for steps, price, increment, group, gpu in supplies:
        grid.add(
            [math.nan if h is None else h for h in steps],
            list(range(1, len(steps) + 1)),
            [2 * u for u in range(1, len(steps) + 1)],
            price=price,
            increment_s=increment,
            group=group,
            gpu=gpu,
            terms=COMPUTE_ONLY_TERMS,
        )
    picked = select(grid, NOTHING_MOVED, deadline_hours=deadline, budget_usd=budget)
    kept, feasible, late, dear = _reference(supplies, deadline, budget)
    assert picked.kept == kept
    assert picked.feasible == feasible
    assert picked.deadline_rejections == sorted(late.values())
    assert picked.budget_rejections == sorted(dear.values())
    assert picked.charges is not None
    for i in kept:  # the loop's cost: with nothing but compute, the price of the billable hours
        supply = grid.supply_of(i)
        _, price, increment, _, _ = supplies[supply]
        units = grid.units[i]
        assert picked.charges.total_usd[i] == pytest.approx(
            price * units * _billable(grid.hours[i], increment)
        )


def test_an_empty_grid_selects_nothing() -> None:
    picked = select(ConfigGrid(), NOTHING_MOVED, deadline_hours=1.0, budget_usd=1.0)
    assert picked.kept == [] and picked.feasible == 0
