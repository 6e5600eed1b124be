"""Choose the configuration that finishes a job at the lowest cost (or soonest), and explain it.

Steps: enumerate candidates (:mod:`solver.optimise.candidates`), keep the Pareto front of (cost, hours) — the
optimum under any deadline and budget lies on it, so pruning dominated candidates loses nothing — and
solve a one-hot MILP over the front with PuLP on HiGHS: exactly one candidate, deadline, budget and
GPU quota as constraints, the complete charge (or the expected wall hours) as the objective. A
candidate's cost is everything it takes to finish the work (:mod:`solver.costs.charges`), and the deadline
holds with 90 % confidence over interruptions. Counts are enumerated, never multiplied by
a time inside the model (cost is not linear in the count). The alternatives, the front and the
rejections per GPU type explain the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import msgspec
import pulp

from solver.catalog.gpus import GpuSpec
from solver.costs.charges import NOTHING_MOVED, JobTerms
from solver.errors import InvalidWorkload, NoFeasiblePlan, Rejection
from solver.optimise.candidates import (
    Candidate,
    Enumeration,
    PlanCache,
    Supply,
    ThroughputFn,
    WorkAmount,
    enumerate_candidates,
)
from solver.optimise.mip import SMALL_MILP_OPTIONS, SolveOutcome, solve
from solver.optimise.rejections import by_gpu, refuse_precision
from solver.optimise.why import LostOn, why_it_lost
from solver.spec.plan import JobPlanRequest
from solver.spec.workload import TRAINING_KINDS, Workload
from solver.throughput.calibration import ProfileIndex

__all__ = [
    "Alternative",
    "PlanResult",
    "choose",
    "enumerate_job",
    "pareto_front",
    "plan",
    "work_amount",
]


class Alternative(msgspec.Struct, frozen=True, kw_only=True):
    candidate: Candidate
    why: str
    lost_on: LostOn


class PlanResult(msgspec.Struct, frozen=True, kw_only=True):
    """The chosen candidate and everything that explains it."""

    choice: Candidate
    outcome: SolveOutcome
    alternatives: list[Alternative]
    pareto: list[Candidate]
    rejected: dict[str, list[Rejection]]
    """Every GPU type that cannot run the job, with one rejection per reason."""
    by_pricing: dict[str, Candidate]
    """The best feasible candidate of each kind of price (on_demand, spot, reserved_1y, reserved_3y,
    owned) by the objective: each kind's own optimum, which the enumeration keeps for every kind."""
    candidates: int
    pruned: int
    configurations_tried: int
    capped: list[Rejection] = []
    """Configurations ruled out only because a seller publishes fewer instances than they need."""
    below_headroom: list[Candidate] = msgspec.field(default_factory=list)
    """What the memory headroom costs: the configurations that fit only below it (their peak within
    the GPU's memory, not within ``1 − memory_headroom`` of it) and that no configuration on
    ``pareto`` beats on both cost and hours, by hours. Never chosen; empty without headroom or when
    the headroom costs nothing."""


def work_amount(request: JobPlanRequest, seq_len: int) -> Callable[[str], WorkAmount]:
    """Convert the request's work (tokens, or samples × epochs; :meth:`~solver.spec.plan.JobPlanBase.check`
    made sure one is given) into the unit of a throughput."""

    def convert(unit: str) -> WorkAmount:
        if unit in ("tokens_per_s", "output_tokens_per_s"):
            if request.tokens is not None:
                return WorkAmount(amount=float(request.tokens), unit="tokens")
            if seq_len > 0 and request.samples is not None:
                return WorkAmount(amount=request.samples * request.epochs * seq_len, unit="tokens")
            raise InvalidWorkload("tokens", f"this model's throughput is in {unit}: give tokens")
        if request.samples is not None:
            return WorkAmount(amount=request.samples * request.epochs, unit="samples")
        if request.tokens is not None and seq_len > 0:
            return WorkAmount(amount=request.tokens / seq_len, unit="samples")
        raise InvalidWorkload("samples", f"this model's throughput is in {unit}: give samples (and epochs)")

    return convert


def pareto_front(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates no other one beats on both cost and hours (ties: the first kept), by hours."""
    ordered = sorted(candidates, key=lambda c: (c.hours, c.cost_usd))
    front: list[Candidate] = []
    best_cost = float("inf")
    for candidate in ordered:
        if candidate.cost_usd < best_cost:
            front.append(candidate)
            best_cost = candidate.cost_usd
    return front


def beyond_front(front: Sequence[Candidate], others: Sequence[Candidate]) -> list[Candidate]:
    """Those of ``others`` on the Pareto front of ``front`` and ``others`` together, by hours."""
    mine = {id(c) for c in others}
    return [c for c in pareto_front([*front, *others]) if id(c) in mine]


def choose(
    candidates: Sequence[Candidate],
    objective: Literal["cost", "time"],
    *,
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    max_gpus: int | None = None,
    time_limit_s: float = 5.0,
) -> tuple[int | None, SolveOutcome]:
    """The one-hot MILP: index of the chosen candidate (``None`` when infeasible) and the outcome."""
    problem = pulp.LpProblem("plan", pulp.LpMinimize)

    def allowed(c: Candidate) -> bool:
        """Exactly within the limits (the solver's feasibility tolerance would let 1e-9 over pass)."""
        return (deadline_hours is None or c.charges.deadline_hours <= deadline_hours) and (
            budget_usd is None or c.cost_usd <= budget_usd
        )

    xs = [
        problem.add_variable(f"x{i}", 0, 1 if allowed(c) else 0, "Binary") for i, c in enumerate(candidates)
    ]
    cost = pulp.lpSum(c.cost_usd * x for c, x in zip(candidates, xs, strict=True))
    hours = pulp.lpSum(c.hours * x for c, x in zip(candidates, xs, strict=True))
    problem += cost if objective == "cost" else hours
    problem += pulp.lpSum(xs) == 1, "exactly_one"
    if deadline_hours is not None:
        confident = pulp.lpSum(c.charges.deadline_hours * x for c, x in zip(candidates, xs, strict=True))
        problem += confident <= deadline_hours, "deadline"
    if budget_usd is not None:
        problem += cost <= budget_usd, "budget"
    if max_gpus is not None:
        problem += (
            pulp.lpSum(c.gpu_count * x for c, x in zip(candidates, xs, strict=True)) <= max_gpus,
            "gpu_quota",
        )
    outcome = solve(problem, time_limit_s=time_limit_s, options=SMALL_MILP_OPTIONS)
    if outcome.status not in ("optimal", "time_limited"):
        return None, outcome
    chosen = max(range(len(xs)), key=lambda i: xs[i].value() or 0.0)
    return chosen, outcome


def _key(c: Candidate, objective: str) -> tuple[float, float]:
    return (c.cost_usd, c.hours) if objective == "cost" else (c.hours, c.cost_usd)


def _alternatives(
    feasible: Sequence[Candidate],
    chosen: Candidate,
    objective: Literal["cost", "time"],
    top_k: int,
    deadline_hours: float | None = None,
) -> list[Alternative]:
    """The next ``top_k`` by the objective: the best configuration of each other (GPU, provider) pair,
    so the list shows what the other GPU types and sellers would cost."""
    seen = {(chosen.supply.gpu_id, chosen.supply.provider or chosen.supply.acquisition)}
    picked: list[Alternative] = []
    for candidate in sorted(feasible, key=lambda c: _key(c, objective)):
        if len(picked) >= top_k:
            break
        key = (candidate.supply.gpu_id, candidate.supply.provider or candidate.supply.acquisition)
        if candidate is chosen or key in seen:
            continue
        seen.add(key)
        lost_on, why = why_it_lost(candidate, chosen, objective, deadline_hours)
        picked.append(Alternative(candidate=candidate, why=why, lost_on=lost_on))
    return picked


def _best_by_pricing(candidates: Sequence[Candidate], objective: str) -> dict[str, Candidate]:
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        held = best.get(candidate.supply.pricing)
        if held is None or _key(candidate, objective) < _key(held, objective):
            best[candidate.supply.pricing] = candidate
    return best


def enumerate_job(
    request: JobPlanRequest,
    template: Workload,
    supplies: Sequence[Supply],
    gpus: Mapping[str, GpuSpec],
    throughput: ThroughputFn,
    *,
    seq_len: int,
    job: JobTerms = NOTHING_MOVED,
    cache: PlanCache | None = None,
    index: ProfileIndex | None = None,
    memory_headroom: float = 0.0,
    within_deadline: bool = True,
) -> Enumeration:
    """The candidates of ``request`` within its limits (the deadline only when ``within_deadline``: a
    portfolio places the job in time itself); the rejections start with the precision refusals."""
    limits = request.constraints
    runnable, refused = refuse_precision(
        supplies, gpus, template.precision, training=template.kind in TRAINING_KINDS
    )
    enumeration = enumerate_candidates(
        template,
        runnable,
        gpus,
        throughput,
        work_amount(request, seq_len),
        job=job,
        max_gpus=limits.max_gpus,
        deadline_hours=limits.deadline_hours if within_deadline else None,
        budget_usd=limits.budget_usd,
        min_interconnect=limits.interconnect,
        require_ecc=bool(limits.ecc),
        cache=cache,
        index=index,
        memory_headroom=memory_headroom,
    )
    return msgspec.structs.replace(enumeration, rejections=[*refused, *enumeration.rejections])


def plan(
    request: JobPlanRequest,
    template: Workload,
    supplies: Sequence[Supply],
    gpus: Mapping[str, GpuSpec],
    throughput: ThroughputFn,
    *,
    seq_len: int,
    job: JobTerms = NOTHING_MOVED,
    pre_rejections: Sequence[Rejection] = (),
    time_limit_s: float = 5.0,
    cache: PlanCache | None = None,
    index: ProfileIndex | None = None,
    memory_headroom: float = 0.0,
) -> PlanResult:
    """Plan ``request``: raises :class:`NoFeasiblePlan` (with reasons per GPU) when nothing fits.

    ``cache`` (the caller's, one per catalog snapshot) lets repeated plans skip re-deriving layouts and
    what each supply shape can run at; ``index`` rates layouts by the class model; ``memory_headroom``
    is the share of each GPU's memory a layout leaves free."""
    enumeration = enumerate_job(
        request,
        template,
        supplies,
        gpus,
        throughput,
        seq_len=seq_len,
        job=job,
        cache=cache,
        index=index,
        memory_headroom=memory_headroom,
    )
    usable = {c.supply.gpu_id for c in enumeration.candidates}
    rejected = by_gpu(gpus, usable, [*pre_rejections, *enumeration.rejections])
    return _chosen(request, enumeration, rejected, time_limit_s)


def _chosen(
    request: JobPlanRequest,
    enumeration: Enumeration,
    rejected: dict[str, list[Rejection]],
    time_limit_s: float,
) -> PlanResult:
    """The plan among the enumerated candidates: the MILP over their Pareto front, and what explains it."""
    limits = request.constraints
    if not enumeration.candidates:
        raise NoFeasiblePlan("no GPU configuration can run this workload within its limits", rejected)
    front = pareto_front(enumeration.candidates)
    picked, outcome = choose(
        front,
        request.objective,
        deadline_hours=limits.deadline_hours,
        budget_usd=limits.budget_usd,
        max_gpus=limits.max_gpus,
        time_limit_s=time_limit_s,
    )
    if picked is None:
        raise NoFeasiblePlan(f"the solver found no feasible choice ({outcome.status})", rejected)
    chosen = front[picked]
    return PlanResult(
        choice=chosen,
        outcome=outcome,
        alternatives=_alternatives(
            enumeration.candidates, chosen, request.objective, request.top_k, limits.deadline_hours
        ),
        pareto=front,
        rejected=rejected,
        by_pricing=_best_by_pricing(enumeration.candidates, request.objective),
        candidates=enumeration.feasible,
        pruned=enumeration.feasible - len(front),
        configurations_tried=enumeration.configurations_tried,
        capped=[r for r in enumeration.rejections if r.reason == "availability"],
        below_headroom=beyond_front(front, enumeration.below_headroom),
    )
