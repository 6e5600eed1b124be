"""``GET /v1/plans``: the stored plans, newest first, as one summary each (not the whole plans).

Each plan's summary is written in the plan's own row (columns of ``plans``, migration 16; before it
a table of its own, migration 7), so a list filters and pages on plain columns instead of parsing
every stored plan's JSON.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final, Literal

import msgspec

from service.catalog.gpu_names import resolve_gpu_names, resolve_slice
from service.db.store import Store
from service.errors import InvalidParameter
from service.plans.schemas import AnyPlan, PlanOut
from solver import WorkloadKind

__all__ = [
    "SUMMARY_COLUMNS",
    "PlanListQuery",
    "PlanPage",
    "PlanSummary",
    "list_plans",
    "parse_timestamp",
    "summary_row",
]


class PlanSummary(msgspec.Struct, kw_only=True):
    """What a list of plans shows of one; ``GET /v1/plans/{plan_id}`` returns the whole plan."""

    plan_id: str
    created_at: datetime
    plan_type: Literal["job", "serving"]
    kind: str
    model: str
    gpus: list[str]
    """The GPU of a job plan; every replica type's GPU of a serving fleet."""
    gpu_count: int
    """The job's GPUs; the fleet's GPUs (replicas x tensor-parallel degree, summed)."""
    total_usd: float
    hours: float


class PlanPage(msgspec.Struct, kw_only=True):
    items: list[PlanSummary]
    total: int
    limit: int
    offset: int


class PlanListQuery(msgspec.Struct, frozen=True, kw_only=True):
    kind: WorkloadKind | None = None
    gpu: str | None = None
    created_after: datetime | None = None
    limit: int = 50
    offset: int = 0


_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


def parse_timestamp(text: str, field: str) -> datetime:
    """An RFC 3339 date-time (with its offset), strictly: a bare number or date is a 400 naming ``field``."""
    match = _RFC3339.fullmatch(text)
    if match and match.group(1) == "60":  # a leap second: the moment just before it
        text = text[: match.start(1)] + "59" + text[match.end(1) :]
    try:
        if match is None:
            raise ValueError(text)
        return datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        raise InvalidParameter(field, f"not an RFC 3339 date-time (2026-12-01T00:00:00Z): {text!r}") from None


_COLUMNS: Final = "plan_id, created_at, plan_type, kind, model, gpus, gpu_count, total_usd, hours"

SUMMARY_COLUMNS: Final = ("plan_type", "model", "gpus", "gpu_count", "total_usd", "hours")
"""The columns of ``plans`` that hold its summary, in :func:`summary_row`'s order."""


def summary_row(plan: AnyPlan) -> list[Any]:
    """``plan``'s summary, column by column (:data:`SUMMARY_COLUMNS`), stored with the plan."""
    if isinstance(plan, PlanOut):
        return ["job", plan.model, [plan.choice.gpu], plan.choice.gpu_count, plan.cost.total_usd,
                plan.estimate.hours]  # fmt: skip
    gpus = list(dict.fromkeys(r.gpu for r in plan.choice.replicas))
    count = sum(r.replicas * r.tp for r in plan.choice.replicas)
    return ["serving", plan.model, gpus, count, plan.cost.total_usd, plan.cost.hours]


def _gpu_ids(store: Store, text: str) -> list[str]:
    """The catalog ids ``text`` names: a MIG slice, or every GPU an id, name or alias can denote."""
    snapshot = store.snapshot
    slice_id = resolve_slice(snapshot, text)
    return [slice_id] if slice_id else resolve_gpu_names(snapshot, text)


def list_plans(store: Store, query: PlanListQuery) -> PlanPage:
    """A page of plan summaries, newest first, after the query's filters."""
    where: list[str] = []
    params: list[Any] = []
    if query.kind is not None:
        where.append("kind = ?")
        params.append(query.kind)
    if query.gpu is not None:
        where.append("gpus && ?::VARCHAR[]")  # the lists overlap (DuckDB and PostgreSQL alike)
        params.append(_gpu_ids(store, query.gpu))
    if query.created_after is not None:
        where.append("created_at > ?")
        params.append(query.created_after)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    with store.cursor() as cur:
        total_row = cur.execute(f"SELECT count(*) FROM plans {clause}", params).fetchone()
        rows = cur.execute(
            f"SELECT {_COLUMNS} FROM plans {clause} ORDER BY created_at DESC, plan_id DESC LIMIT ? OFFSET ?",
            [*params, query.limit, query.offset],
        ).fetchall()
    items = [
        PlanSummary(
            plan_id=r[0],
            created_at=r[1],
            plan_type=r[2],
            kind=r[3],
            model=r[4],
            gpus=list(r[5]),
            gpu_count=int(r[6]),
            total_usd=float(r[7]),
            hours=float(r[8]),
        )
        for r in rows
    ]
    return PlanPage(
        items=items, total=int(total_row[0]) if total_row else 0, limit=query.limit, offset=query.offset
    )
