"""Serving plans: the cheapest (possibly mixed) fleet of replicas that serves a request rate.

Replica types are the planner's supplies (the cheapest offer of each interchangeable group, and owned
nodes) × tensor-parallel degrees that fit inside one instance (tp > 1 only over NVLink/NVSwitch).
Each type's capacity per request class comes from the Mélange serving rows where a bucket matches,
else from the throughput and memory models (``solver.serving_capacity``), flagged ``derived``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import InvalidParameter
from service.plan_render import offer_ref, owned_ref
from service.plan_schemas import (
    ClassShare,
    FleetChoiceOut,
    FleetCostOut,
    FleetSolverOut,
    PriceSheetsOut,
    PriceSheetUse,
    RejectedGpu,
    RejectionOut,
    ReplicaOut,
    SavingOut,
    ServingPlanOut,
    SingleTypeOut,
)
from solver.candidates import Rejection, Supply
from solver.errors import InvalidWorkload, NoFeasiblePlan
from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.plan_spec import DEFAULT_FLEET_HOURS, PlanRequest
from solver.serving import FleetResult, ReplicaType, best_single_type, solve_fleet
from solver.serving_capacity import Capacity, class_capacity
from solver.serving_spec import RequestClass, validate_mix
from solver.workload import ResolvedWorkload, Workload, resolve_workload

__all__ = ["plan_fleet"]

_TPS = (1, 2, 4, 8)


def _validate(request: PlanRequest) -> tuple[float, list[RequestClass]]:
    if request.requests_per_s is None:
        raise InvalidParameter("requests_per_s", "a serving plan needs the request rate to serve")
    if request.request_mix is None:
        raise InvalidParameter("request_mix", "a serving plan needs the request sizes and their shares")
    try:
        validate_mix(request.request_mix)
    except InvalidWorkload as exc:
        raise InvalidParameter(exc.field, exc.message) from None
    return request.requests_per_s, list(request.request_mix)


def _resolved_for(template: Workload, tp: int) -> ResolvedWorkload | None:
    try:
        return resolve_workload(msgspec.structs.replace(template, gpu_count=tp, tp=tp))
    except InvalidWorkload:
        return None


def _replica_types(
    store: Store,
    snapshot: CatalogSnapshot,
    request: PlanRequest,
    template: Workload,
    supplies: Sequence[Supply],
    classes: list[RequestClass],
) -> tuple[list[ReplicaType], dict[str, Supply], list[Rejection]]:
    index = snapshot.profile_index()
    capacities: dict[tuple[str, int, str, int], Capacity] = {}
    types: list[ReplicaType] = []
    by_type: dict[str, Supply] = {}
    rejections: list[Rejection] = []
    for supply in supplies:
        gpu = snapshot.gpus[supply.gpu_id]
        linked = INTERCONNECT_RANK[supply.interconnect] >= INTERCONNECT_RANK["nvlink"]
        for tp in _TPS:
            if tp > supply.gpus_per_unit or supply.gpus_per_unit % tp or (tp > 1 and not linked):
                continue
            resolved = _resolved_for(template, tp)
            if resolved is None:
                continue
            interconnect: Interconnect = supply.interconnect if tp > 1 else "none"
            caps = [
                _capacity(capacities, snapshot, request, resolved, gpu, tp, interconnect, i, cls, index)
                for i, cls in enumerate(classes)
            ]
            if not any(c.requests_per_s > 0 for c in caps):
                rejections.append(
                    Rejection(
                        gpu_id=gpu.gpu_id,
                        reason="memory" if "KV" in caps[0].method else "throughput",
                        detail=f"tp={tp}: {caps[0].method}",
                        supply_id=supply.supply_id,
                        gpu_count=tp,
                    )
                )
                continue
            type_id = f"{supply.supply_id}|tp{tp}"
            types.append(
                ReplicaType(
                    type_id=type_id,
                    gpu_id=gpu.gpu_id,
                    tp=tp,
                    replicas_per_instance=supply.gpus_per_unit // tp,
                    usd_per_instance_hour=supply.usd_per_unit_hour,
                    capacities=caps,
                    offer_ref=supply.supply_id,
                )
            )
            by_type[type_id] = supply
    return types, by_type, rejections


def _capacity(
    cache: dict[tuple[str, int, str, int], Capacity],
    snapshot: CatalogSnapshot,
    request: PlanRequest,
    resolved: ResolvedWorkload,
    gpu: GpuSpec,
    tp: int,
    interconnect: Interconnect,
    class_index: int,
    cls: RequestClass,
    index: object,
) -> Capacity:
    key = (gpu.gpu_id, tp, interconnect, class_index)
    if key not in cache:
        cache[key] = class_capacity(
            snapshot.serving, resolved, gpu, tp, cls, request.slo,
            profiles=snapshot.profiles, gpus=snapshot.gpus, interconnect=interconnect, index=index,  # type: ignore[arg-type]
        )  # fmt: skip
    return cache[key]


def plan_fleet(
    store: Store,
    snapshot: CatalogSnapshot,
    request: PlanRequest,
    template: Workload,
    supplies: Sequence[Supply],
    pre_rejections: Sequence[Rejection],
    *,
    time_limit_s: float,
    price_max_age_hours: float,
) -> ServingPlanOut:
    """Size the fleet for ``request`` (kind ``serving``); raises NoFeasiblePlan when nothing serves it."""
    started = time.perf_counter()
    rate, classes = _validate(request)
    resolved = resolve_workload(template)
    if not resolved.arch.is_transformer:
        raise InvalidParameter(
            "model", f"{resolved.arch.name} is not a language model: serving plans size LLM fleets"
        )
    types, by_type, rejections = _replica_types(store, snapshot, request, template, supplies, classes)
    all_rejections = [*pre_rejections, *rejections]
    usable = {t.gpu_id for t in types}

    def rejected() -> dict[str, list[tuple[str, str]]]:
        grouped: dict[str, dict[str, str]] = {}
        for r in all_rejections:
            if r.gpu_id not in usable:
                grouped.setdefault(r.gpu_id, {}).setdefault(r.reason, r.detail)
        for gpu_id in snapshot.gpus:
            if gpu_id not in usable and gpu_id not in grouped:
                grouped[gpu_id] = {"filter": "no current offer or ownership price"}
        return {g: sorted(reasons.items()) for g, reasons in sorted(grouped.items())}

    if not types:
        raise NoFeasiblePlan("no GPU can serve this model and request mix", rejected())
    limits = request.constraints
    try:
        fleet = solve_fleet(
            classes,
            rate,
            types,
            max_utilization=request.max_utilization,
            max_gpus=limits.max_gpus,
            time_limit_s=time_limit_s,
        )
    except NoFeasiblePlan as exc:
        merged = rejected()
        for gpu_id, reasons in exc.rejected.items():
            merged.setdefault(gpu_id, []).extend(reasons)
        raise NoFeasiblePlan(str(exc), merged) from None
    single = best_single_type(
        classes,
        rate,
        types,
        max_utilization=request.max_utilization,
        max_gpus=limits.max_gpus,
        time_limit_s=time_limit_s,
    )
    hours = request.hours if request.hours is not None else DEFAULT_FLEET_HOURS
    if limits.budget_usd is not None and fleet.usd_per_hour * hours > limits.budget_usd:
        raise NoFeasiblePlan(
            f"the cheapest fleet costs ${fleet.usd_per_hour * hours:,.2f} over {hours:g} h, "
            f"above the ${limits.budget_usd:,.2f} budget",
            {g: [("budget", "the cheapest fleet is over budget")] for g in sorted(usable)},
        )
    type_of = {t.type_id: t for t in types}
    replicas = [
        _replica_out(type_of[type_id], by_type[type_id], fleet, classes, snapshot, request)
        for type_id in sorted(fleet.instances, key=lambda t: -fleet.instances[t])
    ]
    return ServingPlanOut(
        plan_id=f"pl-{uuid.uuid4().hex[:16]}",
        created_at=datetime.now(UTC),
        status="time_limited" if fleet.outcome.status == "time_limited" else "optimal",
        model=resolved.arch.name,
        kind="serving",
        requests_per_s=rate,
        max_utilization=request.max_utilization,
        choice=FleetChoiceOut(replicas=replicas),
        cost=FleetCostOut(usd_per_hour=fleet.usd_per_hour, hours=hours, total_usd=fleet.usd_per_hour * hours),
        best_single_type=_single_out(single, type_of, by_type, hours),
        saving_vs_single_type=None
        if single is None
        else SavingOut(
            usd_per_hour=single.usd_per_hour - fleet.usd_per_hour,
            total_usd=(single.usd_per_hour - fleet.usd_per_hour) * hours,
            fraction=(single.usd_per_hour - fleet.usd_per_hour) / single.usd_per_hour
            if single.usd_per_hour
            else 0.0,
        ),
        rejected=[
            RejectedGpu(
                gpu=g,
                gpu_name=snapshot.gpus[g].name,
                reasons=[RejectionOut(reason=r, detail=d) for r, d in rs],
            )
            for g, rs in rejected().items()
        ],
        price_sheet=_sheets(snapshot, request, price_max_age_hours),
        solver=FleetSolverOut(
            backend=fleet.outcome.backend,
            status="time_limited" if fleet.outcome.status == "time_limited" else "optimal",
            gap=fleet.outcome.gap,
            replica_types=len(types),
            pruned_dominated=len(fleet.pruned),
            solve_ms=fleet.outcome.solve_ms,
            total_ms=(time.perf_counter() - started) * 1000,
            message=fleet.outcome.message,
        ),
    )


def _replica_out(
    rtype: ReplicaType,
    supply: Supply,
    fleet: FleetResult,
    classes: list[RequestClass],
    snapshot: CatalogSnapshot,
    request: PlanRequest,
) -> ReplicaOut:
    shares = fleet.shares.get(rtype.type_id, [0.0] * len(classes))
    return ReplicaOut(
        gpu=rtype.gpu_id,
        gpu_name=snapshot.gpus[rtype.gpu_id].name,
        tp=rtype.tp,
        replicas=fleet.replicas[rtype.type_id],
        instances=fleet.instances[rtype.type_id],
        acquisition=supply.acquisition,
        offer=offer_ref(supply),
        owned=owned_ref(supply, request.owned_utilization),
        usd_per_hour=fleet.instances[rtype.type_id] * rtype.usd_per_instance_hour,
        load=fleet.load.get(rtype.type_id, 0.0),
        classes=[
            ClassShare(
                input_tokens=cls.input_tokens,
                output_tokens=cls.output_tokens,
                share_of_class=shares[i],
                capacity_requests_per_s=rtype.capacities[i].requests_per_s,
                capacity_provenance=rtype.capacities[i].provenance,
                capacity_confidence=rtype.capacities[i].confidence,
                capacity_method=rtype.capacities[i].method,
            )
            for i, cls in enumerate(classes)
        ],
    )


def _single_out(
    single: FleetResult | None, type_of: dict[str, ReplicaType], by_type: dict[str, Supply], hours: float
) -> SingleTypeOut | None:
    if single is None or not single.instances:
        return None
    type_id = next(iter(single.instances))
    rtype = type_of[type_id]
    return SingleTypeOut(
        gpu=rtype.gpu_id,
        tp=rtype.tp,
        replicas=single.replicas[type_id],
        instances=single.instances[type_id],
        offer=offer_ref(by_type[type_id]),
        usd_per_hour=single.usd_per_hour,
        total_usd=single.usd_per_hour * hours,
    )


def _sheets(snapshot: CatalogSnapshot, request: PlanRequest, max_age_hours: float) -> PriceSheetsOut:
    kinds = {"rent": {"rental"}, "own": {"ownership"}}.get(request.acquisition, {"rental", "ownership"})
    now = datetime.now(UTC)
    uses = [
        PriceSheetUse(
            version=s.version, source=s.source, kind=s.kind, fetched_at=s.fetched_at,
            age_hours=(now - s.fetched_at).total_seconds() / 3600,
        )
        for s in snapshot.sheets
        if s.kind in kinds
    ]  # fmt: skip
    warnings = [
        f"{u.kind} sheet {u.source!r} (version {u.version}) is {u.age_hours / 24:.0f} days old"
        for u in uses
        if u.age_hours > max_age_hours
    ]
    return PriceSheetsOut(versions=uses, warnings=warnings)
