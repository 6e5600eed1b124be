"""An exhaustive enumeration of small portfolios: every placement of every job × every count of units
bought × every instance count per serving bucket, checked against every constraint; written from the
conventions in :mod:`solver.portfolio.model`, independently of the MILP and its placement code.

A job that may split also runs as every non-empty set of the buckets of its window on each option:
the set is feasible when its rooms (the window's hours in each bucket less the restart) add up to the
option's reserved hours, and it costs the option's cost plus one restart per stage. The split work's
spread over the set is free, so the oracle takes no budgets beside a split job (it asserts so).
``oracle_subset`` lets each job also be left out and ranks schedules by the ``priority + 1`` kept, then
the cost."""

from __future__ import annotations

import itertools
import math

import pytest

from solver.portfolio import (
    InfeasiblePortfolio,
    JobOption,
    PortfolioProblem,
    PortfolioResult,
    ServingOption,
    plan_portfolio,
)

__all__ = ["matches_oracle", "oracle_optimum", "oracle_subset"]

Run = tuple[JobOption, list[tuple[int, float]]]
"""An option and, per bucket it holds, the cost that falls there."""


def _runs(problem: PortfolioProblem, j: int) -> list[Run]:
    job, b = problem.jobs[j], problem.bucket_hours
    limit = (
        problem.horizon_hours if job.deadline_hour is None else min(job.deadline_hour, problem.horizon_hours)
    )
    runs = []
    for option in job.options:
        for s in range(problem.buckets):
            start = max(s * b, job.earliest_start_hour)
            if start >= (s + 1) * b and s * b < job.earliest_start_hour:
                continue  # the earliest start is after this bucket
            if start + option.span_hours <= limit + 1e-9:
                held = _held(start, start + option.span_hours, b)
                runs.append((option, [(t, option.cost_usd * share) for t, share in held]))
    return runs + (_split_runs(problem, j, limit) if job.splittable else [])


def _split_runs(problem: PortfolioProblem, j: int, limit: float) -> list[Run]:
    job, b = problem.jobs[j], problem.bucket_hours
    assert all(budget is None for budget in problem.budgets), "the oracle takes no budgets beside a split job"
    rooms = {}
    for t in range(problem.buckets):
        room = min(limit, (t + 1) * b) - max(t * b, job.earliest_start_hour) - job.restart_hours
        if room > 1e-9:
            rooms[t] = room
    runs: list[Run] = []
    for option in job.options:
        restart = option.cost_usd / option.hours * job.restart_hours
        for k in range(1, len(rooms) + 1):
            for chosen in itertools.combinations(sorted(rooms), k):
                if sum(rooms[t] for t in chosen) >= option.span_hours - 1e-9:
                    share = option.cost_usd / k  # spread evenly: no budget reads it
                    runs.append((option, [(t, share + restart) for t in chosen]))
    return runs


def _held(start: float, end: float, b: float) -> list[tuple[int, float]]:
    """(bucket, share of the run) for every bucket the run touches."""
    out = []
    t = int(start // b)
    while t * b < end - 1e-9 or t == int(start // b):
        overlap = min(end, (t + 1) * b) - max(start, t * b)
        out.append((t, overlap / (end - start)))
        t += 1
    return out


def _matches(scope: str, key: str, option: JobOption | ServingOption) -> bool:
    if option.acquisition != "rent":
        return False
    return {"offer": option.supply_id, "provider": option.provider, "gpu": option.gpu_id}[scope] == key


def _evaluate(
    problem: PortfolioProblem,
    runs: tuple[Run | None, ...],
    bought: tuple[int, ...],
    serving: tuple[tuple[int, ...], ...],
) -> float | None:
    b, n = problem.bucket_hours, problem.buckets
    spend = [0.0] * n
    owned: dict[tuple[str, int], int] = {}
    capped: dict[tuple[int, int], int] = {}

    def use(option: JobOption | ServingOption, t: int, gpus: int, instances: int) -> None:
        if option.acquisition == "own":
            owned[(option.gpu_id, t)] = owned.get((option.gpu_id, t), 0) + gpus
        for c, cap in enumerate(problem.caps):
            if _matches(cap.scope, cap.key, option):
                capped[(c, t)] = capped.get((c, t), 0) + instances

    for run in runs:
        if run is None:
            continue
        option, held = run
        for t, usd in held:
            spend[t] += usd
            use(option, t, option.gpu_count, option.instances)
    for d, demand in enumerate(problem.serving):
        for t in range(n):
            counts = serving[d * n + t]
            if (
                sum(o.requests_per_s * k for o, k in zip(demand.options, counts, strict=True))
                < demand.requests_per_s[t] - 1e-9
            ):
                return None
            for o, k in zip(demand.options, counts, strict=True):
                spend[t] += o.usd_per_instance_hour * b * k
                use(o, t, o.gpus_per_instance * k, k)
    have = {p.gpu_id: p.gpus for p in problem.owned}
    for option, units in zip(problem.buy, bought, strict=True):
        have[option.gpu_id] = have.get(option.gpu_id, 0) + option.unit_gpus * units
        for t in range(n):
            spend[t] += option.usd_per_unit * units / n
    if any(gpus > have.get(g, 0) for (g, _t), gpus in owned.items()):
        return None
    if any(k > problem.caps[c].max_instances for (c, _t), k in capped.items()):
        return None
    for t, budget in enumerate(problem.budgets[:n]):
        if budget is not None and spend[t] > budget + 1e-6:
            return None
    return sum(spend)


def _serving_choices(problem: PortfolioProblem) -> list[list[tuple[int, ...]]]:
    cells = []
    for demand in problem.serving:
        for t in range(problem.buckets):
            rate = demand.requests_per_s[t]
            ranges = [range(math.ceil(rate / o.requests_per_s) + 1) for o in demand.options]
            cells.append(list(itertools.product(*ranges)))
    return cells


def _best(problem: PortfolioProblem, droppable: bool) -> tuple[int, float] | None:
    per_job: list[list[Run | None]] = [
        [*_runs(problem, j), *([None] if droppable else [])] for j in range(len(problem.jobs))
    ]
    buys = [range(o.max_units + 1) for o in problem.buy]
    best: tuple[int, float] | None = None
    for runs in itertools.product(*per_job):
        value = sum(job.priority + 1 for job, run in zip(problem.jobs, runs, strict=True) if run is not None)
        for bought in itertools.product(*buys):
            for serving in itertools.product(*_serving_choices(problem)):
                cost = _evaluate(problem, runs, bought, serving)
                if cost is not None and (best is None or (-value, cost) < (-best[0], best[1])):
                    best = (value, cost)
    return best


def oracle_optimum(problem: PortfolioProblem) -> float | None:
    """The least total cost of any schedule that meets every constraint (``None``: there is none)."""
    best = _best(problem, droppable=False)
    return None if best is None else best[1]


def oracle_subset(problem: PortfolioProblem) -> tuple[int, float] | None:
    """The most ``priority + 1`` any schedule keeps (jobs may be left out), and its least cost."""
    return _best(problem, droppable=True)


def matches_oracle(problem: PortfolioProblem) -> PortfolioResult | None:
    """Plan ``problem`` and check its optimum is the oracle's (``None``: both find no schedule)."""
    expected = oracle_optimum(problem)
    if expected is None:
        with pytest.raises(InfeasiblePortfolio):
            plan_portfolio(problem)
        return None
    result = plan_portfolio(problem)
    assert result.status == "optimal"
    assert result.objective_usd == pytest.approx(expected, rel=1e-6, abs=1e-6)
    return result
