"""What the plan pages show around a plan: its downloads (JSON as the API answers it, CSV of its rows)
as ``data:`` links, so an unsaved plan downloads exactly as shown; the Pareto chart and its table; and,
for a workload nothing fits, the rejections by GPU name with the limits that would admit one."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from markupsafe import Markup

from service.db.snapshot import CatalogSnapshot
from service.http import readable_json
from service.plans.schemas import AnyPlan, PlanOut
from service.web.pareto_chart import ChartPoint, EdgePoint, chart_points, pareto_svg
from service.web.plan_downloads import plan_rows_csv
from service.web.render import usd
from solver import Rejection

__all__ = ["Relaxation", "downloads", "front_chart", "plan_views", "rejected_view", "relaxations"]


def _hours(value: float) -> str:
    return f"{value:,.0f} hours"


def _count(value: float) -> str:
    return f"{value:,.0f}"


_LIMITS: Final[dict[str, tuple[str, str, Callable[[float], str]]]] = {
    "deadline": ("constraints.deadline_hours", "deadline", _hours),
    "budget": ("constraints.budget_usd", "budget", usd),
    "quota": ("constraints.max_gpus", "GPUs at most", _count),
}


class Relaxation(NamedTuple):
    """A limit to relax: the request field, the value that admits a GPU, which GPU and how."""

    field: str
    label: str
    value: str
    gpu_name: str
    detail: str
    raw: float
    """The value as the request takes it."""


def _data_uri(media_type: str, body: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(body).decode('ascii')}"


def downloads(plan: AnyPlan) -> dict[str, str]:
    """``{"json": data URI, "csv": data URI, "name": file stem}`` of the plan as shown."""
    return {
        "json": _data_uri("application/json", readable_json(plan)),
        "csv": _data_uri("text/csv", plan_rows_csv(plan).encode()),
        "name": plan.plan_id,
    }


def _gpu_names(plan: PlanOut) -> dict[str, str]:
    """The GPU names the plan knows, by id (the choice, its front, alternatives and rejections)."""
    names = {r.gpu: r.gpu_name for r in plan.rejected}
    names.update({p.gpu: p.gpu_name for p in plan.pareto if p.gpu_name})
    names.update({a.gpu: a.gpu_name for a in plan.alternatives if a.gpu_name})
    names[plan.choice.gpu] = plan.choice.gpu_name
    return names


def front_chart(plan: PlanOut) -> tuple[list[ChartPoint], Markup]:
    """A job plan's Pareto points as the chart and its table number them, and the chart (with the
    configurations that fit only below the memory headroom beside the front)."""
    points = chart_points(plan.pareto)
    names = _gpu_names(plan)
    edge = [
        EdgePoint(hours=e.hours, cost_usd=e.cost_usd,
                  tip=f"fits only below the memory headroom: {e.gpu_count} × {names.get(e.gpu, e.gpu)}, "
                      f"{e.provider or 'owned'}; {e.hours:,.1f} h, {usd(e.cost_usd, True)}; peak "
                      f"{e.per_gpu_gib:,.1f} of {e.capacity_gib:g} GiB ({e.headroom:.0%} free)")
        for e in plan.pareto_below_headroom
    ]  # fmt: skip
    title = f"{plan.model}: cost against hours of the {len(points)} configurations no other beats on both"
    return points, pareto_svg(points, title, edge)


def plan_views(plan: AnyPlan) -> dict[str, Any]:
    """The chart, its points and the downloads for a plan page."""
    views: dict[str, Any] = {"downloads": downloads(plan), "chart": None, "points": [], "gpu_name": str}
    if isinstance(plan, PlanOut):
        points, chart = front_chart(plan)
        names = _gpu_names(plan)
        views.update(points=points, chart=chart, gpu_name=lambda gpu: names.get(gpu, gpu))
    return views


def _name(snapshot: CatalogSnapshot, gpu_id: str) -> str:
    try:
        return snapshot.gpu_spec(gpu_id).name
    except KeyError:  # a GPU the snapshot no longer has: its id is its name
        return gpu_id


def rejected_view(
    snapshot: CatalogSnapshot, rejected: Mapping[str, Sequence[Rejection]]
) -> list[tuple[str, Sequence[Rejection]]]:
    """The rejections by GPU name, sorted by name."""
    return sorted(((_name(snapshot, gpu), reasons) for gpu, reasons in rejected.items()), key=lambda r: r[0])


def relaxations(snapshot: CatalogSnapshot, rejected: Mapping[str, Sequence[Rejection]]) -> list[Relaxation]:
    """For each limit that ruled GPUs out, the least change that admits one: the GPU that came
    closest and the value of the limit that would admit it."""
    best: dict[str, tuple[float, str, Rejection]] = {}
    for gpu, reasons in rejected.items():
        for r in reasons:
            if r.reason in _LIMITS and r.admit_at is not None:
                held = best.get(r.reason)
                if held is None or r.admit_at < held[0]:
                    best[r.reason] = (r.admit_at, gpu, r)
    return [
        Relaxation(
            field=_LIMITS[reason][0],
            label=_LIMITS[reason][1],
            value=_LIMITS[reason][2](value),
            gpu_name=_name(snapshot, gpu),
            detail=r.detail,
            raw=value,
        )
        for reason, (value, gpu, r) in sorted(best.items())
    ]
