"""``/plans/{plan_id}/rows.csv``: a stored plan's rows as CSV for a spreadsheet (its JSON is
``GET /v1/plans/{plan_id}``).

A job plan gives the chosen configuration (rank 0) and its alternatives — GPU, count, seller, region,
price kind, hours, cost, why it lost; a serving fleet gives one row per replica type — GPU, tensor
parallelism, replicas, instances, seller, dollars per hour, load.
"""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from service.errors import ServiceError
from service.plans.pipeline import PlanService
from service.plans.schemas import AnyPlan, PlanOut
from solver import Layout

__all__ = ["plan_csv", "plan_rows_csv"]

_JOB_COLUMNS = ("rank", "gpu", "gpu_name", "gpu_count", "acquisition", "provider", "instance_type", "region",
                "country", "pricing", "usd_per_hour", "tp", "layout", "memory_gib", "memory_capacity_gib",
                "hours", "cost_usd", "lost_on", "why")  # fmt: skip
_FLEET_COLUMNS = ("gpu", "tp", "replicas", "instances", "acquisition", "provider", "instance_type", "region",
                  "usd_per_hour", "load")  # fmt: skip


def _layout(layout: Layout | None) -> str:
    if layout is None:
        return ""
    return f"tp{layout.tp} pp{layout.pp} cp{layout.cp} dp{layout.dp} {layout.zero} mb{layout.micro_batch}x{layout.gradient_accumulation}"


def _job_rows(plan: PlanOut) -> list[tuple[Any, ...]]:
    c, offer, m = plan.choice, plan.choice.offer, plan.estimate.memory
    chosen = (0, c.gpu, c.gpu_name, c.gpu_count, c.acquisition, offer.provider if offer else "",
              offer.instance_type if offer else "", offer.region if offer else "", offer.country or "" if offer
              else "", offer.pricing if offer else "owned", plan.cost.usd_per_hour, c.tp, _layout(c.layout),
              m.per_gpu_gib, m.capacity_gib, plan.estimate.hours, plan.cost.total_usd, "", "chosen")  # fmt: skip
    return [chosen, *((a.rank, a.gpu, a.gpu_name, a.gpu_count, a.acquisition, a.provider or "", a.instance_type
                       or "", a.region or "", a.country or "", a.pricing, a.usd_per_hour, a.tp, _layout(a.layout),
                       a.memory_gib, a.memory_capacity_gib, a.hours, a.cost_usd, a.lost_on or "", a.why)
                      for a in plan.alternatives)]  # fmt: skip


def _fleet_rows(plan: AnyPlan) -> list[tuple[Any, ...]]:
    rows = []
    for r in plan.choice.replicas:  # type: ignore[union-attr]  # a serving plan
        offer = r.offer
        rows.append((r.gpu, r.tp, r.replicas, r.instances, r.acquisition, offer.provider if offer else "",
                     offer.instance_type if offer else "", offer.region if offer else "", r.usd_per_hour, r.load))  # fmt: skip
    return rows


def _csv(columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([tuple("" if v is None else v for v in row) for row in rows])
    return out.getvalue()


def plan_rows_csv(plan: AnyPlan) -> str:
    """A job plan's choice and alternatives, or a fleet's replica types, as CSV (module docstring)."""
    if isinstance(plan, PlanOut):
        return _csv(_JOB_COLUMNS, _job_rows(plan))
    return _csv(_FLEET_COLUMNS, _fleet_rows(plan))


@get("/plans/{plan_id:str}/rows.csv", include_in_schema=False, sync_to_thread=True)
def plan_csv(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="A stored plan's id", max_length=64)],
) -> Response[str]:
    """The stored plan's rows as CSV (module docstring); 404 when there is none."""
    try:
        plan = plans.get(plan_id)
    except ServiceError as exc:
        return Response(exc.detail, status_code=404, media_type="text/plain")
    body = plan_rows_csv(plan)
    headers = {"Content-Disposition": f'attachment; filename="{plan.plan_id}.csv"'}
    return Response(body, media_type="text/csv", headers=headers)
