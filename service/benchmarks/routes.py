"""POST /v1/plans/{plan_id}/benchmarks: what to benchmark next for a stored plan."""

from __future__ import annotations

from typing import Annotated, Final

from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter

from service.benchmarks.schemas import BenchmarkPlanOut
from service.benchmarks.shortlist import benchmark_shortlist
from service.plans.pipeline import PlanService
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("plans")


@_API.post(
    "/plans/{plan_id:str}/benchmarks", operation_id="planBenchmarks", problems=(404, 422), status_code=200
)
def plan_benchmarks_handler(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="The id POST /v1/plans returned", max_length=100)],
) -> BenchmarkPlanOut:
    """The configurations worth measuring before committing to a stored plan: those whose cost band
    overlaps the chosen one's, ranked by the saving a benchmark is expected to reveal less its cost,
    each with a recipe (offer, minutes, cost, the stack's commands). The request is planned again on
    the current catalog, so after new prices or imported measurements ``changes`` says what moved."""
    return benchmark_shortlist(plans, plan_id)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (plan_benchmarks_handler,)
"""The benchmarks handler."""
