"""Serving fleets: the cheapest (possibly mixed) fleet of replicas that serves a request rate.

Replica types are the pipeline's supplies (the cheapest offer of each interchangeable group, and owned
nodes) × tensor-parallel degrees that fit inside one instance (tp > 1 only over NVLink/NVSwitch) ×
precisions (the requested one, and the quantised ones the request allows: ``service.plans.quantised``).
Each type's capacity per request class comes from the engine model (``solver.engine_capacity``:
measured serving rows where a bucket matches, else simulated), cached per snapshot. The fleet MILP is
``solver.optimise.fleet`` under the request's redundancy (``min_replicas``, ``survive_instance_loss``);
a mix is recommended only above ``mix_threshold`` (``service.plans.fleet_choice``), and each chosen
type states the latencies it achieves at its load (``service.plans.fleet_latency``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, MutableMapping, Sequence
from typing import Any, NamedTuple, cast

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.errors import InvalidParameter
from service.plans.fleet_choice import choose_fleet
from service.plans.fleet_latency import replica_latency
from service.plans.inputs import PlanInputs, PlanSettings
from service.plans.quantised import precisions_tried, quantised_refusal
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
    ClassShare,
    FleetChoiceOut,
    FleetCostOut,
    FleetSolverOut,
    ReplicaLatencyOut,
    ReplicaOut,
    SavingOut,
    ServingPlanOut,
    SingleTypeOut,
)
from service.plans.throughput import ThroughputCache
from solver import (
    DEFAULT_FLEET_HOURS,
    INTERCONNECT_RANK,
    Capacity,
    FleetResult,
    FleetRules,
    GpuSpec,
    Interconnect,
    InvalidWorkload,
    KvCache,
    NoFeasiblePlan,
    PlanWarning,
    ProfileIndex,
    Rejection,
    ReplicaType,
    RequestClass,
    ResolvedWorkload,
    ServingPlan,
    ServingSetup,
    ServingSlo,
    Supply,
    Workload,
    best_single_type,
    by_gpu,
    decoder_refusal,
    engine_capacity,
    hardware_of,
    resolve_workload,
    solve_fleet,
)

__all__ = ["LOAD_DIGITS", "FleetSpec", "ReplicaOptions", "ServingFleets", "SolvedFleet"]

LOAD_DIGITS = 4
"""A replica type's load is reported to 0.01 %: the solver's count slack (``COUNT_TOLERANCE``, 1e-6)
would otherwise show as a load of 0.85000085 above a 0.85 limit."""

_TPS = (1, 2, 4, 8)
Rejected = dict[str, list[Rejection]]
"""Why each unusable GPU type cannot serve, one rejection per reason, by GPU id."""


class FleetSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A serving request's validated load: the rate and the request classes (mix) it splits into."""

    rate: float
    classes: list[RequestClass]


class ReplicaOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The replica types that can serve, the supply behind each (by type id), and why others cannot."""

    types: list[ReplicaType]
    supply_of: dict[str, Supply]
    rejections: list[Rejection]
    setups: dict[str, ServingSetup] = {}
    """What each type runs (model, GPU, precision, interconnect), for its latencies, by type id."""


class SolvedFleet(msgspec.Struct, frozen=True, kw_only=True):
    fleet: FleetResult
    single: FleetResult | None
    options: ReplicaOptions
    rejected: Rejected
    hours: float
    why: str = ""
    """Why this fleet (``service.plans.fleet_choice``)."""


_MAX_CAPACITIES = 50_000


class _CapacityKey(NamedTuple):
    """What one replica's capacity for one request size depends on, beyond the model and snapshot."""

    gpu_id: str
    tp: int
    interconnect: Interconnect
    precision: str
    kv_cache: KvCache
    input_tokens: int
    output_tokens: int
    slo: ServingSlo | None


class ServingFleets:
    """The serving kind of plan: validate the load, size the fleet with its MILP, render it."""

    def __init__(self, settings: PlanSettings, cache: ThroughputCache) -> None:
        self.settings = settings
        self.cache = cache

    def validate(self, request: ServingPlan, resolved: ResolvedWorkload) -> FleetSpec:
        """The model must be a language model (the rate and a valid mix are the request's own rules)."""
        refused = decoder_refusal(resolved.arch)
        if refused is not None:
            raise InvalidParameter("model", refused)
        return FleetSpec(rate=request.requests_per_s, classes=list(request.request_mix))

    def replica_types(self, inputs: PlanInputs[ServingPlan, FleetSpec]) -> ReplicaOptions:
        """Every replica type that can serve the request (a portfolio sizes them per bucket itself)."""
        return _replica_types(inputs, self.cache)

    def solve(self, inputs: PlanInputs[ServingPlan, FleetSpec]) -> SolvedFleet:
        """Size the fleet; raises NoFeasiblePlan (with reasons per GPU) when nothing serves it."""
        request, spec = inputs.request, inputs.spec
        options = _replica_types(inputs, self.cache)
        rejected = _rejected(inputs.snapshot, [*inputs.supplies.rejections, *options.rejections], options)
        if not options.types:
            raise NoFeasiblePlan("no GPU can serve this model and request mix", rejected)
        limits = request.constraints

        def size[T](how: Callable[..., T]) -> T:  # the fleet MILP and its best single-type answer
            return how(
                spec.classes,
                spec.rate,
                options.types,
                max_utilization=request.max_utilization,
                max_gpus=limits.max_gpus,
                time_limit_s=self.settings.time_limit_s,
                rules=FleetRules(
                    min_replicas=request.min_replicas, spare_instance=request.survive_instance_loss
                ),
            )

        try:
            cheapest: FleetResult = size(solve_fleet)
        except NoFeasiblePlan as exc:
            merged = {gpu_id: list(reasons) for gpu_id, reasons in rejected.items()}
            for gpu_id, reasons in exc.rejected.items():
                merged.setdefault(gpu_id, []).extend(reasons)
            raise NoFeasiblePlan(str(exc), merged) from None
        single: FleetResult | None = size(best_single_type)
        choice = choose_fleet(cheapest, single, request.mix_threshold)
        fleet = choice.fleet
        hours = request.hours if request.hours is not None else DEFAULT_FLEET_HOURS
        if limits.budget_usd is not None and fleet.usd_per_hour * hours > limits.budget_usd:
            raise NoFeasiblePlan(
                f"the cheapest fleet costs ${fleet.usd_per_hour * hours:,.2f} over {hours:g} h, "
                f"above the ${limits.budget_usd:,.2f} budget",
                {
                    g: [Rejection(gpu_id=g, reason="budget", detail="the cheapest fleet is over budget")]
                    for g in sorted(_usable(options))
                },
            )
        return SolvedFleet(
            fleet=fleet, single=single, options=options, rejected=rejected, hours=hours, why=choice.why
        )

    def render(
        self, inputs: PlanInputs[ServingPlan, FleetSpec], solved: SolvedFleet, stamp: PlanStamp
    ) -> ServingPlanOut:
        """The API view of a fleet."""
        fleet, single, hours = solved.fleet, solved.single, solved.hours
        type_of = {t.type_id: t for t in solved.options.types}
        sheets = price_sheets_used(
            inputs.snapshot, inputs.request.acquisition, stamp.created_at, self.settings.price_max_age_hours
        )
        return ServingPlanOut(
            plan_id=stamp.plan_id,
            created_at=stamp.created_at,
            status=plan_status(fleet.outcome),
            model=inputs.resolved.arch.name,
            kind="serving",
            requests_per_s=inputs.spec.rate,
            max_utilization=inputs.request.max_utilization,
            choice=FleetChoiceOut(
                replicas=[
                    _replica_out(type_of[type_id], inputs, solved, self.cache)
                    for type_id in sorted(fleet.instances, key=lambda t: -fleet.instances[t])
                ],
                gpus=sum(n * type_of[t].gpus_per_instance for t, n in fleet.instances.items()),
                why=solved.why,
            ),
            cost=FleetCostOut(
                usd_per_hour=fleet.usd_per_hour, hours=hours, total_usd=fleet.usd_per_hour * hours
            ),
            best_single_type=_single_out(inputs, solved, type_of),
            saving_vs_single_type=None if single is None else _saving(fleet, single, hours),
            rejected=rejected_gpus(inputs.snapshot, solved.rejected),
            warnings=[
                *_capacity_warnings(type_of, fleet),
                *host_warnings(inputs.supplies, _chosen_supplies(solved)),
                *country_warnings(inputs.supplies),
                *stale_warnings(sheets),
            ],
            price_sheet=sheets,
            solver=FleetSolverOut(
                backend=fleet.outcome.backend,
                status=plan_status(fleet.outcome),
                gap=fleet.outcome.gap,
                replica_types=len(solved.options.types),
                pruned_dominated=len(fleet.pruned),
                solve_ms=fleet.outcome.solve_ms,
                total_ms=stamp.total_ms,
                message=fleet.outcome.message,
            ),
        )


def _resolved_by_tp(template: Workload) -> dict[int, ResolvedWorkload]:
    """The workload on one replica of each tensor-parallel degree that can hold it."""
    resolved: dict[int, ResolvedWorkload] = {}
    for tp in _TPS:
        try:
            resolved[tp] = resolve_workload(msgspec.structs.replace(template, gpu_count=tp, tp=tp))
        except InvalidWorkload:
            continue
    return resolved


def _replica_types(inputs: PlanInputs[ServingPlan, FleetSpec], cache: ThroughputCache) -> ReplicaOptions:
    """Every supply × tensor-parallel degree × precision tried (the requested one, then the quantised
    ones the request allows where the software table says they run) that serves some request size."""
    request, template = inputs.request, inputs.template
    by_tp = _resolved_by_tp(template)
    capacities = cache.capacities(inputs.snapshot, by_tp[min(by_tp)]) if by_tp else {}
    found = ReplicaOptions(types=[], supply_of={}, rejections=[], setups={})
    for precision in precisions_tried(request):
        at = by_tp if precision == template.precision else _resolved_by_tp(
            msgspec.structs.replace(template, precision=precision)
        )  # fmt: skip
        for supply in inputs.supplies.supplies:
            refused = quantised_refusal(inputs.snapshot, supply.gpu_id, precision, template.precision)
            if refused is not None:
                found.rejections.append(
                    Rejection(
                        gpu_id=supply.gpu_id, reason="software", detail=refused, supply_id=supply.supply_id
                    )
                )
                continue
            _supply_types(inputs, capacities, supply, at, found)
    return found


def _supply_types(
    inputs: PlanInputs[ServingPlan, FleetSpec],
    capacities: MutableMapping[Hashable, Any],
    supply: Supply,
    by_tp: Mapping[int, ResolvedWorkload],
    found: ReplicaOptions,
) -> None:
    """Add to ``found`` the replica types of one supply at one precision (each fitting tp), or why not."""
    gpu = inputs.snapshot.gpu_spec(supply.gpu_id)
    index = inputs.snapshot.profile_index()
    linked = INTERCONNECT_RANK[supply.interconnect] >= INTERCONNECT_RANK["nvlink"]
    for tp, resolved in by_tp.items():
        if tp > supply.gpus_per_unit or supply.gpus_per_unit % tp or (tp > 1 and not linked):
            continue
        interconnect: Interconnect = supply.interconnect if tp > 1 else "none"
        setup = _setup(inputs, resolved, gpu, interconnect, index)
        caps = [_capacity(capacities, inputs, setup, tp, cls) for cls in inputs.spec.classes]
        if not any(c.requests_per_s > 0 for c in caps):
            found.rejections.append(
                Rejection(
                    gpu_id=gpu.gpu_id,
                    reason="memory" if "KV" in caps[0].method else "throughput",
                    detail=f"tp={tp}{_at(setup, inputs)}: {caps[0].method}",
                    supply_id=supply.supply_id,
                    gpu_count=tp,
                )
            )
            continue
        rtype = ReplicaType(
            type_id=f"{supply.supply_id}|tp{tp}{_at(setup, inputs).replace(' ', '|')}",
            gpu_id=gpu.gpu_id,
            tp=tp,
            replicas_per_instance=supply.gpus_per_unit // tp,
            usd_per_instance_hour=supply.usd_per_unit_hour,
            capacities=caps,
            offer_ref=supply.supply_id,
        )
        found.types.append(rtype)
        found.supply_of[rtype.type_id] = supply
        found.setups[rtype.type_id] = setup


def _at(setup: ServingSetup, inputs: PlanInputs[ServingPlan, FleetSpec]) -> str:
    """`` fp8`` (say) for a quantised replica type; empty at the requested precision."""
    return "" if setup.precision == inputs.template.precision else f" {setup.precision}"


def _setup(
    inputs: PlanInputs[ServingPlan, FleetSpec],
    resolved: ResolvedWorkload,
    gpu: GpuSpec,
    interconnect: Interconnect,
    index: ProfileIndex,
) -> ServingSetup:
    """What one replica runs: the model at its precision on ``gpu`` (measured hardware where profiled)."""
    hardware = (
        index.hardware(gpu.gpu_id)
        if gpu.gpu_id in index.gpus
        else hardware_of(gpu, inputs.snapshot.gpus_and_slices())
    )
    return ServingSetup(arch=resolved.arch, gpu=gpu, hardware=hardware, precision=resolved.precision,
                        kv_cache=resolved.kv_cache, interconnect=interconnect)  # fmt: skip


def _capacity(
    cache: MutableMapping[Hashable, Any],
    inputs: PlanInputs[ServingPlan, FleetSpec],
    setup: ServingSetup,
    tp: int,
    cls: RequestClass,
) -> Capacity:
    """One replica's capacity for one request size, computed once per model, GPU, tp, interconnect,
    precision, KV-cache format, size and SLO on a snapshot (``cache`` is shared across requests)."""
    slo = inputs.request.slo
    key = _CapacityKey(
        setup.gpu.gpu_id, tp, setup.interconnect, setup.precision, setup.kv_cache, cls.input_tokens,
        cls.output_tokens, slo,
    )  # fmt: skip
    found = cache.get(key)
    if found is None:
        if len(cache) >= _MAX_CAPACITIES:  # bounded: odd request sizes cannot grow it without end
            cache.clear()
        found = cache[key] = engine_capacity(inputs.snapshot.serving, setup, tp, cls, slo)
    return cast(Capacity, found)


def _chosen_supplies(solved: SolvedFleet) -> list[Supply]:
    """The supplies behind the fleet's replica types, each once."""
    chosen = {}
    for type_id in sorted(solved.fleet.instances):
        supply = solved.options.supply_of[type_id]
        chosen[supply.supply_id] = supply
    return list(chosen.values())


def _usable(options: ReplicaOptions) -> set[str]:
    return {t.gpu_id for t in options.types}


def _rejected(
    snapshot: CatalogSnapshot, rejections: Sequence[Rejection], options: ReplicaOptions
) -> Rejected:
    """Every GPU no replica type uses, with its reasons (MIG slices told under their parent)."""
    return by_gpu(snapshot.gpus_and_slices(), _usable(options), rejections)


def _capacity_warnings(type_of: Mapping[str, ReplicaType], fleet: FleetResult) -> list[PlanWarning]:
    """A ``low_confidence_capacity`` warning for each chosen replica type serving a request class on a
    low-confidence derived capacity."""
    found: list[PlanWarning] = []
    for type_id, shares in sorted(fleet.shares.items()):
        rtype = type_of[type_id]
        weak = [i for i, share in enumerate(shares) if share > 0 and rtype.capacities[i].confidence == "low"]
        if weak:
            found.append(
                PlanWarning(
                    code="low_confidence_capacity",
                    message=(
                        f"{rtype.gpu_id} (tp {rtype.tp}) serves request class(es) {', '.join(str(i) for i in weak)} "
                        "on a low-confidence derived capacity: measured serving rows for it would firm it up"
                    ),
                )
            )
    return found


def _replica_out(
    rtype: ReplicaType,
    inputs: PlanInputs[ServingPlan, FleetSpec],
    solved: SolvedFleet,
    cache: ThroughputCache,
) -> ReplicaOut:
    fleet, supply = solved.fleet, solved.options.supply_of[rtype.type_id]
    classes = inputs.spec.classes
    shares = fleet.shares.get(rtype.type_id, [0.0] * len(classes))
    instances = fleet.instances[rtype.type_id]
    return ReplicaOut(
        gpu=rtype.gpu_id,
        gpu_name=inputs.snapshot.gpu_spec(rtype.gpu_id).name,
        tp=rtype.tp,
        replicas=fleet.replicas[rtype.type_id],
        instances=fleet.instances[rtype.type_id],
        acquisition=supply.acquisition,
        offer=inputs.supplies.offers.get(supply.supply_id),
        owned=owned_ref(supply, inputs.request.owned_utilization),
        usd_per_hour=fleet.instances[rtype.type_id] * rtype.usd_per_instance_hour,
        load=round(fleet.load.get(rtype.type_id, 0.0), LOAD_DIGITS),
        classes=[
            ClassShare(
                input_tokens=cls.input_tokens,
                output_tokens=cls.output_tokens,
                share_of_class=shares[i],
                capacity_requests_per_s=rtype.capacities[i].requests_per_s,
                capacity_provenance=rtype.capacities[i].provenance,
                capacity_confidence=rtype.capacities[i].confidence,
                capacity_method=rtype.capacities[i].method,
                capacity_source=_row_source(inputs, rtype.capacities[i].sources),
            )
            for i, cls in enumerate(classes)
        ],
        gpus=instances * rtype.gpus_per_instance,
        precision=solved.options.setups[rtype.type_id].precision,
        latency=_latency(rtype, inputs, solved, cache),
        mig=mig_ref(inputs.snapshot, supply, instances * supply.gpus_per_unit),
    )


def _row_source(inputs: PlanInputs[ServingPlan, FleetSpec], serving_ids: list[int]) -> str | None:
    """The source of the serving row a measured capacity comes from (``None`` when none is cited)."""
    wanted = set(serving_ids)
    return next((row.source for row in inputs.snapshot.serving if row.serving_id in wanted), None)


def _latency(
    rtype: ReplicaType,
    inputs: PlanInputs[ServingPlan, FleetSpec],
    solved: SolvedFleet,
    cache: ThroughputCache,
) -> ReplicaLatencyOut | None:
    """What one replica of ``rtype`` achieves at the share of each request size the fleet routes to it."""
    shares = solved.fleet.shares.get(rtype.type_id, [0.0] * len(inputs.spec.classes))
    rates = [
        (cls.input_tokens, cls.output_tokens, inputs.spec.rate * cls.share * shares[i])
        for i, cls in enumerate(inputs.spec.classes)
    ]
    table = cache.capacities(inputs.snapshot, inputs.resolved)
    setup = solved.options.setups[rtype.type_id]
    return replica_latency(table, setup, rtype, rates, solved.fleet.replicas[rtype.type_id])


def _single_out(
    inputs: PlanInputs[ServingPlan, FleetSpec], solved: SolvedFleet, type_of: dict[str, ReplicaType]
) -> SingleTypeOut | None:
    single = solved.single
    if single is None or not single.instances:
        return None
    type_id = next(iter(single.instances))
    rtype = type_of[type_id]
    return SingleTypeOut(
        gpu=rtype.gpu_id,
        gpu_name=inputs.snapshot.gpu_spec(rtype.gpu_id).name,
        tp=rtype.tp,
        replicas=single.replicas[type_id],
        instances=single.instances[type_id],
        offer=inputs.supplies.offers.get(solved.options.supply_of[type_id].supply_id),
        usd_per_hour=single.usd_per_hour,
        total_usd=single.usd_per_hour * solved.hours,
    )


def _saving(fleet: FleetResult, single: FleetResult, hours: float) -> SavingOut:
    saved = single.usd_per_hour - fleet.usd_per_hour
    return SavingOut(
        usd_per_hour=saved,
        total_usd=saved * hours,
        fraction=saved / single.usd_per_hour if single.usd_per_hour else 0.0,
    )
