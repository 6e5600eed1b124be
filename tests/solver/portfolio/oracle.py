"""An exhaustive enumeration of small portfolios: every placement of every job × every count of units
bought × every instance count per serving bucket, checked against every constraint; written from the
conventions in :mod:`solver.portfolio.model`, independently of the MILP and its placement code."""

from __future__ import annotations

import itertools
import math

from solver.portfolio import JobOption, PortfolioProblem, ServingOption

__all__ = ["oracle_optimum"]

Run = tuple[JobOption, float, float]  # option, start hour, end hour


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
                runs.append((option, start, start + option.span_hours))
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
    runs: tuple[Run, ...],
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

    for option, start, end in runs:
        for t, share in _held(start, end, b):
            spend[t] += option.cost_usd * share
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


def oracle_optimum(problem: PortfolioProblem) -> float | None:
    """The least total cost of any schedule that meets every constraint (``None``: there is none)."""
    per_job = [_runs(problem, j) for j in range(len(problem.jobs))]
    buys = [range(o.max_units + 1) for o in problem.buy]
    best: float | None = None
    for runs in itertools.product(*per_job):
        for bought in itertools.product(*buys):
            for serving in itertools.product(*_serving_choices(problem)):
                cost = _evaluate(problem, runs, bought, serving)
                if cost is not None and (best is None or cost < best):
                    best = cost
    return best
