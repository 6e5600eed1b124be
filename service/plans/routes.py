"""The plan routes: POST /v1/plans (job plans and serving fleets) and GET /v1/plans/{plan_id}."""

from __future__ import annotations

from typing import Annotated, Final

import anyio
import anyio.to_thread
from litestar import Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody, PathParameter

from service.plans.pipeline import PlanService
from service.plans.schemas import PlanOut, ServingPlanOut
from service.problems import problem_responses
from solver.plan_spec import PlanRequest

__all__ = ["PLAN_CONCURRENCY", "ROUTES"]

PLAN_CONCURRENCY: Final = 4
"""Plans computed at once (off the event loop, in worker threads); more requests wait their turn."""

_limiter: anyio.CapacityLimiter | None = None


def _plan_limiter() -> anyio.CapacityLimiter:
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(PLAN_CONCURRENCY)
    return _limiter


@post(
    "/plans",
    operation_id="createPlan",
    tags=["plans"],
    status_code=201,
    responses=problem_responses(400, 422),
)
async def create_plan_handler(
    plans: NamedDependency[PlanService], data: JSONBody[PlanRequest]
) -> Response[PlanOut | ServingPlanOut]:
    """Choose GPU type, count, offer and layout that finish the work at the lowest cost (or soonest)
    within the constraints, explain the choice, store the plan. 422 when nothing can run it: the body
    says, per GPU type, why."""
    plan = await anyio.to_thread.run_sync(plans.create, data, limiter=_plan_limiter())
    return Response(plan, status_code=201, headers={"Location": f"/v1/plans/{plan.plan_id}"})


@get(
    "/plans/{plan_id:str}",
    operation_id="getPlan",
    tags=["plans"],
    sync_to_thread=True,
    responses=problem_responses(400, 404),
)
def get_plan_handler(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="The id POST /v1/plans returned", max_length=100)],
) -> PlanOut | ServingPlanOut:
    """A stored plan, exactly as it was returned."""
    return plans.get(plan_id)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (create_plan_handler, get_plan_handler)
"""The plan handlers, in registration order."""
