"""The plan page's inputs: URL query parameters → a job :class:`PlanRequest` (train, fine-tune, batch
inference), one form field per request field (:data:`PLAN_FORM_FIELDS`). Empty fields are left out so
the API's defaults apply; a value that does not convert or that the request rejects is reported with
its form field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from service.web.plan_fields import PLAN_FORM_FIELDS, field_for_path, put_field
from service.web.query_forms import convert_query
from solver import PlanRequest

__all__ = ["PLAN_FIELDS", "plan_request_of"]

PLAN_FIELDS: Final = tuple(f.name for f in PLAN_FORM_FIELDS)
"""Every query parameter the plan page reads."""


def plan_request_of(query: Mapping[str, str]) -> PlanRequest:
    """The plan request the query describes (``QueryError`` naming the field when it cannot be one)."""
    name = query.get("model", "").strip()  # empty: a model of the user's own shape (its fields below)
    body: dict[str, object] = {"model": {"name": name} if name else {}, "constraints": {}}
    for field in PLAN_FORM_FIELDS[1:]:
        text = query.get(field.name, "").strip()
        if text:
            put_field(body, field, text)
    request: PlanRequest = convert_query(body, PlanRequest, field_for_path)
    return request
