"""A plan made by a running server (``POST /v1/plans``), for the CLI while that server holds the database.

DuckDB lets one process open a file, and a read-only open is refused while that process holds it, so a
CLI next to a running server asks the server for the plan (``service.server.client``).
"""

from __future__ import annotations

import msgspec

from service.plans.schemas import PlanOut, ServingPlanOut
from service.server.client import ApiClient
from solver import NoFeasiblePlan, PlanRequest, Rejection, RejectionReason

__all__ = ["plan_via_server"]


class _Reason(msgspec.Struct):
    reason: RejectionReason
    detail: str
    admit_at: float | None = None


class _Rejected(msgspec.Struct):
    gpu: str
    reasons: list[_Reason]


class _Infeasible(msgspec.Struct):
    """The 422 problem of a workload nothing can run: why, per GPU type."""

    detail: str
    rejected: list[_Rejected] | None = None


def plan_via_server(server: ApiClient, request: PlanRequest) -> PlanOut | ServingPlanOut:
    """The plan the server makes for ``request``; a 422 as ``NoFeasiblePlan`` with its reasons per GPU,
    every other problem as the CLI's error of its status."""
    status, body = server.exchange(
        "POST",
        "/v1/plans",
        content=msgspec.json.encode(request),
        content_type="application/json",
        accept=(200, 201, 422),
    )
    if status == 422:
        infeasible = msgspec.json.decode(body, type=_Infeasible)
        rejected = {
            r.gpu: [
                Rejection(gpu_id=r.gpu, reason=x.reason, detail=x.detail, admit_at=x.admit_at)
                for x in r.reasons
            ]
            for r in infeasible.rejected or []
        }
        raise NoFeasiblePlan(infeasible.detail, rejected=rejected)
    return msgspec.json.decode(body, type=PlanOut | ServingPlanOut)
