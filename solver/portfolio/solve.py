"""Plan a portfolio: check every job has a window, solve the MILP, explain the answer (or why there is none).

With ``on_infeasible="drop_lowest_priority"`` a portfolio that cannot be met whole is solved twice on
the model with a binary per job that leaves it out: first the least value left out (each job weighing
its ``priority + 1``, so a job of priority 0 still counts), then, with that value kept, the least cost.
A job no option can finish inside its window is left out before the MILP."""

from __future__ import annotations

import msgspec

from solver.optimise.mip import BACKEND
from solver.portfolio.explain import (
    Usage,
    alone_usd,
    binding,
    cheapest,
    deadline_fix,
    relaxations,
    why_dearer,
)
from solver.portfolio.extract import Solution, read
from solver.portfolio.milp import Built, build, dropped_value, solve_built, total_cost
from solver.portfolio.model import (
    BindingConstraint,
    DroppedJob,
    InfeasiblePortfolio,
    JobSchedule,
    PortfolioProblem,
    PortfolioResult,
)
from solver.portfolio.placements import placements, stages

__all__ = ["plan_portfolio"]

_Outcome = tuple[str, float | None, float, str]
"""(status, gap, solve ms, message) of the solves behind an answer."""


def _schedules(s: Solution) -> tuple[list[JobSchedule], list[BindingConstraint]]:
    """Each placed job's schedule, and the constraints that forced a job off its cheapest option."""
    p = s.built.problem
    out, forced = [], []
    for j, job in enumerate(p.jobs):
        if j not in s.placed:
            continue
        place = s.placed[j]
        option = job.options[place.option]
        best = cheapest(p, j)
        why, blocked = why_dearer(s, j, place)
        forced.extend([] if blocked is None else [blocked])
        out.append(
            JobSchedule(
                job=job.name,
                option=option,
                start_bucket=place.bucket,
                start_hour=place.start,
                end_hour=place.end,
                cost_usd=place.cost(option),
                stages=stages(p, place),
                cheapest_alone_usd=option.cost_usd if best is None else job.options[best.option].cost_usd,
                why=why,
            )
        )
    return out, forced


def _infeasible(problem: PortfolioProblem) -> InfeasiblePortfolio:
    """Solve the elastic model: its slacks name the constraints to relax and the jobs they hold."""
    elastic = build(problem, elastic=True)
    outcome = solve_built(elastic)
    if outcome.objective is None:
        return InfeasiblePortfolio(f"the portfolio has no schedule ({outcome.status}: {outcome.message})", [])
    jobs = relaxations(Solution(elastic))
    names = ", ".join(j.job for j in jobs) or "serving"
    return InfeasiblePortfolio(f"no schedule meets every cap, budget and owned capacity: {names}", jobs)


def _result(built: Built, outcome: _Outcome, dropped: list[DroppedJob]) -> PortfolioResult:
    status, gap, solve_ms, message = outcome
    s, serving, buckets = read(built)
    problem = built.problem
    schedules, forced = _schedules(s)
    placed = msgspec.structs.replace(problem, jobs=[problem.jobs[j] for j in sorted(s.placed)])
    return PortfolioResult(
        status="optimal" if status == "optimal" else "time_limited",
        backend=BACKEND,
        objective_usd=sum(b.total_usd for b in buckets),
        gap=gap,
        solve_ms=solve_ms,
        build_ms=built.build_ms,
        variables=built.lp.numVariables(),
        constraints=built.lp.numConstraints(),
        message=message,
        schedules=schedules,
        serving=serving,
        buckets=buckets,
        bought={g: n for g, n in s.bought.items() if n > 0},
        bought_usd=sum(o.usd_per_unit * s.bought.get(o.gpu_id, 0) for o in problem.buy),
        alone_usd=alone_usd(placed),
        binding=[*binding(s), *forced],
        dropped=sorted(dropped, key=lambda d: (d.priority, d.job)),
    )


def _why_left_out(s: Solution, j: int) -> DroppedJob:
    """Why a job the value-first solve left out: what blocks its cheapest placement beside the rest."""
    p = s.built.problem
    job, usage = p.jobs[j], Usage(s)
    by_cost = sorted(placements(p, j), key=lambda pl: job.options[pl.option].cost_usd)
    blocked = ((pl, usage.blocker(job.options[pl.option], pl)) for pl in by_cost)
    first = next(((pl, b) for pl, b in blocked if b is not None), None)
    if first is None:
        what = "it fits only if jobs worth more are left out"
    else:
        pl, b = first
        what = f"its cheapest option ({job.options[pl.option].option_id}) from bucket {pl.bucket} is blocked: {b.detail}"
    return DroppedJob(
        job=job.name, priority=job.priority, reason=f"jobs of more total priority come first; {what}"
    )


def _drop_lowest(problem: PortfolioProblem, left: list[DroppedJob]) -> PortfolioResult:
    """The most valuable subset of ``problem``'s jobs, at the least cost (see the module docstring)."""
    built = build(problem)
    outcome = solve_built(built)
    if outcome.objective is not None and outcome.status in ("optimal", "time_limited"):
        return _result(built, (outcome.status, outcome.gap, outcome.solve_ms, outcome.message), left)
    built = build(problem, droppable=True)
    built.lp.setObjective(dropped_value(built))
    value = solve_built(built)
    if value.objective is None:
        raise _infeasible(problem)
    built.lp += dropped_value(built) <= value.objective + 0.5, "value_kept"
    built.lp.setObjective(total_cost(built))
    cost = solve_built(built)
    if cost.objective is None:
        raise _infeasible(problem)
    s = Solution(built)
    limited = "time_limited" if "time_limited" in (value.status, cost.status) else "optimal"
    message = "; ".join(m for m in (value.message, cost.message) if m)
    outcome_of_both = (limited, cost.gap, value.solve_ms + cost.solve_ms, message)
    return _result(built, outcome_of_both, [*left, *(_why_left_out(s, j) for j in s.dropped)])


def plan_portfolio(problem: PortfolioProblem) -> PortfolioResult:
    """The cheapest schedule of ``problem``; raises :class:`InfeasiblePortfolio` (which jobs, what fixes
    them) when none meets every constraint, unless ``problem.on_infeasible`` drops the least valuable
    jobs. A time-limited answer says so, with its gap."""
    stuck = [j for j in range(len(problem.jobs)) if next(placements(problem, j), None) is None]
    if problem.on_infeasible == "drop_lowest_priority":
        late = [deadline_fix(problem, j) for j in stuck]
        left = [
            DroppedJob(job=f.job, priority=problem.jobs[j].priority, reason=f.reason)
            for j, f in zip(stuck, late, strict=True)
        ]
        kept = [job for j, job in enumerate(problem.jobs) if j not in stuck]
        return _drop_lowest(msgspec.structs.replace(problem, jobs=kept), left)
    if stuck:
        jobs = [deadline_fix(problem, j) for j in stuck]
        raise InfeasiblePortfolio(
            f"{len(jobs)} job(s) cannot finish inside their window: {', '.join(j.job for j in jobs)}", jobs
        )
    built = build(problem)
    outcome = solve_built(built)
    if outcome.status not in ("optimal", "time_limited") or outcome.objective is None:
        raise _infeasible(problem)
    return _result(built, (outcome.status, outcome.gap, outcome.solve_ms, outcome.message), [])
