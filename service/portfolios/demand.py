"""Buy vs rent from the work: a stored portfolio's busy GPU-hours of one GPU type as the monthly demand
``POST /v1/buy-vs-rent`` prices (instead of an assumed utilisation), so its own + rent hybrid answers
"how many of GPU X should we buy for this portfolio".

The portfolio's buckets hold the busy GPU-hours of each type, owned and rented together (jobs by their
expected hours in each bucket, serving by its instances' hours); they are summed into months of
``pricing.HOURS_PER_MONTH`` hours from the portfolio's start (a bucket across a month boundary split by
its hours), and buy vs rent repeats that profile to fill its horizon: the portfolio's work, recurring.
"""

from __future__ import annotations

import math

import msgspec

from pricing import HOURS_PER_MONTH
from service.buy_vs_rent.schemas import BuyVsRentRequest
from service.db.store import Store
from service.errors import InvalidParameter, NotFound
from service.portfolios.logic import stored_portfolio
from service.portfolios.schemas import PortfolioOut

__all__ = ["monthly_demand", "with_portfolio"]


def monthly_demand(out: PortfolioOut, gpu_id: str) -> list[float]:
    """Busy GPU-hours of ``gpu_id`` per month of the portfolio's horizon."""
    months = max(1, math.ceil(out.horizon.buckets * out.bucket_hours / HOURS_PER_MONTH - 1e-9))
    demand = [0.0] * months
    for b in out.buckets:
        hours = b.gpu_hours.get(gpu_id, 0.0)
        start, end = b.bucket * out.bucket_hours, (b.bucket + 1) * out.bucket_hours
        for m in range(months):
            overlap = min(end, (m + 1) * HOURS_PER_MONTH) - max(start, m * HOURS_PER_MONTH)
            if overlap > 0:
                demand[m] += hours * overlap / out.bucket_hours
    return demand


def with_portfolio(request: BuyVsRentRequest, store: Store, gpu_id: str) -> BuyVsRentRequest:
    """``request`` with the portfolio's measured demand of ``gpu_id`` as ``monthly_demand_gpu_hours``
    (unchanged without ``portfolio_id``); a 400 when it also gives a demand, or the portfolio has no
    work on that GPU."""
    if request.portfolio_id is None:
        return request
    if request.utilization is not None or request.monthly_demand_gpu_hours is not None:
        raise InvalidParameter(
            "portfolio_id", "give portfolio_id or a demand (utilization, monthly_demand_gpu_hours), not both"
        )
    try:
        out = stored_portfolio(store, request.portfolio_id)
    except NotFound as exc:  # a field of the body that names nothing: the request is invalid, not the URL
        raise InvalidParameter("portfolio_id", f"no stored portfolio {request.portfolio_id!r}") from exc
    demand = monthly_demand(out, gpu_id)
    if max(demand) < 1:
        used = sorted({g for b in out.buckets for g in b.gpu_hours})
        raise InvalidParameter(
            "portfolio_id",
            f"portfolio {out.portfolio_id} has no work on {gpu_id}; it uses {', '.join(used) or 'no GPU'}",
        )
    return msgspec.structs.replace(request, monthly_demand_gpu_hours=demand)
