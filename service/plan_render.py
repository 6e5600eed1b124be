"""Render a :class:`~solver.planner.PlanResult` as the API's :class:`~service.plan_schemas.PlanOut`."""

from __future__ import annotations

from datetime import datetime

from service.db.snapshot import CatalogSnapshot
from service.plan_schemas import (
    AlternativeOut,
    ChoiceOut,
    CostOut,
    EstimateOut,
    MemoryOut,
    OfferRef,
    OwnedRef,
    ParetoPoint,
    PlanOut,
    PriceSheetsOut,
    PriceSheetUse,
    RejectedGpu,
    RejectionOut,
    SolverOut,
    ThroughputOut,
)
from solver.candidates import Candidate, Supply
from solver.plan_spec import PlanRequest
from solver.planner import PlanResult
from solver.workload import ResolvedWorkload

__all__ = ["offer_ref", "owned_ref", "render_plan"]


def offer_ref(supply: Supply) -> OfferRef | None:
    """The offer behind a rented supply (None for owned GPUs)."""
    if supply.acquisition != "rent":
        return None
    return OfferRef(
        offer_id=supply.supply_id.split(":", 1)[0],
        provider=supply.provider or "",
        instance_type=supply.instance_type or "",
        region=supply.region or "",
        gpus_per_instance=supply.gpus_per_unit,
        interconnect=supply.interconnect,
        price_per_hour_usd=supply.usd_per_unit_hour,
        pricing="spot" if supply.pricing == "spot" else "on_demand",
        sheet_version=supply.sheet_version,
    )


def owned_ref(supply: Supply, utilization: float) -> OwnedRef | None:
    """How an owned supply is priced (None for rented ones)."""
    if supply.acquisition != "own":
        return None
    return OwnedRef(
        usd_per_busy_gpu_hour=supply.usd_per_unit_hour / supply.gpus_per_unit,
        gpus_per_node=supply.gpus_per_unit,
        interconnect=supply.interconnect,
        utilization=utilization,
        assumptions=[supply.price_source],
    )


def _choice(c: Candidate, snapshot: CatalogSnapshot, request: PlanRequest) -> ChoiceOut:
    gpu = snapshot.gpus[c.supply.gpu_id]
    return ChoiceOut(
        gpu=gpu.gpu_id,
        gpu_name=gpu.name,
        gpu_count=c.gpu_count,
        instances=c.units,
        acquisition=c.supply.acquisition,
        tp=c.tp,
        sharding=c.sharding,
        offer=offer_ref(c.supply),
        owned=owned_ref(c.supply, request.owned_utilization),
    )


def _estimate(c: Candidate, work: float, unit: str) -> EstimateOut:
    t = c.throughput
    return EstimateOut(
        hours=c.hours,
        work=work,
        work_unit=unit,
        throughput=ThroughputOut(
            value=c.throughput_value,
            unit=t.unit,
            provenance=t.provenance if not c.scaling_note else "derived",
            route=t.route,
            confidence=t.confidence,
            method=t.method,
            scaling=c.scaling_note,
            sources=t.sources,
        ),
        memory=MemoryOut(
            per_gpu_gib=c.memory.per_gpu_gib,
            capacity_gib=c.capacity_gib,
            band=c.memory.band,
            breakdown=c.memory.breakdown,
        ),
    )


def _cost(c: Candidate) -> CostOut:
    breakdown = {"compute_usd": c.cost_usd}
    if c.billable_hours > c.hours:
        breakdown["billing_rounding_usd"] = c.usd_per_hour * (c.billable_hours - c.hours)
    return CostOut(
        total_usd=c.cost_usd,
        usd_per_hour=c.usd_per_hour,
        billable_hours=c.billable_hours,
        billing_increment_s=c.supply.billing_increment_s,
        breakdown=breakdown,
    )


def _sheets(
    snapshot: CatalogSnapshot, now: datetime, kinds: set[str], max_age_hours: float
) -> PriceSheetsOut:
    uses = []
    warnings = []
    for sheet in snapshot.sheets:
        if sheet.kind not in kinds:
            continue
        age = (now - sheet.fetched_at).total_seconds() / 3600
        uses.append(
            PriceSheetUse(
                version=sheet.version,
                source=sheet.source,
                kind=sheet.kind,
                fetched_at=sheet.fetched_at,
                age_hours=age,
            )
        )
        if age > max_age_hours:
            warnings.append(
                f"{sheet.kind} sheet {sheet.source!r} (version {sheet.version}) is {age / 24:.0f} days old"
            )
    return PriceSheetsOut(versions=uses, warnings=warnings)


def render_plan(
    *,
    plan_id: str,
    created_at: datetime,
    request: PlanRequest,
    resolved: ResolvedWorkload,
    result: PlanResult,
    snapshot: CatalogSnapshot,
    pruned_offers: int,
    total_ms: float,
    price_max_age_hours: float = 24 * 30,
) -> PlanOut:
    """The API view of a plan."""
    chosen = result.choice
    work = chosen.hours * chosen.throughput_value * 3600
    unit = "tokens" if "token" in chosen.throughput.unit else "samples"
    kinds = (
        {"rental"}
        if request.acquisition == "rent"
        else {"ownership"}
        if request.acquisition == "own"
        else {"rental", "ownership"}
    )
    return PlanOut(
        plan_id=plan_id,
        created_at=created_at,
        status="time_limited" if result.outcome.status == "time_limited" else "optimal",
        model=resolved.arch.name,
        kind=resolved.kind,
        choice=_choice(chosen, snapshot, request),
        estimate=_estimate(chosen, work, unit),
        cost=_cost(chosen),
        alternatives=[
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
        ],
        rejected=[
            RejectedGpu(
                gpu=gpu_id,
                gpu_name=snapshot.gpus[gpu_id].name,
                reasons=[RejectionOut(reason=r, detail=d) for r, d in reasons],
            )
            for gpu_id, reasons in result.rejected.items()
        ],
        pareto=[
            ParetoPoint(
                gpu=p.supply.gpu_id,
                gpu_count=p.gpu_count,
                acquisition=p.supply.acquisition,
                provider=p.supply.provider,
                instance_type=p.supply.instance_type,
                hours=p.hours,
                cost_usd=p.cost_usd,
                chosen=p is chosen,
            )
            for p in result.pareto
        ],
        price_sheet=_sheets(snapshot, created_at, kinds, price_max_age_hours),
        solver=SolverOut(
            backend=result.outcome.backend,
            status="time_limited" if result.outcome.status == "time_limited" else "optimal",
            gap=result.outcome.gap,
            objective=request.objective,
            configurations_tried=result.configurations_tried,
            candidates=result.candidates,
            pruned_dominated=result.pruned + pruned_offers,
            milp_variables=len(result.pareto),
            solve_ms=result.outcome.solve_ms,
            total_ms=total_ms,
        ),
    )
