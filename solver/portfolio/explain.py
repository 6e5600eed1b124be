"""What explains a portfolio: each job's cheapest option alone, why a dearer one was chosen, the binding
constraints, the rented-market baseline, and for an infeasible portfolio the jobs and the smallest fix."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal, cast

import msgspec

from solver.portfolio.extract import Solution, owned_gpus
from solver.portfolio.milp import cap_matches
from solver.portfolio.model import (
    AvailabilityCap,
    BindingConstraint,
    InfeasibleJob,
    JobOption,
    PortfolioJob,
    PortfolioProblem,
    Relaxation,
    ServingOption,
)
from solver.portfolio.placements import Placement, placements

__all__ = ["Usage", "alone_usd", "binding", "cheapest", "deadline_fix", "relaxations", "why_dearer"]

_TIGHT = 1e-6
_Kind = Literal["availability", "budget", "owned_capacity", "deadline"]


def cheapest(problem: PortfolioProblem, j: int, *, rented_only: bool = False) -> Placement | None:
    """The job's cheapest placement with nothing else scheduled (the first on a tie)."""
    job = problem.jobs[j]
    found = [
        p for p in placements(problem, j) if not rented_only or job.options[p.option].acquisition == "rent"
    ]
    return min(found, key=lambda p: job.options[p.option].cost_usd, default=None)


def _serving_alone(problem: PortfolioProblem) -> float:
    total = 0.0
    for demand in problem.serving:
        rented = [o for o in demand.options if o.acquisition == "rent" and o.requests_per_s > 0]
        pool = rented or [o for o in demand.options if o.requests_per_s > 0]
        for rate in demand.requests_per_s[: problem.buckets]:
            total += (
                min(
                    (math.ceil(rate / o.requests_per_s - _TIGHT) * o.usd_per_instance_hour for o in pool),
                    default=0.0,
                )
                * problem.bucket_hours
            )
    return total


def alone_usd(problem: PortfolioProblem) -> float:
    """Each job on its cheapest rented option (any option where none is rented) and each serving bucket on
    its cheapest single rented type: one plan at a time against an unlimited market."""
    total = _serving_alone(problem)
    for j, job in enumerate(problem.jobs):
        best = cheapest(problem, j, rented_only=True) or cheapest(problem, j)
        total += 0.0 if best is None else job.options[best.option].cost_usd
    return total


class Usage:
    """Owned GPUs held, rented instances per cap and spend, per bucket, of a solution without one job."""

    def __init__(self, s: Solution, skip: int | None = None) -> None:
        p = s.built.problem
        self.problem = p
        self.have = owned_gpus(s)
        self.owned: dict[tuple[str, int], int] = defaultdict(int)
        self.capped: dict[tuple[int, int], int] = defaultdict(int)
        self.spend: dict[int, float] = defaultdict(float)
        for j, place in s.placed.items():
            if j != skip:
                self.add(p.jobs[j].options[place.option], place)
        for (d, k, t), n in s.instances.items():
            option = p.serving[d].options[k]
            self.spend[t] += option.usd_per_instance_hour * p.bucket_hours * n
            if option.acquisition == "own":
                self.owned[(option.gpu_id, t)] += option.gpus_per_instance * n
            for c, cap in enumerate(p.caps):
                self.capped[(c, t)] += n if cap_matches(cap, option) else 0
        for buy in p.buy:
            for t in range(p.buckets):
                self.spend[t] += buy.usd_per_unit * s.bought.get(buy.gpu_id, 0) / p.buckets

    def add(self, option: JobOption, place: Placement) -> None:
        for t, usd in zip(place.held, place.usd(option), strict=True):
            self.spend[t] += usd
            if option.acquisition == "own":
                self.owned[(option.gpu_id, t)] += option.gpu_count
            for c, cap in enumerate(self.problem.caps):
                self.capped[(c, t)] += option.instances if cap_matches(cap, option) else 0

    def blocker(self, option: JobOption, place: Placement) -> BindingConstraint | None:
        """The constraint that keeps ``option`` at ``place`` from fitting beside the rest, or ``None``."""
        p = self.problem
        budgets = [*p.budgets, *([None] * p.buckets)]
        for t, usd in zip(place.held, place.usd(option), strict=True):
            if option.acquisition == "own":
                have, busy = self.have.get(option.gpu_id, 0), self.owned[(option.gpu_id, t)]
                if busy + option.gpu_count > have:
                    detail = f"owned {option.gpu_id} full in bucket {t} (needs {option.gpu_count}; {busy} of {have} busy)"
                    return BindingConstraint(
                        kind="owned_capacity", name=option.gpu_id, bucket=t, detail=detail
                    )
            for c, cap in enumerate(p.caps):
                if cap_matches(cap, option) and self.capped[(c, t)] + option.instances > cap.max_instances:
                    detail = f"availability cap {cap.scope} {cap.key} ({cap.max_instances} instances) in bucket {t}"
                    return BindingConstraint(
                        kind="availability", name=f"{cap.scope}:{cap.key}", bucket=t, detail=detail
                    )
            budget = budgets[t]
            if budget is not None and self.spend[t] + usd > budget + _TIGHT:
                detail = f"budget of bucket {t} (${budget:,.2f})"
                return BindingConstraint(kind="budget", name="budget", bucket=t, detail=detail)
        return None


def why_dearer(s: Solution, j: int, chosen: Placement) -> tuple[str, BindingConstraint | None]:
    """Why job ``j`` did not get its cheapest option alone ('' when it did), and the constraint that
    blocked that option (``None``: none alone did; the portfolio as a whole costs less this way)."""
    p = s.built.problem
    job = p.jobs[j]
    best = cheapest(p, j)
    paid = chosen.cost(job.options[chosen.option])
    if best is None or paid <= job.options[best.option].cost_usd + _TIGHT:
        return "", None
    target = job.options[best.option]
    usage = Usage(s, skip=j)
    reasons = [usage.blocker(target, place) for place in placements(p, j) if place.option == best.option]
    blocked = next((r for r in reasons if r is not None), None)
    extra = paid - target.cost_usd
    what = f"its cheapest option ({target.option_id}) would save ${extra:,.2f}"
    if blocked is None:
        return f"{what}; the whole portfolio costs less this way", None
    forced = BindingConstraint(
        kind=blocked.kind,
        name=blocked.name,
        bucket=blocked.bucket,
        detail=f"{blocked.detail}: {job.name} pays ${extra:,.2f} more",
    )
    return f"{what} but is blocked: {blocked.detail}", forced


def _deadline_binding(problem: PortfolioProblem, placed: set[int]) -> list[BindingConstraint]:
    found = []
    for j, job in enumerate(problem.jobs):
        if job.deadline_hour is None or j not in placed:
            continue
        free = PortfolioJob(name=job.name, options=job.options, earliest_start_hour=job.earliest_start_hour)
        loose = msgspec.structs.replace(problem, jobs=[free])
        within, without = cheapest(problem, j), cheapest(loose, 0)
        if (
            within
            and without
            and job.options[within.option].cost_usd > job.options[without.option].cost_usd + _TIGHT
        ):
            found.append(
                BindingConstraint(
                    kind="deadline",
                    name=job.name,
                    bucket=None,
                    detail=(
                        f"deadline at hour {job.deadline_hour:g} rules out {job.options[without.option].option_id} "
                        f"(${job.options[without.option].cost_usd:,.2f}); "
                        f"{job.options[within.option].option_id} costs ${job.options[within.option].cost_usd:,.2f}"
                    ),
                )
            )
    return found


def binding(s: Solution) -> list[BindingConstraint]:
    """Owned capacity, caps and budgets at their limit in some bucket, and deadlines that cost money."""
    p = s.built.problem
    usage = Usage(s)
    found: list[BindingConstraint] = []
    for (gpu, t), busy in sorted(usage.owned.items()):
        if busy > 0 and busy >= usage.have.get(gpu, 0):
            found.append(
                BindingConstraint(
                    kind="owned_capacity", name=gpu, bucket=t, detail=f"all {busy} owned {gpu} busy"
                )
            )
    for (c, t), used in sorted(usage.capped.items()):
        cap = p.caps[c]
        if used > 0 and used >= cap.max_instances:
            found.append(
                BindingConstraint(
                    kind="availability",
                    name=f"{cap.scope}:{cap.key}",
                    bucket=t,
                    detail=f"{used} of {cap.max_instances} instances rented",
                )
            )
    for t, budget in enumerate(p.budgets[: p.buckets]):
        if budget is not None and usage.spend[t] >= budget * (1 - _TIGHT) - _TIGHT:
            found.append(
                BindingConstraint(
                    kind="budget", name="budget", bucket=t, detail=f"${usage.spend[t]:,.2f} of ${budget:,.2f}"
                )
            )
    return [*found, *_deadline_binding(p, set(s.placed))]


def deadline_fix(problem: PortfolioProblem, j: int) -> InfeasibleJob:
    """A job no option can finish inside its window: the deadline (or horizon) that would admit one."""
    job = problem.jobs[j]
    start = job.earliest_start_hour
    fastest = min(job.options, key=lambda o: o.span_hours)
    needed = start + fastest.span_hours
    limit = problem.horizon_hours if job.deadline_hour is None else job.deadline_hour
    kind = "deadline" if job.deadline_hour is not None else "horizon"
    return InfeasibleJob(
        job=job.name,
        reason=(
            f"its fastest option ({fastest.option_id}) takes {fastest.span_hours:,.1f} h from hour {start:g}, "
            f"ending at hour {needed:,.1f}, after its {kind} at hour {min(limit, problem.horizon_hours):g}"
        ),
        fixes=[
            Relaxation(
                kind="deadline",
                name=job.name,
                bucket=None,
                current=min(limit, problem.horizon_hours),
                needed=needed,
                detail=f"move the {kind} to hour {math.ceil(needed):g} or later",
            )
        ],
    )


def relaxations(s: Solution) -> list[InfeasibleJob]:
    """From an elastic solution: each relaxed constraint, and the jobs (and serving) whose runs it holds."""
    p = s.built.problem
    have = owned_gpus(s)
    budgets = [*p.budgets, *([None] * p.buckets)]
    fixes: list[tuple[Relaxation, set[str]]] = []
    for (kind, name, t), amount in sorted(s.slack.items()):
        if kind == "owned_capacity":
            current = float(have.get(name, 0))
            detail = f"{math.ceil(amount - _TIGHT)} more {name} GPUs in bucket {t} (own or buy)"
        elif kind == "availability":
            cap = next(c for c in p.caps if f"{c.scope}:{c.key}" == name)
            current = float(cap.max_instances)
            detail = f"raise the cap {name} from {cap.max_instances} to {cap.max_instances + math.ceil(amount - _TIGHT)} in bucket {t}"
        else:
            current = float(budgets[t] or 0.0)
            detail = f"raise the budget of bucket {t} by ${amount:,.2f}"
        fix = Relaxation(
            kind=cast(_Kind, kind),
            name=name,
            bucket=t,
            current=current,
            needed=current + amount,
            detail=detail,
        )
        fixes.append((fix, _holders(s, kind, name, t)))
    by_job: dict[str, list[Relaxation]] = defaultdict(list)
    for fix, holders in fixes:
        for holder in holders:
            by_job[holder].append(fix)
    priority = {job.name: job.priority for job in p.jobs}
    order = sorted(by_job, key=lambda name: (priority.get(name, 0), name))
    return [
        InfeasibleJob(
            job=name, reason="needs more than the caps, budgets or owned GPUs allow", fixes=by_job[name]
        )
        for name in order
    ]


def _holds(kind: str, name: str, option: JobOption | ServingOption, caps: list[AvailabilityCap]) -> bool:
    """Whether a run of ``option`` counts against the relaxed constraint (``kind``, ``name``)."""
    if kind == "budget":
        return True
    if kind == "owned_capacity":
        return option.acquisition == "own" and option.gpu_id == name
    return any(cap_matches(c, option) for c in caps if f"{c.scope}:{c.key}" == name)


def _holders(s: Solution, kind: str, name: str, t: int) -> set[str]:
    """The jobs (and serving workloads, as ``serving NAME``) whose runs in bucket ``t`` count against it."""
    p = s.built.problem
    held = {
        p.jobs[j].name
        for j, place in s.placed.items()
        if t in place.held and _holds(kind, name, p.jobs[j].options[place.option], p.caps)
    }
    for (d, k, bucket), n in s.instances.items():
        if n > 0 and bucket == t and _holds(kind, name, p.serving[d].options[k], p.caps):
            held.add(f"serving {p.serving[d].name}")
    return held
