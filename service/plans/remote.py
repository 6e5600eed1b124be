"""``gpuplan plan --url``: plan through a running server instead of opening its database.

DuckDB lets one process open a file read-write, and a read-only open is refused while that process
holds it, so a CLI next to a running server asks the server (``POST /v1/plans``) for the plan.
"""

from __future__ import annotations

import httpx
import msgspec

from service.errors import FetchError, InvalidParameter
from service.plans.schemas import PlanOut, ServingPlanOut
from solver.errors import NoFeasiblePlan
from solver.plan_spec import PlanRequest

__all__ = ["plan_via_server"]

_TIMEOUT_S = 120.0


def plan_via_server(url: str, request: PlanRequest) -> PlanOut | ServingPlanOut:
    """The plan the server at ``url`` makes for ``request``; its problems as the CLI's errors."""
    endpoint = url.rstrip("/") + "/v1/plans"
    try:
        response = httpx.post(
            endpoint,
            content=msgspec.json.encode(request),
            headers={"content-type": "application/json"},
            timeout=_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise FetchError(f"cannot reach {endpoint}: {exc}") from None
    if response.status_code in (200, 201):
        return msgspec.json.decode(response.content, type=PlanOut | ServingPlanOut)
    try:
        problem = response.json()
    except ValueError:
        problem = {}
    detail = str(problem.get("detail") or f"HTTP {response.status_code} from {endpoint}")
    if response.status_code >= 500:
        raise FetchError(detail)
    if response.status_code == 422:
        raise NoFeasiblePlan(detail, rejected={})
    raise InvalidParameter(str(problem.get("field") or "workload"), detail)
