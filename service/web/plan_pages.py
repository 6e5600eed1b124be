"""The plan pages: ``/serving`` (a request-mix form; with a model, the cheapest fleet), ``/plan`` (a
workload form whose inputs live in the URL; opened with inputs, it plans), ``POST`` to either stores
the plan (a GET stores nothing) and opens ``/plans/{plan_id}`` (a stored plan), with the plan's
cost-vs-hours Pareto chart at ``/plans/{plan_id}/pareto.svg``. Planning pages go through the plan
queue and the plan rate limit, as ``POST /v1/plans`` does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final
from urllib.parse import urlencode

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter
from litestar.response import Redirect

from service.errors import Overloaded, ServiceError
from service.plans.admission import PlanQueue
from service.plans.pipeline import PlanService
from service.plans.schemas import AnyPlan, PlanOut
from service.web.plan_fields import (
    FIELD_GROUPS,
    PLAN_FORM_FIELDS,
    SERVING_FORM_FIELDS,
    SERVING_GROUPS,
    field_for_path,
    options_of,
)
from service.web.plan_query import PLAN_FIELDS, plan_request_of
from service.web.plan_views import front_chart, plan_views, rejected_view, relaxations
from service.web.query_forms import QueryError
from service.web.render import page
from service.web.serving_query import MIX_ROWS, SERVING_FIELDS, serving_field_of, serving_request_of
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


_SERVING_FORM: Final = {"fields": SERVING_FORM_FIELDS, "groups": SERVING_GROUPS, "rows": range(MIX_ROWS)}


def _form(query: dict[str, str], path: str = "/plan", **extra: Any) -> dict[str, Any]:
    models = sorted({m.name for m in list_models()})
    filled = {k for k, v in query.items() if v.strip()}
    context = {"query": query, "models": models, "plan": None, "error": None, "error_field": None,
               "rejected": [], "relax": [], "save_action": None, "chart": None, "points": [],
               "downloads": None, "fields": PLAN_FORM_FIELDS, "groups": FIELD_GROUPS,
               "options_of": options_of, "filled": filled, "relax_href": _relax_href(path, query), **extra}  # fmt: skip
    if context["plan"] is not None:
        context.update(plan_views(context["plan"]))
    return context


def _relax_href(path: str, query: dict[str, str]) -> Callable[[str, float], str]:
    """The page's URL with one limit (``constraints.deadline_hours`` …) set to ``value``."""

    def href(field: str, value: float) -> str:
        text = str(int(value)) if value == int(value) else repr(value)
        return f"{path}?" + urlencode({**query, field_for_path(field): text})

    return href


async def _planned(
    plans: PlanService,
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
        snapshot = plans.store.snapshot
        return {"error": str(exc), "rejected": rejected_view(snapshot, exc.rejected),
                "relax": relaxations(snapshot, exc.rejected)}  # fmt: skip
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
    outcome = await _planned(plans, plan_queue, plans.plan, lambda: plan_request_of(query), field_for_path)
    return page("plan.html", **_form(query, save_action=_save_action("/plan", query), **outcome))


@post("/plan", **_ASYNC_PAGE)
async def save_plan_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """Plan the query's workload again and store it: 303 to ``/plans/{id}`` (or the form with the error)."""
    query = {k: v for k, v in request.query_params.items() if k in PLAN_FIELDS}
    outcome = await _planned(plans, plan_queue, plans.create, lambda: plan_request_of(query), field_for_path)
    if "plan" in outcome:
        return Redirect(f"/plans/{outcome['plan'].plan_id}", status_code=303)
    return page("plan.html", **_form(query, **outcome))


@get("/plans/{plan_id:str}", **_PAGE)
def stored_plan_page(plans: NamedDependency[PlanService], plan_id: PlanId) -> Response[str]:
    """A stored plan as it was made (404 page when there is none)."""
    try:
        plan = plans.get(plan_id)
    except ServiceError as exc:
        return page("not_found.html", status_code=404, what=exc.detail)
    return page("stored_plan.html", plan=plan, is_job=isinstance(plan, PlanOut), save_action=None,
                **plan_views(plan))  # fmt: skip


@get("/plans/{plan_id:str}/pareto.svg", **_PAGE)
def pareto_chart(plans: NamedDependency[PlanService], plan_id: PlanId) -> Response[Any]:
    """The stored job plan's Pareto front of cost against hours, the choice marked."""
    try:
        plan: AnyPlan = plans.get(plan_id)
    except ServiceError as exc:
        return Response(exc.detail, status_code=404, media_type="text/plain")
    if not isinstance(plan, PlanOut):
        return Response("a serving plan has no cost-vs-hours front", status_code=404, media_type="text/plain")
    return Response(str(front_chart(plan)[1]), media_type="image/svg+xml")


@get("/serving", **_ASYNC_PAGE)
async def serving_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """The request-mix form; with a model given, the cheapest fleet, its replicas and its saving (not
    stored: the Save button stores it)."""
    query = {k: v for k, v in request.query_params.items() if k in SERVING_FIELDS}
    outcome: dict[str, Any] = {}
    if query.get("model", "").strip():
        outcome = await _planned(
            plans, plan_queue, plans.plan, lambda: serving_request_of(query), serving_field_of
        )
    return page("serving.html", **_form(query, "/serving", **_SERVING_FORM, save_action=_save_action("/serving", query),
                                        **outcome))  # fmt: skip


@post("/serving", **_ASYNC_PAGE)
async def save_serving_page(
    plans: NamedDependency[PlanService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """Size the query's fleet again and store it: 303 to ``/plans/{id}`` (or the form with the error)."""
    query = {k: v for k, v in request.query_params.items() if k in SERVING_FIELDS}
    outcome = await _planned(
        plans, plan_queue, plans.create, lambda: serving_request_of(query), serving_field_of
    )
    if "plan" in outcome:
        return Redirect(f"/plans/{outcome['plan'].plan_id}", status_code=303)
    return page("serving.html", **_form(query, "/serving", **_SERVING_FORM, **outcome))


PLAN_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (
    plan_page,
    save_plan_page,
    stored_plan_page,
    pareto_chart,
    serving_page,
    save_serving_page,
)
