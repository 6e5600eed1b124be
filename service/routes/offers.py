"""GET /v1/offers: current rental offers, filterable, sortable, paginated."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import get
from litestar.datastructures import State
from litestar.params import QueryParameter

from service.catalog import OfferQuery, OfferSort, list_offers
from service.routes.common import problem_responses, store_from
from service.schemas import OfferPage

__all__ = ["list_offers_handler"]


@get(
    "/offers",
    operation_id="listOffers",
    tags=["catalog"],
    sync_to_thread=True,
    responses=problem_responses(400),
)
def list_offers_handler(
    state: State,
    gpu: Annotated[
        str | None,
        QueryParameter(description="GPU id, name or alias; H100 matches every H100 variant", max_length=200),
    ] = None,
    provider: Annotated[
        str | None, QueryParameter(description="e.g. aws, lambda, runpod", max_length=100)
    ] = None,
    region: Annotated[str | None, QueryParameter(description="Provider region", max_length=100)] = None,
    min_gpus: Annotated[
        int | None, QueryParameter(ge=1, le=1024, description="At least this many GPUs")
    ] = None,
    max_gpus: Annotated[
        int | None, QueryParameter(ge=1, le=1024, description="At most this many GPUs")
    ] = None,
    max_price: Annotated[
        float | None, QueryParameter(gt=0, le=1e9, description="On-demand USD per instance-hour, at most")
    ] = None,
    max_price_per_gpu: Annotated[
        float | None, QueryParameter(gt=0, le=1e9, description="On-demand USD per GPU-hour, at most")
    ] = None,
    interconnect: Annotated[
        Literal["none", "pcie", "nvlink", "nvswitch"] | None,
        QueryParameter(description="At least this class: none < pcie < nvlink < nvswitch"),
    ] = None,
    sort: Annotated[
        OfferSort, QueryParameter(description="Sort key; '-' for descending")
    ] = "price_per_gpu_hour_usd",
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 50,
    offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
) -> OfferPage:
    """Offers of the current price sheets, with price per instance-hour and per GPU-hour."""
    query = OfferQuery(
        gpu=gpu,
        provider=provider,
        region=region,
        min_gpus=min_gpus,
        max_gpus=max_gpus,
        max_price=max_price,
        max_price_per_gpu=max_price_per_gpu,
        interconnect=interconnect,
        sort=sort,
        limit=limit,
        offset=offset,
    )
    return list_offers(store_from(state), query)
