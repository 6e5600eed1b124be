"""Pricing every (supply, GPU count) configuration of a plan at once, and keeping those that can matter.

A plan looks at thousands of configurations: each supply's price and billing increment applied to the
GPU counts its shape can run (with their hours). This module does that arithmetic on arrays, in the
same order of operations as a scalar loop (so the floats are identical), and selects:

* the feasible ones (hours within the deadline, cost within the budget), where a row's cost is its
  complete charge (:mod:`solver.costs.charges`: compute, setup, checkpoints, failures, preemption, billing
  rounding, storage and data transfer) and its hours the wall time that charge pays for;
* for each GPU type, the deadline (and budget) rejection that tried the most GPUs, first on a tie;
* the rows no other feasible row beats on both cost and hours, and each (GPU, seller, kind of price)
  group's best by (cost, hours) and by (hours, cost) — ties to the row found first; the kind of price
  is part of the group so that each kind's own optimum survives (it is shown beside the choice).
"""

from __future__ import annotations

import bisect
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from solver.costs.charges import Charges, JobTerms, SupplyTerms, complete_charges

__all__ = ["ConfigGrid", "Selection", "select"]

_Floats = npt.NDArray[np.float64]
_Ints = npt.NDArray[np.int64]


class ConfigGrid(msgspec.Struct, kw_only=True):
    """Configurations as parallel columns, appended one supply at a time: the steps' columns, and each
    supply's price, billing increment, (GPU, seller, kind of price) group number, GPU number and step count.

    ``hours`` is NaN where a step cannot run (it is then neither feasible nor a deadline rejection).
    """

    hours: list[float] = msgspec.field(default_factory=list)
    units: list[int] = msgspec.field(default_factory=list)
    gpu_count: list[int] = msgspec.field(default_factory=list)
    starts: list[int] = msgspec.field(default_factory=list)
    price: list[float] = msgspec.field(default_factory=list)
    increment_s: list[int] = msgspec.field(default_factory=list)
    group: list[int] = msgspec.field(default_factory=list)
    gpu: list[int] = msgspec.field(default_factory=list)
    terms: list[SupplyTerms] = msgspec.field(default_factory=list)

    def add(
        self,
        hours: list[float],
        units: list[int],
        gpu_count: list[int],
        *,
        price: float,
        increment_s: int,
        group: int,
        gpu: int,
        terms: SupplyTerms,
    ) -> None:
        """The steps of one supply (its shape's hours, units and GPU counts) at its price and billing."""
        self.starts.append(len(self.hours))
        self.hours.extend(hours)
        self.units.extend(units)
        self.gpu_count.extend(gpu_count)
        self.price.append(price)
        self.increment_s.append(increment_s)
        self.group.append(group)
        self.gpu.append(gpu)
        self.terms.append(terms)

    def supply_of(self, row: int) -> int:
        """The position (in the order added) of the supply a row belongs to."""
        return bisect.bisect_right(self.starts, row) - 1


class Selection(msgspec.Struct, frozen=True, kw_only=True):
    """Indices into the grid: the rows kept (in grid order), and per GPU type the most telling
    deadline and budget rejections; with the charges of every row."""

    kept: list[int]
    feasible: int
    deadline_rejections: list[int]
    budget_rejections: list[int]
    charges: Charges | None


_NO_LIMIT: Final = np.inf


def select(
    grid: ConfigGrid, job: JobTerms, *, deadline_hours: float | None, budget_usd: float | None
) -> Selection:
    """Price the grid and pick what can matter (see the module docstring)."""
    hours = np.asarray(grid.hours, dtype=np.float64)
    if hours.size == 0:
        return Selection(kept=[], feasible=0, deadline_rejections=[], budget_rejections=[], charges=None)
    sizes = np.diff(np.r_[grid.starts, hours.size])  # rows of each supply

    def per_row(column: list[float] | list[int], dtype: type) -> npt.NDArray[Any]:
        """A per-supply column repeated over that supply's rows."""
        return np.repeat(np.asarray(column, dtype=dtype), sizes)

    counts = np.asarray(grid.gpu_count, dtype=np.int64)
    charges = complete_charges(
        hours,
        np.asarray(grid.units, dtype=np.float64),
        counts.astype(np.float64),
        per_row(grid.price, np.float64),
        per_row(grid.increment_s, np.float64),
        grid.terms,
        sizes,
        job,
    )
    wall, cost = charges.wall_hours, charges.total_usd
    runs = ~np.isnan(hours)
    deadline = _NO_LIMIT if deadline_hours is None else deadline_hours
    budget = _NO_LIMIT if budget_usd is None else budget_usd
    late = runs & (charges.deadline_hours > deadline)
    dear = runs & ~late & (cost > budget)
    ok = runs & ~late & ~dear
    gpu = per_row(grid.gpu, np.int64)
    return Selection(
        kept=_kept(np.flatnonzero(ok), wall, cost, per_row(grid.group, np.int64)),
        feasible=int(ok.sum()),
        deadline_rejections=_most_telling(np.flatnonzero(late), wall, gpu),
        budget_rejections=_most_telling(np.flatnonzero(dear), cost, gpu),
        charges=charges,
    )


def _first_per(keys: _Ints, order: _Ints) -> _Ints:
    """The first index of ``order`` for each distinct value of ``keys[order]`` (``order`` sorts keys)."""
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return order[starts]


def _most_telling(rows: _Ints, closest: _Floats, gpu: _Ints) -> list[int]:
    """Per GPU type among ``rows``: the one with the least ``closest`` (the fastest for a deadline, the
    cheapest for a budget: what a plan restricted to that GPU would come closest with), the first
    found on a tie."""
    if rows.size == 0:
        return []
    order = rows[np.lexsort((rows, closest[rows], gpu[rows]))]
    return sorted(_first_per(gpu, order).tolist())


def _kept(rows: _Ints, hours: _Floats, cost: _Floats, group: _Ints) -> list[int]:
    """The Pareto rows over (cost, hours) and each group's best by (cost, hours) and (hours, cost)."""
    if rows.size == 0:
        return []
    by_cost = rows[np.lexsort((rows, hours[rows], cost[rows]))]
    sorted_hours = hours[by_cost]
    best_before = np.r_[np.inf, np.minimum.accumulate(sorted_hours)[:-1]]
    keep = set(by_cost[sorted_hours < best_before].tolist())
    keep.update(_first_per(group, rows[np.lexsort((rows, hours[rows], cost[rows], group[rows]))]).tolist())
    keep.update(_first_per(group, rows[np.lexsort((rows, cost[rows], hours[rows], group[rows]))]).tolist())
    return sorted(keep)
