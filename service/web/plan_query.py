"""The plan page's inputs: URL query parameters → a job :class:`PlanRequest` (train, fine-tune, batch
inference). Empty fields are left out so the API's defaults apply; a value that does not convert or
that the request rejects is reported with its form field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from service.web.query_forms import convert_query
from solver import PlanRequest

__all__ = ["PLAN_FIELDS", "plan_request_of"]

_TOP: Final = (
    "kind", "method", "precision", "tokens", "samples", "epochs", "seq_len", "batch_size", "output_len",
    "acquisition", "objective",
)  # fmt: skip
_LIMITS: Final = ("deadline_hours", "budget_usd", "max_gpus", "memory_headroom")
_LISTS: Final = ("gpus", "countries", "exclude_countries")
"""Fields given as comma-separated lists (GPU names; ISO 3166-1 alpha-2 country codes)."""
PLAN_FIELDS: Final = ("model", *_TOP, *_LIMITS, "spot", *_LISTS)
"""Every query parameter the plan page reads."""


def _field_of(path: str) -> str:
    return path.removeprefix("constraints.").removeprefix("model.").split("[")[0] or "model"


def plan_request_of(query: Mapping[str, str]) -> PlanRequest:
    """The plan request the query describes (``QueryError`` naming the field when it cannot be one)."""
    text = {k: v.strip() for k, v in query.items() if k in PLAN_FIELDS and v.strip()}
    body: dict[str, object] = {k: text[k] for k in _TOP if k in text}
    body["model"] = {"name": text.get("model", "")}
    limits: dict[str, object] = {k: text[k] for k in _LIMITS if k in text}
    if text.get("spot") in ("on", "true", "1"):
        limits["spot"] = True
    for name in _LISTS:
        if name in text:
            limits[name] = [item.strip() for item in text[name].split(",") if item.strip()]
    body["constraints"] = limits
    request: PlanRequest = convert_query(body, PlanRequest, _field_of)
    return request
