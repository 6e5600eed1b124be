"""One plan pipeline for job plans and serving fleets: validate → solve (``solver``) → render → store.

Every stage reads one catalog snapshot (offers, GPUs, profiles, ownership rows), so a request runs no
catalog query; storing the plan is one insert. The kinds (:class:`~service.plans.jobs.JobPlans`,
:class:`~service.plans.fleets.ServingFleets`) differ only in what they validate, solve and render; the
workload, the supply filters, the supplies, the plan's id and time stamp and the store are shared.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import msgspec

from service.db.backend import Cursor
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import NotFound
from service.ops.metrics import PLAN_SOLVE_SECONDS
from service.plans.fleets import FleetSpec, ServingFleets, SolvedFleet
from service.plans.inputs import PlanInputs, PlanSettings
from service.plans.jobs import JobPlans
from service.plans.listing import save_summary
from service.plans.owned import OWNED_SUPPLIES
from service.plans.render import PlanStamp
from service.plans.schemas import AnyPlan
from service.plans.software_filter import software_filter
from service.plans.supply import RENTAL_SUPPLIES, SupplyFilter, SupplySet
from service.plans.throughput import ThroughputCache
from solver import (
    INFERENCE_KINDS,
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
        """The plan and its summary (for ``GET /v1/plans``), in one transaction."""

        def insert(cur: Cursor) -> None:
            cur.execute(
                "INSERT INTO plans VALUES (?, ?, ?, ?, ?)",
                [
                    plan.plan_id,
                    plan.created_at,
                    plan.kind,
                    msgspec.json.encode(request).decode(),
                    msgspec.json.encode(plan).decode(),
                ],
            )
            save_summary(cur, plan)

        self.store.transaction(insert)

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
