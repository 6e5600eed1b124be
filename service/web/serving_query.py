"""The serving page's inputs: URL query parameters → a serving :class:`PlanRequest`. The request mix
is up to :data:`MIX_ROWS` rows of ``in_N``, ``out_N`` and ``share_N`` (rows left empty are dropped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from service.web.plan_fields import SERVING_FORM_FIELDS, field_for_path, put_field
from service.web.query_forms import convert_query
from solver import PlanRequest

__all__ = ["MIX_ROWS", "SERVING_FIELDS", "serving_field_of", "serving_request_of"]

MIX_ROWS: Final = 6
_TOP: Final = (
    "requests_per_s",
    "hours",
    "acquisition",
    "max_utilization",
    "min_replicas",
    "mix_threshold",
    "survive_instance_loss",
)
_SLO: Final = ("ttft_ms", "tpot_ms")
_MIX: Final = tuple(f"{part}_{i}" for i in range(MIX_ROWS) for part in ("in", "out", "share"))
SERVING_FIELDS: Final = ("model", *_TOP, *_SLO, "max_gpus", *_MIX, *(f.name for f in SERVING_FORM_FIELDS))


def serving_field_of(path: str) -> str:
    """The form field a request path names (the mix as a whole: its first share)."""
    if path == "request_mix":
        return "share_0"
    if path.startswith("request_mix["):
        row, _, part = path.removeprefix("request_mix[").partition("].")
        name = {"input_tokens": "in", "output_tokens": "out", "share": "share"}.get(part, "share")
        return f"{name}_{row}"
    return field_for_path(path)


def serving_request_of(query: Mapping[str, str]) -> PlanRequest:
    """The serving plan the query describes (``QueryError`` naming the field when it cannot be one)."""
    text = {k: v.strip() for k, v in query.items() if k in SERVING_FIELDS and v.strip()}
    name = text.get("model", "")  # empty: a model of the user's own shape (its fields below)
    body: dict[str, object] = {"kind": "serving", "model": {"name": name} if name else {}}
    body.update({k: text[k] for k in _TOP if k in text})
    mix = [
        {"input_tokens": text.get(f"in_{i}", ""), "output_tokens": text.get(f"out_{i}", ""), "share": text.get(f"share_{i}", "")}
        for i in range(MIX_ROWS)
        if any(f"{part}_{i}" in text for part in ("in", "out", "share"))
    ]  # fmt: skip
    if mix:
        body["request_mix"] = mix
    slo = {k: text[k] for k in _SLO if k in text}
    if slo:
        body["slo"] = slo
    if "max_gpus" in text:
        body["constraints"] = {"max_gpus": text["max_gpus"]}
    for field in SERVING_FORM_FIELDS:
        if field.name in text:
            put_field(body, field, text[field.name])
    request: PlanRequest = convert_query(body, PlanRequest, serving_field_of)
    return request
