"""The plan pages: ``/serving`` (a request-mix form; with a model, the cheapest fleet), ``/plan`` (a
workload form whose inputs live in the URL; opened with inputs, it plans), ``POST`` to either stores
the plan (a GET stores nothing) and opens ``/plans/{plan_id}`` (a stored plan), with the plan's
cost-vs-hours Pareto chart at ``/plans/{plan_id}/pareto.svg``. Planning pages go through the plan
queue and the plan rate limit, as ``POST /v1/plans`` does."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Annotated, Any, Final
from urllib.parse import urlencode

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter
from litestar.response import Redirect
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from service.buy_vs_rent.formats import chart_lock
from service.errors import Overloaded, ServiceError
from service.plans.admission import PlanQueue
from service.plans.pipeline import PlanService
from service.plans.schemas import AnyPlan, PlanOut
from service.web.plan_query import PLAN_FIELDS, plan_request_of
from service.web.query_forms import QueryError
from service.web.render import page, usd
from service.web.serving_query import MIX_ROWS, SERVING_FIELDS, serving_request_of
from solver import InvalidWorkload, NoFeasiblePlan, PlanRequest, SolverError, list_models

__all__ = ["PLAN_PAGES"]

PlanId = Annotated[str, PathParameter(description="A stored plan's id", max_length=64)]
_PAGE: Final[dict[str, Any]] = {
    "include_in_schema": False,
    "sync_to_thread": True,
    "opt": {"form_query": True},
}
_ASYNC_PAGE: Final[dict[str, Any]] = {"include_in_schema": False, "opt": {"form_query": True}}
"""The planning pages: async, since they wait for a slot of the plan queue."""


def _form(query: dict[str, str], **extra: Any) -> dict[str, Any]:
    models = sorted({m.name for m in list_models()})
    return {"query": query, "models": models, "plan": None, "error": None, "error_field": None,
            "rejected": [], "save_action": None, "chart": None, **extra}  # fmt: skip


async def _planned(
    plan_queue: PlanQueue,
    plan: Callable[[PlanRequest], AnyPlan],
    make: Callable[[], PlanRequest],
    form_field: Callable[[str], str],
) -> dict[str, Any]:
    """``{"plan": …}``, or the error to show beside the form (``form_field`` maps a request path to the
    page's field); the one way both plan pages run a plan: through the plan queue, as ``POST /v1/plans``
    (the rate limit counts it too: ``service.plans.admission``)."""
    try:
        return {"plan": await plan_queue.run(lambda: plan(make()))}
    except Overloaded as exc:
        return {"error": exc.detail}
    except QueryError as exc:
        return {"error": exc.message, "error_field": exc.field}
    except NoFeasiblePlan as exc:
        return {"error": str(exc), "rejected": sorted(exc.rejected.items())}
    except InvalidWorkload as exc:
        return {
            "error": exc.message,
            "error_field": "model" if exc.field == "model.name" else form_field(exc.field),
        }
    except ServiceError as exc:
        errors = exc.extra.get("errors") or [{"message": exc.detail}]
        return {
            "error": str(errors[0]["message"]),
            "error_field": form_field(str(exc.extra.get("field", ""))) or None,
        }
    except SolverError as exc:
        return {"error": str(exc)}


def _save_action(path: str, query: dict[str, str]) -> str:
    return f"{path}?{urlencode(query)}"


@get("/plan", **_ASYNC_PAGE)
async def plan_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """The workload form; with a model given, the plan — not stored: the page's Save button stores it
    (``POST /plan``) and opens it at ``/plans/{id}``."""
    query = {k: v for k, v in request.query_params.items() if k in PLAN_FIELDS}
    if not query.get("model", "").strip():
        return page("plan.html", **_form(query))
    outcome = await _planned(plan_queue, plans.plan, lambda: plan_request_of(query), _plan_field)
    if isinstance(outcome.get("plan"), PlanOut):
        outcome["chart"] = _svg_data_uri(_pareto_svg(outcome["plan"]))
    return page("plan.html", **_form(query, save_action=_save_action("/plan", query), **outcome))


def _plan_field(field: str) -> str:
    return field.removeprefix("model.").removeprefix("constraints.").split("[")[0]


@post("/plan", **_ASYNC_PAGE)
async def save_plan_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """Plan the query's workload again and store it: 303 to ``/plans/{id}`` (or the form with the error)."""
    query = {k: v for k, v in request.query_params.items() if k in PLAN_FIELDS}
    outcome = await _planned(plan_queue, plans.create, lambda: plan_request_of(query), _plan_field)
    if "plan" in outcome:
        return Redirect(f"/plans/{outcome['plan'].plan_id}", status_code=303)
    return page("plan.html", **_form(query, **outcome))


def _svg_data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


@get("/plans/{plan_id:str}", **_PAGE)
def stored_plan_page(plans: NamedDependency[PlanService], plan_id: PlanId) -> Response[str]:
    """A stored plan as it was made (404 page when there is none)."""
    try:
        plan = plans.get(plan_id)
    except ServiceError as exc:
        return page("not_found.html", status_code=404, what=exc.detail)
    return page("stored_plan.html", plan=plan, is_job=isinstance(plan, PlanOut), save_action=None, chart=None)


def _pareto_svg(plan: PlanOut) -> bytes:
    with chart_lock():
        figure = Figure(figsize=(8, 4.5), dpi=100)
        axes = figure.add_subplot()
        points = plan.pareto
        others = [p for p in points if not p.chosen]
        axes.plot([p.hours for p in points], [p.cost_usd for p in points], color="#9aa5b8", linewidth=0.8)
        axes.scatter(
            [p.hours for p in others], [p.cost_usd for p in others], label="other configurations on the front"
        )
        edge = plan.pareto_below_headroom
        if edge:
            axes.scatter([p.hours for p in edge], [p.cost_usd for p in edge], marker="v", facecolors="none",
                         edgecolors="#ff7f0e", label="fits only below the memory headroom")  # fmt: skip
        chosen = [p for p in points if p.chosen]
        axes.scatter([p.hours for p in chosen], [p.cost_usd for p in chosen], marker="*", s=220, color="#d62728",
                     label=f"chosen: {plan.choice.gpu_count} × {plan.choice.gpu_name}")  # fmt: skip
        ends = {id(min(points, key=lambda p: p.hours)), id(min(points, key=lambda p: p.cost_usd))}
        for p in points:  # label the fastest, the cheapest and the choice; the rest would overlap
            if p.chosen or id(p) in ends:
                axes.annotate(f"{p.gpu_count}× {p.gpu}, {p.provider or p.acquisition}", (p.hours, p.cost_usd),
                              fontsize=8, xytext=(6, 6), textcoords="offset points")  # fmt: skip
        hours = [p.hours for p in points] + [p.hours for p in edge]
        if max(hours) > 10 * min(hours):
            axes.set_xscale("log")
        axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: usd(v)))
        axes.set_xlabel(
            "hours to finish (expected wall time)" + (", log scale" if axes.get_xscale() == "log" else "")
        )
        axes.set_ylabel("total cost")
        axes.set_title(f"{plan.model}: cost against hours (Pareto front)")
        axes.grid(True, linewidth=0.3)
        axes.legend(loc="upper right", fontsize=8)
        figure.tight_layout()
        out = io.BytesIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


@get("/plans/{plan_id:str}/pareto.svg", **_PAGE)
def pareto_chart(plans: NamedDependency[PlanService], plan_id: PlanId) -> Response[Any]:
    """The stored job plan's Pareto front of cost against hours, the choice marked."""
    try:
        plan: AnyPlan = plans.get(plan_id)
    except ServiceError as exc:
        return Response(exc.detail, status_code=404, media_type="text/plain")
    if not isinstance(plan, PlanOut):
        return Response("a serving plan has no cost-vs-hours front", status_code=404, media_type="text/plain")
    return Response(_pareto_svg(plan), media_type="image/svg+xml")


@get("/serving", **_ASYNC_PAGE)
async def serving_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """The request-mix form; with a model given, the cheapest fleet, its replicas and its saving (not
    stored: the Save button stores it)."""
    query = {k: v for k, v in request.query_params.items() if k in SERVING_FIELDS}
    context = _form(query, rows=range(MIX_ROWS), save_action=_save_action("/serving", query))
    if query.get("model", "").strip():
        context.update(
            await _planned(plan_queue, plans.plan, lambda: serving_request_of(query), _serving_field)
        )
    return page("serving.html", **context)


def _serving_field(field: str) -> str:
    return "share_0" if field == "request_mix" else field


@post("/serving", **_ASYNC_PAGE)
async def save_serving_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """Size the query's fleet again and store it: 303 to ``/plans/{id}`` (or the form with the error)."""
    query = {k: v for k, v in request.query_params.items() if k in SERVING_FIELDS}
    outcome = await _planned(plan_queue, plans.create, lambda: serving_request_of(query), _serving_field)
    if "plan" in outcome:
        return Redirect(f"/plans/{outcome['plan'].plan_id}", status_code=303)
    return page("serving.html", **_form(query, rows=range(MIX_ROWS), **outcome))


PLAN_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (
    plan_page,
    save_plan_page,
    stored_plan_page,
    pareto_chart,
    serving_page,
    save_serving_page,
)
