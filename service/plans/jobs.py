"""Job plans (train, fine-tune, batch inference): solve with ``solver.planner`` and render a :class:`PlanOut`.

The pipeline (``service.plans.pipeline``) validates the request and gathers the supplies; this kind
asks the planner for the cheapest (or fastest) configuration that finishes the work and explains it.
"""

from __future__ import annotations

from service.plans.charges_out import cost_out, data_out, pricing_options, reliability_out
from service.plans.inputs import PlanInputs, PlanSettings
from service.plans.render import (
    PlanStamp,
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
    ChoiceOut,
    EstimateOut,
    MemoryOut,
    ParetoPoint,
    PlanOut,
    SolverOut,
    ThroughputOut,
)
from service.plans.throughput import ThroughputCache
from solver.candidates import Candidate
from solver.job_terms import JobTermsWithRules, job_terms
from solver.plan_spec import PlanRequest
from solver.plan_warnings import candidate_warnings, complete_bands
from solver.planner import PlanResult, plan
from solver.throughput import Band
from solver.workload import ResolvedWorkload

__all__ = ["JobPlans"]


class JobPlans:
    """The job kind of plan: nothing to validate beyond the workload, the planner's MILP to solve."""

    def __init__(self, settings: PlanSettings, throughput: ThroughputCache) -> None:
        self.settings = settings
        self.throughput = throughput

    def validate(self, request: PlanRequest, resolved: ResolvedWorkload) -> JobTermsWithRules:
        """What the job moves, keeps and risks besides compute (the planner checks the work to do)."""
        return job_terms(
            resolved,
            tokens=request.tokens,
            samples=request.samples,
            epochs=request.epochs,
            output_len=request.output_len,
            data=request.data,
            reliability=request.reliability,
        )

    def solve(self, inputs: PlanInputs[JobTermsWithRules]) -> PlanResult:
        return plan(
            inputs.request,
            inputs.template,
            inputs.supplies.supplies,
            inputs.snapshot.gpus_and_slices(),
            self.throughput.estimator(inputs.snapshot, inputs.resolved, inputs.request.output_len),
            memo=self.throughput.memo(inputs.snapshot, inputs.resolved, inputs.request.output_len),
            seq_len=inputs.resolved.seq_len,
            job=inputs.spec.terms,
            pre_rejections=inputs.supplies.rejections,
            time_limit_s=self.settings.time_limit_s,
        )

    def render(self, inputs: PlanInputs[JobTermsWithRules], result: PlanResult, stamp: PlanStamp) -> PlanOut:
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
            estimate=_estimate(chosen, inputs.spec),
            cost=cost_out(chosen, inputs.spec, inputs.snapshot),
            alternatives=_alternatives(result),
            rejected=rejected_gpus(inputs.snapshot, result.rejected),
            pareto=_pareto(result),
            pricing_options=pricing_options(result),
            warnings=[
                *candidate_warnings(chosen),
                *host_warnings(inputs.supplies, [chosen.supply]),
                *stale_warnings(sheets),
            ],
            price_sheet=sheets,
            solver=_solver(result, request, inputs.supplies.passed_over, stamp.total_ms),
        )


def _choice(c: Candidate, inputs: PlanInputs[JobTermsWithRules]) -> ChoiceOut:
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
    )


def _estimate(c: Candidate, job: JobTermsWithRules) -> EstimateOut:
    t = c.throughput
    work = c.compute_hours * t.value * 3600
    (low, high), _ = complete_bands(c)
    return EstimateOut(
        hours=c.hours,
        hours_band=Band(low=low, high=high),
        compute_hours=c.compute_hours,
        work=work,
        work_unit="tokens" if "token" in t.unit else "samples",
        throughput=ThroughputOut(
            value=t.value,
            unit=t.unit,
            provenance=t.provenance,
            route=t.route,
            confidence=t.confidence,
            method=t.method,
            workload_class=t.workload_class,
            stack=t.stack,
            efficiency=t.efficiency,
            band=t.band,
            sources=t.sources,
        ),
        scaling=t.scaling,
        memory=MemoryOut(
            per_gpu_gib=c.memory.per_gpu_gib,
            allocated_gib=c.memory.allocated_gib,
            reserved_gib=c.memory.reserved_gib,
            fit_counter=c.memory.fit_counter,
            capacity_gib=c.capacity_gib,
            band=c.memory.band,
            host_ram_gib=c.memory.host_ram_gib,
            breakdown=c.memory.breakdown,
        ),
        reliability=reliability_out(c, job.terms),
        data=data_out(job.terms),
    )


def _alternatives(result: PlanResult) -> list[AlternativeOut]:
    return [
        AlternativeOut(
            rank=i + 1,
            gpu=a.candidate.supply.gpu_id,
            gpu_count=a.candidate.gpu_count,
            acquisition=a.candidate.supply.acquisition,
            provider=a.candidate.supply.provider,
            instance_type=a.candidate.supply.instance_type,
            region=a.candidate.supply.region,
            pricing=a.candidate.supply.pricing,
            hours=a.candidate.hours,
            cost_usd=a.candidate.cost_usd,
            why=a.why,
        )
        for i, a in enumerate(result.alternatives)
    ]


def _pareto(result: PlanResult) -> list[ParetoPoint]:
    return [
        ParetoPoint(
            gpu=p.supply.gpu_id,
            gpu_count=p.gpu_count,
            acquisition=p.supply.acquisition,
            provider=p.supply.provider,
            instance_type=p.supply.instance_type,
            hours=p.hours,
            cost_usd=p.cost_usd,
            chosen=p is result.choice,
        )
        for p in result.pareto
    ]


def _solver(result: PlanResult, request: PlanRequest, passed_over: int, total_ms: float) -> SolverOut:
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
