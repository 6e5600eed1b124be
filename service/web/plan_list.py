"""``/plans``: the stored plans and fleets, newest first, with the API's filters (kind, GPU) and pages.

It reads what ``GET /v1/plans`` reads (:func:`service.plans.listing.list_plans`); each row links to the
stored plan's page. A filter the API refuses (an unknown kind or GPU) is shown beside the form.
"""

from __future__ import annotations

from typing import Any, Final

from litestar import Request, Response, get
from litestar.di import NamedDependency

from service.db.store import Store
from service.errors import ServiceError
from service.plans.listing import PlanListQuery, list_plans
from service.web.render import page
from solver import WorkloadKind

__all__ = ["plan_list_page"]

_PER_PAGE: Final = 50
_KINDS: Final[tuple[WorkloadKind, ...]] = ("train", "fine_tune", "batch_inference", "serving")


def _query(params: dict[str, str]) -> tuple[PlanListQuery, str | None]:
    kind = params.get("kind", "").strip() or None
    if kind is not None and kind not in _KINDS:
        return PlanListQuery(limit=_PER_PAGE), f"kind must be one of {', '.join(_KINDS)}"
    page_text = params.get("page", "1").strip() or "1"
    if not page_text.isdigit() or not 1 <= int(page_text) <= 10_000:
        return PlanListQuery(limit=_PER_PAGE), "page must be a whole number from 1"
    offset = (int(page_text) - 1) * _PER_PAGE
    gpu = params.get("gpu", "").strip() or None
    return PlanListQuery(kind=kind, gpu=gpu, limit=_PER_PAGE, offset=offset), None


@get("/plans", include_in_schema=False, sync_to_thread=True, opt={"form_query": True})
def plan_list_page(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[str]:
    """The stored plans and fleets (filters: ``kind``, ``gpu``; ``page``)."""
    params = {k: v for k, v in request.query_params.items() if k in ("kind", "gpu", "page")}
    query, error = _query(params)
    listed = None
    if error is None:
        try:
            listed = list_plans(store, query)
        except ServiceError as exc:
            error = exc.detail
    return page("plan_list.html", query=params, kinds=_KINDS, listed=listed, error=error,
                page_number=query.offset // _PER_PAGE + 1, per_page=_PER_PAGE)  # fmt: skip
