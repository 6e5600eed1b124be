"""The portfolio routes: POST /v1/portfolios, GET /v1/portfolios/{portfolio_id} and its CSV schedule."""

from __future__ import annotations

import functools
from typing import Annotated, Final

from litestar import Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody, PathParameter

from service.http import ReadableResponse
from service.plans.admission import PlanQueue
from service.portfolios.logic import PortfolioService, schedule_csv
from service.portfolios.schemas import PortfolioOut, PortfolioRequest
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("portfolios")
_ID = Annotated[str, PathParameter(description="The id POST /v1/portfolios returned", max_length=64)]


@_API.post("/portfolios", operation_id="createPortfolio", problems=(422, 429, 503), status_code=201)
async def create_portfolio_handler(
    portfolios: NamedDependency[PortfolioService],
    plan_queue: NamedDependency[PlanQueue],
    data: JSONBody[PortfolioRequest],
) -> Response[PortfolioOut]:
    """Plan a quarter: schedule every job (one configuration and start each) and size every serving
    workload per bucket on owned, bought and rented GPUs within the deadlines, availability caps, budgets
    and owned capacity, at the least total cost, in one MILP; store it. 422 when no schedule exists: the
    body names the jobs and the smallest change that would admit them."""
    out = await plan_queue.run(functools.partial(portfolios.create, data))
    return ReadableResponse(out, status_code=201, headers={"Location": f"/v1/portfolios/{out.portfolio_id}"})


@_API.get("/portfolios/{portfolio_id:str}", operation_id="getPortfolio", problems=(404,))
def get_portfolio_handler(portfolios: NamedDependency[PortfolioService], portfolio_id: _ID) -> PortfolioOut:
    """A stored portfolio, exactly as it was returned."""
    return portfolios.get(portfolio_id)


@_API.get(
    "/portfolios/{portfolio_id:str}/schedule.csv",
    operation_id="getPortfolioCsv",
    problems=(404,),
    media_type="text/csv",
)
def get_portfolio_csv_handler(
    portfolios: NamedDependency[PortfolioService], portfolio_id: _ID
) -> Response[str]:
    """A stored portfolio's schedule as CSV: a row per job, per serving bucket's instances and per bucket's
    rented and owned spend."""
    out = portfolios.get(portfolio_id)
    headers = {"Content-Disposition": f'attachment; filename="{out.portfolio_id}.csv"'}
    return Response(schedule_csv(out), media_type="text/csv", headers=headers)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (
    create_portfolio_handler,
    get_portfolio_handler,
    get_portfolio_csv_handler,
)
