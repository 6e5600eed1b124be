"""The plan pages: ``/serving`` (a request-mix form; with a model, the cheapest fleet), ``/plan`` (a workload form whose inputs live in the URL; opened with inputs, it
plans and stores the plan) and ``/plans/{plan_id}`` (a stored plan), with the plan's cost-vs-hours
Pareto chart at ``/plans/{plan_id}/pareto.svg``."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Annotated, Any, Final

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from service.buy_vs_rent.formats import chart_lock
from service.errors import ServiceError
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


def _form(query: dict[str, str], **extra: Any) -> dict[str, Any]:
    models = sorted({m.name for m in list_models()})
    return {"query": query, "models": models, "plan": None, "error": None, "error_field": None,
            "rejected": [], **extra}  # fmt: skip


def _planned(
    plans: PlanService, make: Callable[[], PlanRequest], form_field: Callable[[str], str]
) -> dict[str, Any]:
    """``{"plan": …}``, or the error to show beside the form (``form_field`` maps a request path to the
    page's field); the one way both plan pages run a plan."""
    try:
        return {"plan": plans.create(make())}
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


@get("/plan", **_PAGE)
def plan_page(plans: NamedDependency[PlanService], request: Request[Any, Any, Any]) -> Response[str]:
    """The workload form; with a model given, the plan (stored, so ``/plans/{id}`` shows it again)."""
    query = {k: v for k, v in request.query_params.items() if k in PLAN_FIELDS}
    if not query.get("model", "").strip():
        return page("plan.html", **_form(query))
    outcome = _planned(
        plans, lambda: plan_request_of(query), lambda f: f.removeprefix("model.").removeprefix("constraints.")
    )
    return page("plan.html", **_form(query, **outcome))


@get("/plans/{plan_id:str}", **_PAGE)
def stored_plan_page(plans: NamedDependency[PlanService], plan_id: PlanId) -> Response[str]:
    """A stored plan as it was made (404 page when there is none)."""
    try:
        plan = plans.get(plan_id)
    except ServiceError as exc:
        return page("not_found.html", status_code=404, what=exc.detail)
    return page("stored_plan.html", plan=plan, is_job=isinstance(plan, PlanOut))


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
        chosen = [p for p in points if p.chosen]
        axes.scatter([p.hours for p in chosen], [p.cost_usd for p in chosen], marker="*", s=220, color="#d62728",
                     label=f"chosen: {plan.choice.gpu_count} × {plan.choice.gpu_name}")  # fmt: skip
        ends = {id(min(points, key=lambda p: p.hours)), id(min(points, key=lambda p: p.cost_usd))}
        for p in points:  # label the fastest, the cheapest and the choice; the rest would overlap
            if p.chosen or id(p) in ends:
                axes.annotate(f"{p.gpu_count}× {p.gpu}, {p.provider or p.acquisition}", (p.hours, p.cost_usd),
                              fontsize=8, xytext=(6, 6), textcoords="offset points")  # fmt: skip
        if max(p.hours for p in points) > 10 * min(p.hours for p in points):
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


@get("/serving", **_PAGE)
def serving_page(plans: NamedDependency[PlanService], request: Request[Any, Any, Any]) -> Response[str]:
    """The request-mix form; with a model given, the cheapest fleet, its replicas and its saving."""
    query = {k: v for k, v in request.query_params.items() if k in SERVING_FIELDS}
    context = _form(query, rows=range(MIX_ROWS))
    if query.get("model", "").strip():
        context.update(
            _planned(
                plans, lambda: serving_request_of(query), lambda f: "share_0" if f == "request_mix" else f
            )
        )
    return page("serving.html", **context)


PLAN_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (plan_page, stored_plan_page, pareto_chart, serving_page)
