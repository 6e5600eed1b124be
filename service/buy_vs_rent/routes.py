"""The buy-vs-rent route: POST /v1/buy-vs-rent, own vs rent for one GPU type, as JSON, CSV (the monthly
schedule) or an SVG chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, cast

from litestar import Request, Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, Schema
from litestar.params import JSONBody, QueryParameter

from service.buy_vs_rent.compare import buy_vs_rent
from service.buy_vs_rent.formats import cumulative_cost_svg, monthly_csv
from service.buy_vs_rent.inputs import resolve_gpu
from service.buy_vs_rent.schemas import BuyVsRentRequest, BuyVsRentResponse
from service.db.store import Store
from service.errors import InvalidParameter
from service.http import ReadableResponse, decode_body_strictly, reject_deep_json, reject_unknown_query_params
from service.portfolios.demand import with_portfolio
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("finance")
"""Every route of this feature: tagged ``finance``, a 400 for a bad parameter or body."""

CSV_MEDIA_TYPE = "text/csv"
SVG_MEDIA_TYPE = "image/svg+xml"
_BY_MEDIA_TYPE = {"application/json": "json", CSV_MEDIA_TYPE: "csv", SVG_MEDIA_TYPE: "svg"}


@dataclass
class _FormatsOperation(Operation):
    """The operation's 200 response also documents the CSV and SVG representations."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        content = getattr(ok, "content", None)
        if isinstance(content, dict):
            content[CSV_MEDIA_TYPE] = OpenAPIMediaType(
                schema=Schema(
                    type=OpenAPIType.STRING,
                    description="The monthly schedule, one row per month; spreadsheet-safe (no formulas)",
                )
            )
            content[SVG_MEDIA_TYPE] = OpenAPIMediaType(
                schema=Schema(type=OpenAPIType.STRING, description="Chart of the cumulative cost per month")
            )


async def _reject_unknown_query(request: Request[Any, Any, Any]) -> None:
    """The app's request checks (this hook replaces them here: unknown query parameters, with a
    nameless one named; JSON depth; strict body decoding, so ``"gpu_count": "8"`` is a 400 here too)."""
    try:
        await reject_unknown_query_params(request)
    except InvalidParameter as exc:
        if exc.field:
            raise
        raise InvalidParameter(
            "query", "a query parameter without a name; this endpoint accepts: format"
        ) from exc
    await reject_deep_json(request)
    await decode_body_strictly(request)


def _negotiate(request: Request[Any, Any, Any], format: str | None) -> str:
    if format is not None:
        return format
    best = request.accept.best_match(list(_BY_MEDIA_TYPE), default="application/json")
    return _BY_MEDIA_TYPE.get(best or "application/json", "json")


@_API.post(
    "/buy-vs-rent",
    operation_id="buyVsRent",
    problems=(422,),
    status_code=200,
    operation_class=_FormatsOperation,
    before_request=_reject_unknown_query,
)
def buy_vs_rent_handler(
    request: Request[Any, Any, Any],
    store: NamedDependency[Store],
    data: JSONBody[BuyVsRentRequest],
    format: Annotated[
        Literal["json", "csv", "svg"] | None,
        QueryParameter(
            description="json (default), csv (the monthly schedule) or svg (cumulative cost chart); "
            "without it, the Accept header chooses (text/csv, image/svg+xml)"
        ),
    ] = None,
) -> Response[BuyVsRentResponse]:
    """Own vs rent: owned USD per busy GPU-hour against rent, break-even utilisation and month, NPVs,
    the monthly cash flows, a utilisation × rent grid and a ±20 % tornado, the own + rent hybrid for a
    demand profile, and every number's source. With ``portfolio_id``, the demand is that portfolio's
    measured work on the GPU, and the hybrid says how many of it to buy for the portfolio."""
    data = with_portfolio(data, store, resolve_gpu(store.snapshot, data.gpu))
    answer = buy_vs_rent(store.snapshot, data)
    chosen = _negotiate(request, format)
    if chosen == "csv":
        filename = f"buy-vs-rent-{answer.gpu_id}.csv"
        csv_response = ReadableResponse(
            content=monthly_csv(answer).encode(),
            media_type=CSV_MEDIA_TYPE,
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )
        # Response[bytes]: the annotation below documents the JSON body; the other media types are
        # added to the schema by _FormatsOperation.
        return cast("Response[BuyVsRentResponse]", csv_response)
    if chosen == "svg":
        svg_response = ReadableResponse(content=cumulative_cost_svg(answer), media_type=SVG_MEDIA_TYPE)
        return cast("Response[BuyVsRentResponse]", svg_response)
    return ReadableResponse(content=answer)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (buy_vs_rent_handler,)
"""The buy-vs-rent handler."""
