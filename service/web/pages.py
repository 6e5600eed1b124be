"""The web pages: ``/`` (what the service knows) and ``/buy-vs-rent`` (own vs rent, with its chart and
CSV), rendered on the server from the same logic as the API, readable without JavaScript."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from apscheduler.schedulers.base import BaseScheduler
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from service.buy_vs_rent.compare import buy_vs_rent
from service.buy_vs_rent.formats import cumulative_cost_svg, monthly_csv
from service.buy_vs_rent.inputs import resolve_gpu
from service.buy_vs_rent.own_inputs import OWN_INPUTS
from service.buy_vs_rent.schemas import BuyVsRentResponse
from service.db.store import Store
from service.errors import ServiceError
from service.http import readable_json
from service.portfolios.demand import with_portfolio
from service.price_sheets.refresh import Refresher
from service.settings import Settings
from service.web.benchmark_page import BENCHMARK_PAGES
from service.web.buy_vs_rent_query import FIELDS, request_of
from service.web.measurement_pages import MEASUREMENT_PAGES
from service.web.plan_downloads import plan_csv
from service.web.plan_list import plan_list_page
from service.web.plan_pages import PLAN_PAGES
from service.web.portfolio_pages import PORTFOLIO_PAGES
from service.web.query_forms import QueryError
from service.web.render import page
from service.web.serving_load import SERVING_LOAD_PAGES
from service.web.sheet_pages import SHEET_PAGES

__all__ = ["PAGES"]

_NO_SCHEMA: Final[dict[str, Any]] = {
    "include_in_schema": False,
    "sync_to_thread": True,
    "opt": {"form_query": True},  # the page reads its form fields (FIELDS) from the query itself
}


@get("/", **_NO_SCHEMA)
def home_page(
    store: NamedDependency[Store],
    refresher: NamedDependency[Refresher],
    scheduler: NamedDependency[BaseScheduler | None],
    settings: NamedDependency[Settings],
) -> Response[str]:
    """What the service knows: catalog size, price sheets with their age (those older than
    ``GPUPLAN_PRICE_MAX_AGE_HOURS``, which plans warn about, flagged stale), the scheduled sources with
    their last refresh, and where to go next."""
    snapshot = store.snapshot
    now = datetime.now(UTC)
    sheets = sorted(snapshot.sheets, key=lambda s: (s.kind, s.source))
    return page(
        "home.html",
        gpus=len(snapshot.gpus),
        offers=snapshot.current_offer_count,
        providers=len(snapshot.providers),
        profiles=len(snapshot.profiles),
        sheets=[(s, (now - s.fetched_at).total_seconds() / 86_400) for s in sheets],
        sources=refresher.statuses(scheduler),
        now=now,
        stale_after_days=settings.price_max_age_hours / 24,
    )


def _answer(store: Store, query: dict[str, str]) -> tuple[BuyVsRentResponse | None, str | None, str | None]:
    """(answer, field, error) for the query; no answer and no error before the form is filled."""
    if not query.get("gpu", "").strip():
        return None, None, None
    try:
        request = request_of(query)
        portfolio = with_portfolio(request, store, resolve_gpu(store.snapshot, request.gpu))
        return buy_vs_rent(store.snapshot, portfolio), None, None
    except QueryError as exc:
        return None, exc.field, exc.message
    except ServiceError as exc:
        field = str(exc.extra.get("field", ""))
        form_field = field.replace("own.", "own_").replace("rent.usd_per_gpu_hour", "rent_usd_per_gpu_hour")
        errors = exc.extra.get("errors") or [{"message": exc.detail}]
        return None, form_field or None, str(errors[0]["message"])


@get("/buy-vs-rent", **_NO_SCHEMA)
def buy_vs_rent_page(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[str]:
    """The form (inputs in the URL) and, once a GPU is given, the answer: headline, chart, tornado,
    monthly table with present values and book value, downloads."""
    query = {k: v for k, v in request.query_params.items() if k in FIELDS}
    answer, field, error = _answer(store, query)
    defaults = {a.name: a for a in answer.assumptions} if answer else {}
    return page(
        "buy_vs_rent.html",
        query=query,
        query_string=request.url.query or "",
        answer=answer,
        error=error,
        error_field=field,
        own_inputs=OWN_INPUTS,
        defaults=defaults,
        gpus=sorted(store.snapshot.gpus.values(), key=lambda g: g.name),
    )


def _download(store: Store, request: Request[Any, Any, Any]) -> BuyVsRentResponse | Response[str]:
    query = {k: v for k, v in request.query_params.items() if k in FIELDS}
    answer, _, error = _answer(store, query)
    if answer is None:
        return Response(error or "give gpu", status_code=400, media_type="text/plain")
    return answer


def _attachment(
    store: Store,
    request: Request[Any, Any, Any],
    suffix: str,
    media_type: str,
    body: Callable[[BuyVsRentResponse], bytes],
) -> Response[Any]:
    """The query's answer as a file (``body`` of it), or the 400 that says why there is none."""
    answer = _download(store, request)
    if isinstance(answer, Response):
        return answer
    name = f"buy-vs-rent-{answer.gpu_id}-{answer.gpu_count}x-{answer.horizon_months}m.{suffix}"
    return Response(
        body(answer), media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


@get("/buy-vs-rent/schedule.csv", **_NO_SCHEMA)
def schedule_csv(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[Any]:
    return _attachment(store, request, "csv", "text/csv; charset=utf-8", lambda a: monthly_csv(a).encode())


@get("/buy-vs-rent/answer.json", **_NO_SCHEMA)
def answer_json(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[Any]:
    """The answer the page shows, as ``POST /v1/buy-vs-rent`` gives it, as a file."""
    return _attachment(store, request, "json", "application/json", readable_json)


@get("/buy-vs-rent/chart.svg", **_NO_SCHEMA)
def chart_svg(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[Any]:
    answer = _download(store, request)
    if isinstance(answer, Response):
        return answer
    return Response(cumulative_cost_svg(answer), media_type="image/svg+xml")


PAGES: Final[tuple[HTTPRouteHandler, ...]] = (
    home_page,
    buy_vs_rent_page,
    schedule_csv,
    answer_json,
    chart_svg,
    *PLAN_PAGES,
    *PORTFOLIO_PAGES,
    *BENCHMARK_PAGES,
    *SERVING_LOAD_PAGES,
    plan_list_page,
    plan_csv,
    *SHEET_PAGES,
    *MEASUREMENT_PAGES,
)
"""The page handlers, mounted at the root (the API lives under /v1)."""
