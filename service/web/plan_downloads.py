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

__all__ = ["plan_csv"]

_JOB_COLUMNS = ("rank", "gpu", "gpu_count", "acquisition", "provider", "instance_type", "region", "pricing",
                "hours", "cost_usd", "why")  # fmt: skip
_FLEET_COLUMNS = ("gpu", "tp", "replicas", "instances", "acquisition", "provider", "instance_type", "region",
                  "usd_per_hour", "load")  # fmt: skip


def _job_rows(plan: PlanOut) -> list[tuple[Any, ...]]:
    c, offer = plan.choice, plan.choice.offer
    chosen = (0, c.gpu, c.gpu_count, c.acquisition, offer.provider if offer else "", offer.instance_type if offer
              else "", offer.region if offer else "", offer.pricing if offer else "owned", plan.estimate.hours,
              plan.cost.total_usd, "chosen")  # fmt: skip
    return [chosen, *((a.rank, a.gpu, a.gpu_count, a.acquisition, a.provider or "", a.instance_type or "",
                       a.region or "", a.pricing, a.hours, a.cost_usd, a.why) for a in plan.alternatives)]  # fmt: skip


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
    writer.writerows(rows)
    return out.getvalue()


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
    body = (
        _csv(_JOB_COLUMNS, _job_rows(plan))
        if isinstance(plan, PlanOut)
        else _csv(_FLEET_COLUMNS, _fleet_rows(plan))
    )
    headers = {"Content-Disposition": f'attachment; filename="{plan.plan_id}.csv"'}
    return Response(body, media_type="text/csv", headers=headers)
