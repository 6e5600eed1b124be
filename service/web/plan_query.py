"""The plan page's inputs: URL query parameters → a job :class:`PlanRequest` (train, fine-tune, batch
inference), one form field per request field (:data:`PLAN_FORM_FIELDS`). Empty fields are left out so
the API's defaults apply; a value that does not convert or that the request rejects is reported with
its form field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from service.web.plan_fields import PLAN_FORM_FIELDS, FormField, field_for_path, options_of
from service.web.query_forms import convert_query
from solver import PlanRequest

__all__ = ["PLAN_FIELDS", "plan_request_of"]

PLAN_FIELDS: Final = tuple(f.name for f in PLAN_FORM_FIELDS)
"""Every query parameter the plan page reads."""

_CHECKED: Final = ("on", "true", "1")


def _value(field: FormField, text: str) -> object:
    if field.widget == "check":
        return text in _CHECKED
    if field.widget == "list":
        return [part.strip() for part in text.split(",") if part.strip()]
    if field.widget == "targets" and text not in options_of("lora_targets"):
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _put(body: dict[str, object], path: tuple[str, ...], value: object) -> None:
    for part in path[:-1]:
        inner = body.setdefault(part, {})
        assert isinstance(inner, dict)
        body = inner
    body[path[-1]] = value


def plan_request_of(query: Mapping[str, str]) -> PlanRequest:
    """The plan request the query describes (``QueryError`` naming the field when it cannot be one)."""
    body: dict[str, object] = {"model": {"name": query.get("model", "").strip()}, "constraints": {}}
    for field in PLAN_FORM_FIELDS[1:]:
        text = query.get(field.name, "").strip()
        if text:
            _put(body, field.path, _value(field, text))
    request: PlanRequest = convert_query(body, PlanRequest, field_for_path)
    return request
