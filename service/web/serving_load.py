"""``/serving/load``: what one GPU type does at a load — the page of ``POST /v1/throughput`` with
``kind: "serving"``. Its inputs live in the URL (model, GPU and count, precision, engine, KV cache,
input and output tokens, and a load: ``offline``, ``concurrency`` or ``requests_per_s`` with its
value); the answer is the engine model's, the API's own: throughput, TTFT, TPOT and end-to-end
percentiles, the replicas and their KV cache."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from service.db.store import Store
from service.errors import ServiceError
from service.estimates.schemas import ThroughputRequest, ThroughputResponse
from service.estimates.throughput import estimate_throughput_for
from service.web.query_forms import QueryError, convert_query
from service.web.render import page
from solver import ENGINES, InvalidWorkload, SolverError, list_models

__all__ = ["LOADS", "LOAD_FIELDS", "SERVING_LOAD_PAGES", "load_request_of"]

LOADS: Final = ("offline", "concurrency", "requests_per_s")
_NUMBERS: Final = ("gpu_count", "tp", "input_tokens", "output_tokens")
LOAD_FIELDS: Final = ("model", "gpu", "precision", "kv_cache", "engine", "load", "load_value", *_NUMBERS)
PRECISIONS: Final = ("bf16", "fp16", "fp8", "int8", "int4", "fp32")


def _field_of(path: str) -> str:
    if path.startswith("load."):
        return "load_value"
    return path.removeprefix("model.") or "model"


def _load_of(text: Mapping[str, str]) -> dict[str, object]:
    kind = text.get("load", "offline")
    if kind not in LOADS:
        raise QueryError("load", f"must be one of {', '.join(LOADS)}, got {kind!r}")
    if kind == "offline":
        return {"offline": True}
    if "load_value" not in text:
        raise QueryError("load_value", f"required: the {kind.replace('_', ' ')} to simulate")
    return {kind: text["load_value"]}


def load_request_of(query: Mapping[str, str]) -> ThroughputRequest:
    """The serving throughput request the query describes (``QueryError`` naming the field)."""
    text = {k: v.strip() for k, v in query.items() if k in LOAD_FIELDS and v.strip()}
    for required in ("model", "gpu", "input_tokens", "output_tokens"):
        if required not in text:
            raise QueryError(required, "required")
    body: dict[str, object] = {"kind": "serving", "model": {"name": text["model"]}, "gpu": text["gpu"],
                               "gpu_count": text.get("gpu_count", "1"), "load": _load_of(text)}  # fmt: skip
    body.update({k: text[k] for k in ("precision", "kv_cache", "engine", *_NUMBERS[1:]) if k in text})
    request: ThroughputRequest = convert_query(body, ThroughputRequest, _field_of)
    return request


def _answer(store: Store, query: Mapping[str, str]) -> dict[str, Any]:
    """``{"answer": …}`` or the error to show beside the form, naming its field."""
    try:
        answer: ThroughputResponse = estimate_throughput_for(store.snapshot, load_request_of(query))
    except QueryError as exc:
        return {"error": exc.message, "error_field": exc.field}
    except InvalidWorkload as exc:
        return {"error": exc.message, "error_field": _field_of(exc.field)}
    except ServiceError as exc:
        return {"error": exc.detail, "error_field": _field_of(str(exc.extra.get("field", ""))) or None}
    except SolverError as exc:
        return {"error": str(exc)}
    return {"answer": answer}


@get("/serving/load", include_in_schema=False, sync_to_thread=True, opt={"form_query": True})
def serving_load_page(store: NamedDependency[Store], request: Request[Any, Any, Any]) -> Response[str]:
    """The load form; with a model and a GPU given, what the engine model simulates at that load."""
    query = {k: v for k, v in request.query_params.items() if k in LOAD_FIELDS}
    context: dict[str, Any] = {"query": query, "answer": None, "error": None, "error_field": None,
                               "models": sorted({m.name for m in list_models()}), "engines": ENGINES,
                               "loads": LOADS, "precisions": PRECISIONS,
                               "gpus": sorted(g.name for g in store.snapshot.gpus.values())}  # fmt: skip
    if query.get("model", "").strip() or query.get("gpu", "").strip():
        context.update(_answer(store, query))
    return page("serving_load.html", **context)


SERVING_LOAD_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (serving_load_page,)
