"""A job's options for the portfolio: the job planner's candidates, repriced and pruned to a few.

The planner's enumeration (:func:`~solver.optimise.planner.enumerate_job` without the deadline, with the service's
per-snapshot :class:`~solver.optimise.plan_cache.PlanCache`, so a portfolio of many jobs of the same
models derives each layout once) gives every configuration that could matter. The caller prices owned
supplies at the pool's marginal running cost per busy GPU-hour before enumerating (the capital is spent;
a bought unit's capital is the MILP's own decision); owned candidates of a GPU type not in
``owned_rates`` (nobody owns or may buy it) are dropped.

Pruning, documented because it bounds the MILP: candidates that cannot fit the job's window are dropped;
the others are grouped by (acquisition, GPU type,
provider); each group keeps its Pareto front of (cost, reserved hours) — a dominated candidate can never
be the better choice under any window or cap of its group — and the options kept are the ``top_k``
cheapest of those fronts with at most ``per_group`` from one group (so caps on one provider or GPU find
another), plus the fastest candidate of all (the one a tight deadline needs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from solver.optimise.candidates import Candidate
from solver.portfolio.model import JobOption

__all__ = ["PER_GROUP", "TOP_K", "OptionPool", "job_options"]

TOP_K = 6
"""Options kept per job (plus the fastest) by default."""
PER_GROUP = 2
"""At most this many of one (acquisition, GPU type, provider) group."""


def _span(c: Candidate) -> float:
    """The hours a schedule reserves for a candidate: its 90 %-confidence wall hours, at least its hours."""
    return max(c.hours, c.charges.deadline_hours)


def _option(c: Candidate) -> JobOption:
    supply = c.supply
    span = _span(c)
    return JobOption(
        option_id=f"{supply.supply_id}×{c.units}",
        acquisition=supply.acquisition,
        gpu_id=supply.gpu_id,
        gpu_count=c.gpu_count,
        instances=c.units,
        supply_id=supply.supply_id,
        provider=supply.provider,
        pricing=supply.pricing,
        hours=c.hours,
        span_hours=span,
        cost_usd=c.cost_usd,
        layout=c.layout.text(),
    )


class OptionPool:
    """One workload's candidates grouped and ordered once, so that jobs sharing a workload but not a window
    (or a priority) pick their options without grouping, sorting and converting them again; a candidate
    becomes a :class:`JobOption` only once it is on a front. The same picks as grouping afresh: each group
    is ordered by (hours, cost) as :func:`~solver.optimise.planner.pareto_front` orders it, and a stable
    order keeps its ties when the window filters some out."""

    def __init__(self, candidates: Sequence[Candidate], owned_rates: Mapping[str, float]) -> None:
        groups: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
        for c in candidates:
            if c.supply.acquisition == "own" and c.supply.gpu_id not in owned_rates:
                continue
            groups[(c.supply.acquisition, c.supply.gpu_id, c.supply.provider or "")].append(c)
        self.groups = {
            key: sorted(group, key=lambda c: (c.hours, c.cost_usd)) for key, group in groups.items()
        }
        self._options: dict[int, JobOption] = {}

    def _option(self, c: Candidate) -> JobOption:
        found = self._options.get(id(c))
        if found is None:
            found = self._options[id(c)] = _option(c)
        return found

    def fronts(self, max_span_hours: float | None) -> dict[tuple[str, str, str], list[JobOption]]:
        """Each group's Pareto front of (cost, hours) among the candidates that fit ``max_span_hours``."""
        fronts = {}
        for key, ordered in self.groups.items():
            front, best = [], float("inf")
            for c in ordered:
                if (max_span_hours is None or _span(c) <= max_span_hours) and c.cost_usd < best:
                    front.append(self._option(c))
                    best = c.cost_usd
            if front:
                fronts[key] = front
        return fronts

    def pick(
        self, *, max_span_hours: float | None = None, top_k: int = TOP_K, per_group: int = PER_GROUP
    ) -> list[JobOption]:
        """The options the MILP chooses among for one job, cheapest first (see the module docstring)."""
        fronts = self.fronts(max_span_hours)
        taken: dict[tuple[str, str, str], int] = defaultdict(int)
        kept: list[JobOption] = []
        for key, option in sorted(
            ((k, o) for k, front in fronts.items() for o in front),
            key=lambda ko: (ko[1].cost_usd, ko[1].span_hours),
        ):
            if len(kept) < top_k and taken[key] < per_group:
                kept.append(option)
                taken[key] += 1
        everything = [o for front in fronts.values() for o in front]
        fastest = min(everything, key=lambda o: (o.span_hours, o.cost_usd), default=None)
        if fastest is not None and fastest not in kept:
            kept.append(fastest)
        return kept


def job_options(
    candidates: Sequence[Candidate],
    owned_rates: Mapping[str, float],
    *,
    max_span_hours: float | None = None,
    top_k: int = TOP_K,
    per_group: int = PER_GROUP,
) -> list[JobOption]:
    """The options the MILP chooses among for one job, cheapest first (see the module docstring); those
    longer than ``max_span_hours`` (the job's window) are dropped first, since they can never be placed."""
    return OptionPool(candidates, owned_rates).pick(
        max_span_hours=max_span_hours, top_k=top_k, per_group=per_group
    )
