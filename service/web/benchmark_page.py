"""``/plans/{plan_id}/benchmarks``: what to benchmark next for a stored plan, as a page (the same
answer as ``POST /v1/plans/{plan_id}/benchmarks``: it plans the stored request again and stores
nothing), with each configuration's recipe and the launch files of the plan."""

from __future__ import annotations

from typing import Annotated, Any, Final

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter

from service.benchmarks.shortlist import benchmark_shortlist
from service.errors import ServiceError
from service.plans.pipeline import PlanService
from service.web.render import page
from solver import InvalidWorkload, SolverError

__all__ = ["BENCHMARK_PAGES"]

_PAGE: Final[dict[str, Any]] = {"include_in_schema": False, "sync_to_thread": True}


@get("/plans/{plan_id:str}/benchmarks", **_PAGE)
def benchmarks_page(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="A stored plan's id", max_length=64)],
) -> Response[str]:
    """The short list of a stored plan (404 page when there is none)."""
    try:
        answer = benchmark_shortlist(plans, plan_id)
    except ServiceError as exc:
        return page("not_found.html", status_code=exc.status_code, what=exc.detail)
    except (SolverError, InvalidWorkload) as exc:  # the stored request no longer plans on this catalog
        return page("not_found.html", status_code=422, what=f"plan {plan_id} cannot be planned again: {exc}")
    return page("benchmarks.html", answer=answer)


BENCHMARK_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (benchmarks_page,)
