"""Choose the configuration that finishes a job at the lowest cost (or soonest), and explain it.

Steps: enumerate candidates (:mod:`solver.candidates`), keep the Pareto front of (cost, hours) — the
optimum under any deadline and budget lies on it, so pruning dominated candidates loses nothing — and
solve a one-hot MILP over the front with PuLP on HiGHS: exactly one candidate, deadline, budget and
GPU quota as constraints, the complete charge (or the expected wall hours) as the objective. A
candidate's cost is everything it takes to finish the work (:mod:`solver.charges`), and the deadline
holds with 90 % confidence over interruptions. Counts are enumerated, never multiplied by
a time inside the model (cost is not linear in the count). The alternatives, the front and the
rejections per GPU type explain the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Literal

import msgspec
import pulp

from solver.candidates import (
    Candidate,
    Enumeration,
    Rejection,
    Supply,
    ThroughputFn,
    WorkAmount,
    enumerate_candidates,
)
from solver.charges import NOTHING_MOVED, JobTerms
from solver.errors import InvalidWorkload, NoFeasiblePlan
from solver.gpus import GpuSpec
from solver.mig import SliceSpec
from solver.mip import SMALL_MILP_OPTIONS, SolveOutcome, solve
from solver.plan_spec import PlanRequest
from solver.workload import Workload

__all__ = [
    "Alternative",
    "PlanResult",
    "choose",
    "pareto_front",
    "plan",
    "work_amount",
]


class Alternative(msgspec.Struct, frozen=True, kw_only=True):
    candidate: Candidate
    why: str


class PlanResult(msgspec.Struct, frozen=True, kw_only=True):
    """The chosen candidate and everything that explains it."""

    choice: Candidate
    outcome: SolveOutcome
    alternatives: list[Alternative]
    pareto: list[Candidate]
    rejected: dict[str, list[tuple[str, str]]]
    by_pricing: dict[str, Candidate]
    """The best feasible candidate of each kind of price (on_demand, spot, owned) by the objective."""
    candidates: int
    pruned: int
    configurations_tried: int


def work_amount(request: PlanRequest, seq_len: int) -> Callable[[str], WorkAmount]:
    """Convert the request's work (tokens, or samples × epochs) into the unit of a throughput."""
    if request.tokens is None and request.samples is None:
        raise InvalidWorkload("tokens", "give the work: tokens, or samples (with epochs)")

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


def _why(c: Candidate, best: Candidate, objective: str) -> str:
    extra_cost = c.cost_usd - best.cost_usd
    share = extra_cost / best.cost_usd if best.cost_usd > 0 else 0.0
    cost_text = f"${c.cost_usd:,.2f} vs ${best.cost_usd:,.2f} ({share:+.1%})"
    time_text = f"{c.hours:,.1f} h vs {best.hours:,.1f} h"
    if objective == "cost":
        if c.hours < best.hours:
            return f"costs more: {cost_text}, though it finishes sooner ({time_text})"
        if extra_cost <= 1e-9:
            return f"same cost ({cost_text}) but slower or later in the order: {time_text}"
        return f"costs more: {cost_text}"
    if c.hours <= best.hours + 1e-12:
        return f"as fast ({time_text}) but costs more: {cost_text}"
    return f"slower: {time_text}" + (f", though cheaper: {cost_text}" if extra_cost < 0 else "")


def _alternatives(
    feasible: Sequence[Candidate], chosen: Candidate, objective: str, top_k: int
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
        picked.append(Alternative(candidate=candidate, why=_why(candidate, chosen, objective)))
    return picked


def _best_by_pricing(candidates: Sequence[Candidate], objective: str) -> dict[str, Candidate]:
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        held = best.get(candidate.supply.pricing)
        if held is None or _key(candidate, objective) < _key(held, objective):
            best[candidate.supply.pricing] = candidate
    return best


def _as_parent(rejection: Rejection, gpus: Mapping[str, GpuSpec], usable: set[str]) -> Rejection | None:
    """A MIG slice's rejection told under its parent GPU (``None`` when the parent, or another
    slice of it, is usable: then the slice's failure explains nothing)."""
    spec = gpus.get(rejection.gpu_id)
    if not isinstance(spec, SliceSpec):
        return rejection
    if spec.parent_gpu_id in usable:
        return None
    detail = f"MIG {spec.mig_profile}: {rejection.detail}"
    return msgspec.structs.replace(rejection, gpu_id=spec.parent_gpu_id, detail=detail)


def _rejected(
    gpus: Mapping[str, GpuSpec],
    enumeration: Enumeration,
    extra: Sequence[Rejection],
) -> dict[str, list[tuple[str, str]]]:
    """For every GPU type with no feasible candidate: its distinct reasons, most telling detail first.

    MIG slices are not GPU types of their own here: a usable slice makes its parent usable, and an
    unusable slice's reasons count under its parent only where the parent has none of that kind."""
    usable = {c.supply.gpu_id for c in enumeration.candidates}
    usable |= {g.parent_gpu_id for k, g in gpus.items() if k in usable and isinstance(g, SliceSpec)}
    grouped: dict[str, dict[str, Rejection]] = {}
    whole: list[Rejection] = []
    folded: list[Rejection] = []
    for rejection in [*extra, *enumeration.rejections]:
        if not isinstance(gpus.get(rejection.gpu_id), SliceSpec):
            whole.append(rejection)
        elif (as_parent := _as_parent(rejection, gpus, usable)) is not None:
            folded.append(as_parent)
    for rejection in whole:
        if rejection.gpu_id in usable:
            continue
        reasons = grouped.setdefault(rejection.gpu_id, {})
        held = reasons.get(rejection.reason)
        # Keep the most telling instance of each reason: the one that tried the most GPUs.
        if held is None or rejection.gpu_count > held.gpu_count:
            reasons[rejection.reason] = rejection
    for rejection in folded:
        grouped.setdefault(rejection.gpu_id, {}).setdefault(rejection.reason, rejection)
    for gpu_id, gpu in gpus.items():
        if gpu_id not in usable and gpu_id not in grouped and not isinstance(gpu, SliceSpec):
            grouped[gpu_id] = {
                "filter": Rejection(
                    gpu_id=gpu_id, reason="filter", detail="no current offer or ownership price"
                )
            }
    return {
        gpu_id: [(reason, r.detail) for reason, r in sorted(reasons.items())]
        for gpu_id, reasons in sorted(grouped.items())
    }


def plan(
    request: PlanRequest,
    template: Workload,
    supplies: Sequence[Supply],
    gpus: Mapping[str, GpuSpec],
    throughput: ThroughputFn,
    *,
    seq_len: int,
    job: JobTerms = NOTHING_MOVED,
    pre_rejections: Sequence[Rejection] = (),
    time_limit_s: float = 5.0,
    memo: MutableMapping[Any, Any] | None = None,
) -> PlanResult:
    """Plan ``request``: raises :class:`NoFeasiblePlan` (with reasons per GPU) when nothing fits.

    ``memo`` (one per workload and catalog snapshot, owned by the caller) lets repeated plans of the
    same workload skip re-deriving what each supply shape can run at."""
    limits = request.constraints
    enumeration = enumerate_candidates(
        template,
        supplies,
        gpus,
        throughput,
        work_amount(request, seq_len),
        job=job,
        max_gpus=limits.max_gpus,
        deadline_hours=limits.deadline_hours,
        budget_usd=limits.budget_usd,
        min_interconnect=limits.interconnect,
        require_ecc=bool(limits.ecc),
        memo=memo,
    )
    rejected = _rejected(gpus, enumeration, pre_rejections)
    if not enumeration.candidates:
        raise NoFeasiblePlan("no GPU configuration can run this workload within its limits", rejected)
    front = pareto_front(enumeration.candidates)
    index, outcome = choose(
        front,
        request.objective,
        deadline_hours=limits.deadline_hours,
        budget_usd=limits.budget_usd,
        max_gpus=limits.max_gpus,
        time_limit_s=time_limit_s,
    )
    if index is None:
        raise NoFeasiblePlan(f"the solver found no feasible choice ({outcome.status})", rejected)
    chosen = front[index]
    return PlanResult(
        choice=chosen,
        outcome=outcome,
        alternatives=_alternatives(enumeration.candidates, chosen, request.objective, request.top_k),
        pareto=front,
        rejected=rejected,
        by_pricing=_best_by_pricing(enumeration.candidates, request.objective),
        candidates=enumeration.feasible,
        pruned=enumeration.feasible - len(front),
        configurations_tried=enumeration.configurations_tried,
    )
