"""Job plans (train, fine-tune, batch inference): solve with ``solver.optimise.planner`` and render a :class:`PlanOut`.

The pipeline (``service.plans.pipeline``) validates the request and gathers the supplies; this kind
asks the planner for the cheapest (or fastest) configuration that finishes the work and explains it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from service.db.snapshot import CatalogSnapshot
from service.http import body_of
from service.plans.charges_out import cost_out, data_out, pricing_options, reliability_out
from service.plans.inputs import PlanInputs, PlanSettings
from service.plans.render import (
    PlanStamp,
    country_warnings,
    host_warnings,
    mig_ref,
    owned_ref,
    plan_status,
    price_sheets_used,
    rejected_gpus,
    stale_warnings,
)
from service.plans.schemas import (
    AlternativeOut,
    BelowHeadroomPoint,
    ChoiceOut,
    EstimateOut,
    MemoryOut,
    ParetoPoint,
    PlanOut,
    SolverOut,
    ThroughputOut,
)
from service.plans.throughput import ThroughputCache, plan_cache
from solver import (
    Band,
    BatchInferencePlan,
    Candidate,
    Enumeration,
    InvalidWorkload,
    JobPlanRequest,
    JobTermsWithRules,
    PlanResult,
    PlanWarning,
    ResolvedWorkload,
    ThroughputEstimate,
    candidate_warnings,
    complete_bands,
    deadline_probability,
    enumerate_job,
    job_terms,
    plan,
)

__all__ = ["JobPlans"]


def _output_len(request: JobPlanRequest) -> int | None:
    return request.output_len if isinstance(request, BatchInferencePlan) else None


def _check_work(request: JobPlanRequest, resolved: ResolvedWorkload) -> None:
    """A batch-inference request generates ``output_len`` of its ``seq_len`` tokens, so at most
    ``seq_len`` of them (the request's own rules, :meth:`~solver.JobPlanBase.check`, ran before)."""
    output_len = _output_len(request)
    if output_len is not None and resolved.arch.family not in ("decoder", "encoder_decoder"):
        raise InvalidWorkload(
            "output_len",
            f"{resolved.arch.name} (family {resolved.arch.family}) generates no tokens: leave output_len "
            "out (its work is samples)",
        )
    if output_len is not None and output_len > resolved.seq_len:
        raise InvalidWorkload(
            "output_len",
            f"{output_len} is more than seq_len ({resolved.seq_len}): each request is seq_len tokens, "
            "output_len of them generated",
        )


class JobPlans:
    """The job kind of plan: nothing to validate beyond the workload, the planner's MILP to solve."""

    def __init__(self, settings: PlanSettings, throughput: ThroughputCache) -> None:
        self.settings = settings
        self.throughput = throughput

    def validate(self, request: JobPlanRequest, resolved: ResolvedWorkload) -> JobTermsWithRules:
        """What the job moves, keeps and risks besides compute (the planner checks the work to do),
        after the work's own cross-field rules (:func:`_check_work`)."""
        _check_work(request, resolved)
        return job_terms(
            resolved,
            tokens=request.tokens,
            samples=request.samples,
            epochs=request.epochs,
            output_len=_output_len(request),
            data=request.data,
            reliability=request.reliability,
        )

    def _planner_inputs(self, inputs: PlanInputs[JobPlanRequest, JobTermsWithRules]) -> dict[str, Any]:
        """What the planner's enumeration takes from a validated request (one snapshot's caches)."""
        return {
            "request": inputs.request,
            "template": inputs.template,
            "supplies": inputs.supplies.supplies,
            "gpus": inputs.snapshot.gpus_and_slices(),
            "throughput": self.throughput.estimator(
                inputs.snapshot, inputs.resolved, _output_len(inputs.request)
            ),
            "cache": plan_cache(inputs.snapshot),
            "index": inputs.snapshot.profile_index(),
            "seq_len": inputs.resolved.seq_len,
            "job": inputs.spec.terms,
            "memory_headroom": inputs.request.constraints.memory_headroom,
        }

    def enumerate(self, inputs: PlanInputs[JobPlanRequest, JobTermsWithRules]) -> Enumeration:
        """Every candidate that could matter, without the deadline (a portfolio places the job in time)."""
        return enumerate_job(**self._planner_inputs(inputs), within_deadline=False)

    def solve(self, inputs: PlanInputs[JobPlanRequest, JobTermsWithRules]) -> PlanResult:
        return plan(
            **self._planner_inputs(inputs),
            pre_rejections=inputs.supplies.rejections,
            time_limit_s=self.settings.time_limit_s,
        )

    def render(
        self, inputs: PlanInputs[JobPlanRequest, JobTermsWithRules], result: PlanResult, stamp: PlanStamp
    ) -> PlanOut:
        """The API view of a plan."""
        chosen, request = result.choice, inputs.request
        sheets = price_sheets_used(
            inputs.snapshot, request.acquisition, stamp.created_at, self.settings.price_max_age_hours
        )
        return PlanOut(
            plan_id=stamp.plan_id,
            created_at=stamp.created_at,
            status=plan_status(result.outcome),
            model=inputs.resolved.arch.name,
            kind=inputs.resolved.kind,
            choice=_choice(chosen, inputs),
            estimate=_estimate(chosen, inputs.spec, inputs.snapshot, request.constraints.deadline_hours),
            cost=cost_out(chosen, inputs.spec, inputs.snapshot),
            alternatives=_alternatives(result, inputs.snapshot, inputs.resolved.is_inference),
            rejected=rejected_gpus(inputs.snapshot, result.rejected),
            pareto=_pareto(result, inputs.snapshot),
            pareto_below_headroom=_below_headroom(result),
            pricing_options=pricing_options(result, request.owned_utilization),
            warnings=[
                *candidate_warnings(chosen, request.constraints.deadline_hours),
                *host_warnings(inputs.supplies, [chosen.supply]),
                *country_warnings(inputs.supplies),
                *stale_warnings(sheets),
                *_capped_warnings(result),
            ],
            price_sheet=sheets,
            solver=_solver(result, request, inputs.supplies.passed_over, stamp.total_ms),
        )


def _capped_warnings(result: PlanResult) -> list[PlanWarning]:
    """One ``availability_cap`` warning naming every configuration a published cap or the owned
    inventory ruled out (one per GPU type)."""
    if not result.capped:
        return []
    return [PlanWarning(code="availability_cap", message="; ".join(r.detail for r in result.capped))]


def _choice(c: Candidate, inputs: PlanInputs[JobPlanRequest, JobTermsWithRules]) -> ChoiceOut:
    gpu = inputs.snapshot.gpu_spec(c.supply.gpu_id)
    return ChoiceOut(
        gpu=gpu.gpu_id,
        gpu_name=gpu.name,
        gpu_count=c.gpu_count,
        instances=c.units,
        acquisition=c.supply.acquisition,
        tp=c.tp,
        sharding=c.sharding,
        recompute=c.recompute,
        offer=inputs.supplies.offers.get(c.supply.supply_id),
        owned=owned_ref(c.supply, inputs.request.owned_utilization),
        mig=mig_ref(inputs.snapshot, c.supply, c.gpu_count),
        layout=None if inputs.resolved.is_inference else c.layout,
    )


_PEAK_NOTE: Final = re.compile(r"\bpeak_memory_gib=([\d.]+)")


def _measured_peak(t: ThroughputEstimate, snapshot: CatalogSnapshot) -> dict[str, Any]:
    """The peak memory the measured rows behind ``t`` state in their notes (an imported run's), if any."""
    if t.route != "measured":
        return {}
    cited = {source.profile_id for source in t.sources}
    for row in snapshot.profiles:
        found = _PEAK_NOTE.search(row.notes) if row.profile_id in cited else None
        if found:
            return {"measured_peak_gib": float(found.group(1)), "measured_peak_source": row.source}
    return {}


def _estimate(
    c: Candidate, job: JobTermsWithRules, snapshot: CatalogSnapshot, deadline_hours: float | None = None
) -> EstimateOut:
    t = c.throughput
    work = c.compute_hours * t.value * 3600
    (low, high), _ = complete_bands(c)
    return EstimateOut(
        hours=c.hours,
        hours_band=Band(low=low, high=high),
        compute_hours=c.compute_hours,
        work=work,
        work_unit="tokens" if "token" in t.unit else "samples",
        throughput=body_of(ThroughputOut, t),
        scaling=t.scaling,
        memory=body_of(MemoryOut, c.memory, capacity_gib=c.capacity_gib, **_measured_peak(t, snapshot)),
        reliability=reliability_out(c, job.terms, snapshot),
        data=data_out(job, c),
        goodput=c.compute_hours / c.hours if c.hours > 0 else 1.0,
        deadline_probability=None if deadline_hours is None else deadline_probability(c, deadline_hours),
    )


def _alternatives(result: PlanResult, snapshot: CatalogSnapshot, inference: bool) -> list[AlternativeOut]:
    return [
        body_of(
            AlternativeOut,
            a,
            a.candidate,
            a.candidate.supply,
            rank=i + 1,
            gpu=a.candidate.supply.gpu_id,
            gpu_name=snapshot.gpu_spec(a.candidate.supply.gpu_id).name,
            layout=None if inference else a.candidate.layout,
            memory_gib=a.candidate.memory.per_gpu_gib,
            memory_capacity_gib=a.candidate.capacity_gib,
        )
        for i, a in enumerate(result.alternatives)
    ]


def _pareto(result: PlanResult, snapshot: CatalogSnapshot) -> list[ParetoPoint]:
    return [
        body_of(
            ParetoPoint,
            p,
            p.supply,
            gpu=p.supply.gpu_id,
            gpu_name=snapshot.gpu_spec(p.supply.gpu_id).name,
            chosen=p is result.choice,
        )
        for p in result.pareto
    ]


def _below_headroom(result: PlanResult) -> list[BelowHeadroomPoint]:
    chosen = result.choice
    return [
        body_of(
            BelowHeadroomPoint,
            p,
            p.supply,
            gpu=p.supply.gpu_id,
            per_gpu_gib=p.memory.per_gpu_gib,
            band_high_gib=p.memory.band.high_gib,
            headroom=1.0 - p.memory.per_gpu_gib / p.capacity_gib,
            usd_below_choice=chosen.cost_usd - p.cost_usd,
            hours_below_choice=chosen.hours - p.hours,
        )
        for p in result.below_headroom
    ]


def _solver(result: PlanResult, request: JobPlanRequest, passed_over: int, total_ms: float) -> SolverOut:
    return SolverOut(
        backend=result.outcome.backend,
        status=plan_status(result.outcome),
        gap=result.outcome.gap,
        objective=request.objective,
        configurations_tried=result.configurations_tried,
        candidates=result.candidates,
        pruned_dominated=result.pruned + passed_over,
        milp_variables=len(result.pareto),
        solve_ms=result.outcome.solve_ms,
        total_ms=total_ms,
    )
