"""The plan routes: POST /v1/plans (job plans and serving fleets), GET /v1/plans (summaries, newest
first) and GET /v1/plans/{plan_id}."""

from __future__ import annotations

import functools
from typing import Annotated, Final

from litestar import Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody, PathParameter, QueryParameter

from service.db.store import Store
from service.http import Limit, Offset, ReadableResponse, allow_header_handler
from service.plans.admission import PLAN_CONCURRENCY, PlanQueue
from service.plans.listing import PlanListQuery, PlanPage, list_plans, parse_timestamp
from service.plans.pipeline import PlanService
from service.plans.schemas import PlanOut, ServingPlanOut
from service.problems import FeatureRoutes
from solver import PlanRequest, WorkloadKind

__all__ = ["PLAN_CONCURRENCY", "ROUTES"]

_API = FeatureRoutes("plans")
"""Every route of this feature: tagged ``plans``, a 400 for a bad parameter or body."""


@_API.post("/plans", operation_id="createPlan", problems=(422, 429, 503), status_code=201)
async def create_plan_handler(
    plans: NamedDependency[PlanService], plan_queue: NamedDependency[PlanQueue], data: JSONBody[PlanRequest]
) -> Response[PlanOut | ServingPlanOut]:
    """Choose GPU type, count, offer and layout that finish the work at the lowest cost (or soonest)
    within the constraints, explain the choice, store the plan. 422 when nothing can run it: the body
    says, per GPU type, why. 429 beyond the client's rate (GPUPLAN_PLAN_RATE) and 503 when the plan
    queue is full (GPUPLAN_PLAN_QUEUE), both with Retry-After."""
    plan = await plan_queue.run(functools.partial(plans.create, data))
    return ReadableResponse(plan, status_code=201, headers={"Location": f"/v1/plans/{plan.plan_id}"})


@_API.get("/plans", operation_id="listPlans")
def list_plans_handler(
    store: NamedDependency[Store],
    kind: Annotated[
        WorkloadKind | None, QueryParameter(description="Only plans of this workload kind")
    ] = None,
    gpu: Annotated[
        str | None,
        QueryParameter(
            description="Only plans on this GPU (id, name or alias; H100 matches every H100)", max_length=200
        ),
    ] = None,
    created_after: Annotated[
        str | None,
        QueryParameter(
            description="Only plans made after this time (RFC 3339, e.g. 2026-12-01T00:00:00Z)",
            max_length=40,
            schema_extra={"format": "date-time"},
        ),
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> PlanPage:
    """The stored plans, newest first, one summary each (GET /v1/plans/{plan_id} has the whole plan)."""
    after = None if created_after is None else parse_timestamp(created_after, "created_after")
    query = PlanListQuery(kind=kind, gpu=gpu, created_after=after, limit=limit, offset=offset)
    return list_plans(store, query)


@_API.get("/plans/{plan_id:str}", operation_id="getPlan", problems=(404,))
def get_plan_handler(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="The id POST /v1/plans returned", max_length=100)],
) -> PlanOut | ServingPlanOut:
    """A stored plan, exactly as it was returned."""
    return plans.get(plan_id)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (
    allow_header_handler("/plans"),  # before the GET and POST of /plans (see its docstring)
    create_plan_handler,
    list_plans_handler,
    get_plan_handler,
)
"""The plan handlers, in registration order."""
