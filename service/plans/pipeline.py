"""One plan pipeline for job plans and serving fleets: validate → solve (``solver``) → render → store.

Every stage reads one catalog snapshot (offers, GPUs, profiles, ownership rows), so a request runs no
catalog query; storing the plan is one insert. The kinds (:class:`~service.plans.jobs.JobPlans`,
:class:`~service.plans.fleets.ServingFleets`) differ only in what they validate, solve and render; the
workload, the supply filters, the supplies, the plan's id and time stamp and the store are shared.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final, Protocol

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import NotFound
from service.ops.metrics import PLAN_SOLVE_SECONDS
from service.plans.fleets import FleetSpec, ReplicaOptions, ServingFleets, SolvedFleet
from service.plans.inputs import PlanInputs, PlanSettings
from service.plans.jobs import JobPlans
from service.plans.listing import SUMMARY_COLUMNS, summary_row
from service.plans.owned import OWNED_SUPPLIES, inventory_supplies
from service.plans.render import PlanStamp
from service.plans.schemas import AnyPlan
from service.plans.software_filter import software_filter
from service.plans.supply import RENTAL_SUPPLIES, SupplyFilter, SupplySet
from service.plans.throughput import ThroughputCache
from solver import (
    INFERENCE_KINDS,
    Enumeration,
    JobPlanRequest,
    JobTermsWithRules,
    PlanBase,
    PlanRequest,
    PlanResult,
    ResolvedWorkload,
    ServingPlan,
    Workload,
    resolve_workload,
)

__all__ = ["PlanKind", "PlanService", "workload_of"]


class PlanKind[Q: PlanBase, S, R](Protocol):
    """What differs between the kinds of plan: ``Q`` is the request they take, ``S`` what validation
    yields, ``R`` the solver's result."""

    def validate(self, request: Q, resolved: ResolvedWorkload) -> S: ...

    def solve(self, inputs: PlanInputs[Q, S]) -> R: ...

    def render(self, inputs: PlanInputs[Q, S], result: R, stamp: PlanStamp) -> AnyPlan: ...


_JOB_FIELDS = Workload.__struct_fields__


def workload_of(request: PlanBase) -> Workload:
    """The request's workload; its layout fields keep their defaults, since the planner varies them."""
    return Workload(**{f: getattr(request, f) for f in _JOB_FIELDS if hasattr(request, f)})


def _supplies(snapshot: CatalogSnapshot, request: PlanBase, filters: SupplyFilter) -> SupplySet:
    """The request's supplies (:func:`_market`), its ``owned_inventory`` in place of the full-cost owned
    supplies of those GPU types."""
    found = _market(snapshot, request, filters)
    if not request.owned_inventory:
        return found
    inventory = [
        s for s in inventory_supplies(snapshot, request.owned_inventory) if filters.keeps_gpu(s.gpu_id)
    ]
    if request.kind not in INFERENCE_KINDS:
        inventory = [s for s in inventory if s.gpu_id not in snapshot.mig_slices]
    held = {s.gpu_id for s in inventory}
    kept = [s for s in found.supplies if not (s.acquisition == "own" and s.gpu_id in held)]
    return msgspec.structs.replace(found, supplies=[*kept, *inventory])


def _market(snapshot: CatalogSnapshot, request: PlanBase, filters: SupplyFilter) -> SupplySet:
    """Rented supplies (when renting), then owned ones (when owning), after the request's filters;
    MIG slices only for inference kinds."""
    rented = (
        snapshot.derive(RENTAL_SUPPLIES).matching(filters)
        if request.acquisition in ("rent", "either")
        else SupplySet(supplies=[], rejections=[], passed_over=0, offers={})
    )
    slices = snapshot.mig_slices
    training = request.kind not in INFERENCE_KINDS  # slices serve inference only
    if training and any(s.gpu_id in slices for s in rented.supplies):
        rented = msgspec.structs.replace(
            rented, supplies=[s for s in rented.supplies if s.gpu_id not in slices]
        )
    if request.acquisition not in ("own", "either"):
        return rented
    owned, rejections = snapshot.derive(OWNED_SUPPLIES).at(request.owned_utilization)
    kept = (s for s in owned if filters.keeps_gpu(s.gpu_id) and not (training and s.gpu_id in slices))
    return msgspec.structs.replace(
        rented, supplies=[*rented.supplies, *kept], rejections=[*rented.rejections, *rejections]
    )


_INSERT_PLAN: Final = (
    f"INSERT INTO plans (plan_id, created_at, kind, request, plan, {', '.join(SUMMARY_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (5 + len(SUMMARY_COLUMNS)))})"
)


class PlanService:
    """Plans against one store: a throughput cache shared by requests, plans stored in the store."""

    def __init__(
        self, store: Store, *, time_limit_s: float = 5.0, price_max_age_hours: float = 24 * 30
    ) -> None:
        self.store = store
        self.settings = PlanSettings(time_limit_s=time_limit_s, price_max_age_hours=price_max_age_hours)
        self.throughput_cache = ThroughputCache()
        self._jobs = JobPlans(self.settings, self.throughput_cache)
        self._fleets = ServingFleets(self.settings, self.throughput_cache)

    def create(self, request: PlanRequest) -> AnyPlan:
        """Plan ``request``, store the plan and return it (its own rules checked first)."""
        plan = self.plan(request)
        self.save(plan, request)
        return plan

    def plan(self, request: PlanRequest) -> AnyPlan:
        """Plan ``request`` without storing it (the web pages store a plan only when asked to)."""
        request.check()
        if isinstance(request, ServingPlan):
            return self._run(self._fleets, request)
        return self._run(self._jobs, request)

    def job_candidates(
        self,
        request: JobPlanRequest,
        snapshot: CatalogSnapshot,
        adjust: Callable[[SupplySet], SupplySet] | None = None,
    ) -> tuple[PlanInputs[JobPlanRequest, JobTermsWithRules], Enumeration]:
        """A job's validated inputs and every candidate that could matter, deadline aside (portfolios);
        ``adjust`` may change the supplies first (a portfolio splits owned boards)."""
        request.check()
        inputs = self._validate(self._jobs, snapshot, request)
        if adjust is not None:
            inputs = msgspec.structs.replace(inputs, supplies=adjust(inputs.supplies))
        return inputs, self._jobs.enumerate(inputs)

    def serving_types(
        self, request: ServingPlan, snapshot: CatalogSnapshot
    ) -> tuple[PlanInputs[ServingPlan, FleetSpec], ReplicaOptions]:
        """A serving request's validated inputs and the replica types that can serve it (portfolios)."""
        request.check()
        inputs = self._validate(self._fleets, snapshot, request)
        return inputs, self._fleets.replica_types(inputs)

    def _run[Q: PlanBase, S, R](self, kind: PlanKind[Q, S, R], request: Q) -> AnyPlan:
        started = time.perf_counter()
        inputs = self._validate(kind, self.store.snapshot, request)
        solving = time.perf_counter()
        result = kind.solve(inputs)
        PLAN_SOLVE_SECONDS.labels(kind=request.kind).observe(time.perf_counter() - solving)
        return kind.render(inputs, result, PlanStamp.mint(started))

    def solve_job(
        self, request: JobPlanRequest
    ) -> tuple[PlanInputs[JobPlanRequest, JobTermsWithRules], PlanResult, AnyPlan]:
        """Plan a job on the current snapshot without storing it, keeping what the solver priced beside
        the answer (what to benchmark next compares the configurations the planner kept)."""
        return self._solved(self._jobs, request)

    def solve_fleet(
        self, request: ServingPlan
    ) -> tuple[PlanInputs[ServingPlan, FleetSpec], SolvedFleet, AnyPlan]:
        """Size a serving fleet without storing it, keeping the replica types it could use."""
        return self._solved(self._fleets, request)

    def _solved[Q: PlanBase, S, R](
        self, kind: PlanKind[Q, S, R], request: Q
    ) -> tuple[PlanInputs[Q, S], R, AnyPlan]:
        request.check()
        started = time.perf_counter()
        inputs = self._validate(kind, self.store.snapshot, request)
        result = kind.solve(inputs)
        return inputs, result, kind.render(inputs, result, PlanStamp.mint(started))

    def _validate[Q: PlanBase, S](
        self, kind: PlanKind[Q, S, Any], snapshot: CatalogSnapshot, request: Q
    ) -> PlanInputs[Q, S]:
        """The workload, the filters, then what the kind needs (each a 400 naming its field), in that
        order; then the supplies."""
        template = workload_of(request)
        resolved = resolve_workload(template)
        decodes_images = resolved.arch.family == "vision" and not resolved.is_inference
        filters = SupplyFilter.of(snapshot, request, decodes_images=decodes_images)
        spec = kind.validate(request, resolved)
        return PlanInputs(
            request=request,
            snapshot=snapshot,
            template=template,
            resolved=resolved,
            spec=spec,
            supplies=software_filter(snapshot, request, resolved, _supplies(snapshot, request, filters)),
        )

    def save(self, plan: AnyPlan, request: PlanBase) -> None:
        """The plan with its summary (for ``GET /v1/plans``): one row, one statement."""
        row = [plan.plan_id, plan.created_at, plan.kind, msgspec.json.encode(request).decode(),
               msgspec.json.encode(plan).decode(), *summary_row(plan)]  # fmt: skip
        self.store.transaction(lambda cur: cur.execute(_INSERT_PLAN, row))

    def get(self, plan_id: str) -> AnyPlan:
        """A stored plan, as it was returned when it was made."""
        with self.store.cursor() as cur:
            row = cur.execute("SELECT plan FROM plans WHERE plan_id = ?", [plan_id]).fetchone()
        if row is None:
            raise NotFound(f"no plan {plan_id!r}")
        plan: AnyPlan = msgspec.json.decode(row[0], type=AnyPlan)
        return plan

    def stored(self, plan_id: str) -> tuple[PlanRequest, AnyPlan]:
        """A stored plan with the request it answered (a 404 when there is none)."""
        with self.store.cursor() as cur:
            row = cur.execute("SELECT request, plan FROM plans WHERE plan_id = ?", [plan_id]).fetchone()
        if row is None:
            raise NotFound(f"no plan {plan_id!r}")
        request: PlanRequest = msgspec.json.decode(row[0], type=PlanRequest)
        plan: AnyPlan = msgspec.json.decode(row[1], type=AnyPlan)
        return request, plan
