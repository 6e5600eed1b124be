"""Plan a portfolio: check every job has a window, solve the MILP, explain the answer (or why there is none)."""

from __future__ import annotations

from solver.portfolio.explain import alone_usd, binding, cheapest, deadline_fix, relaxations, why_dearer
from solver.portfolio.extract import Solution, read
from solver.portfolio.milp import build, solve_built
from solver.portfolio.model import (
    BindingConstraint,
    InfeasiblePortfolio,
    JobSchedule,
    PortfolioProblem,
    PortfolioResult,
)
from solver.portfolio.placements import placements

__all__ = ["plan_portfolio"]


def _schedules(s: Solution) -> tuple[list[JobSchedule], list[BindingConstraint]]:
    """Each job's schedule, and the constraints that forced a job off its cheapest option."""
    p = s.built.problem
    out, forced = [], []
    for j, job in enumerate(p.jobs):
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
                cost_usd=option.cost_usd,
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


def plan_portfolio(problem: PortfolioProblem) -> PortfolioResult:
    """The cheapest schedule of ``problem``; raises :class:`InfeasiblePortfolio` (which jobs, what fixes
    them) when none meets every constraint. A time-limited answer says so, with its gap."""
    stuck = [j for j in range(len(problem.jobs)) if next(placements(problem, j), None) is None]
    if stuck:
        jobs = [deadline_fix(problem, j) for j in stuck]
        raise InfeasiblePortfolio(
            f"{len(jobs)} job(s) cannot finish inside their window: {', '.join(j.job for j in jobs)}", jobs
        )
    built = build(problem)
    outcome = solve_built(built)
    if outcome.status not in ("optimal", "time_limited") or outcome.objective is None:
        raise _infeasible(problem)
    s, serving, buckets = read(built)
    schedules, forced = _schedules(s)
    return PortfolioResult(
        status="optimal" if outcome.status == "optimal" else "time_limited",
        backend=outcome.backend,
        objective_usd=sum(b.total_usd for b in buckets),
        gap=outcome.gap,
        solve_ms=outcome.solve_ms,
        build_ms=built.build_ms,
        variables=built.lp.numVariables(),
        constraints=built.lp.numConstraints(),
        message=outcome.message,
        schedules=schedules,
        serving=serving,
        buckets=buckets,
        bought={g: n for g, n in s.bought.items() if n > 0},
        bought_usd=sum(o.usd_per_unit * s.bought.get(o.gpu_id, 0) for o in problem.buy),
        alone_usd=alone_usd(problem),
        binding=[*binding(s), *forced],
    )
