"""Every error becomes an RFC 9457 ``application/problem+json`` response, mapped here once; the
:class:`Problem` schema and the OpenAPI entries of the problem responses a handler can give, declared
once per feature with :class:`FeatureRoutes`.

Not Litestar's ``ProblemDetailsPlugin``: its ``ProblemDetailsException.to_response`` builds a plain
``Response``, bypassing the app's :class:`~service.http.ReadableResponse` (problem bodies carry numbers
too: the rejections' hours and memory), and it still needs one mapping function per exception type,
which is what this table is."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException, TooManyRequestsException, ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.status_codes import (
    HTTP_400_BAD_REQUEST,
    HTTP_422_UNPROCESSABLE_ENTITY,
    HTTP_500_INTERNAL_SERVER_ERROR,
)
from litestar.types import AnyCallable, ExceptionHandlersMap

from service.errors import ServiceError
from service.http import ReadableResponse
from service.ops.logs import REQUEST_ID
from solver import (
    InfeasiblePortfolio,
    InvalidWorkload,
    LayoutDoesNotFit,
    NoFeasiblePlan,
    Rejection,
    SolverError,
    UnknownModel,
)

__all__ = [
    "PROBLEM_JSON",
    "FeatureRoutes",
    "Problem",
    "exception_handlers",
    "problem_response",
    "problem_responses",
]

PROBLEM_JSON = "application/problem+json"
_log = logging.getLogger("gpuplan.problems")
_UNKNOWN_FIELD = re.compile(r"unknown field `([^`]+)`")
_MISSING_FIELD = re.compile(r"missing required field `([^`]+)`")


class FieldError(msgspec.Struct, kw_only=True):
    field: str
    message: str
    source: str | None = None


class RejectionReason(msgspec.Struct, kw_only=True, omit_defaults=True):
    reason: str
    detail: str
    admit_at: float | None = None
    """For a limit (deadline, budget, quota): the ``constraints.deadline_hours``, ``budget_usd`` or
    ``max_gpus`` that would admit the configuration that came closest."""


class GpuRejection(msgspec.Struct, kw_only=True):
    gpu: str
    reasons: list[RejectionReason]


class Problem(msgspec.Struct, kw_only=True):
    """An RFC 9457 problem: ``field``/``errors`` name the offending input on a 400."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = None
    errors: list[FieldError] | None = None
    suggestions: list[str] | None = None
    candidates: list[str] | None = None
    rejected: list[GpuRejection] | None = None
    request_id: str | None = None


_PROBLEM_DESCRIPTIONS = {
    400: "Invalid input; `field` names the parameter",
    401: "Missing or wrong admin bearer token",
    403: "Writes are disabled (no admin token configured)",
    413: "The request body is too large",
    404: "No such resource",
    422: "The request is valid but cannot be satisfied; the body says why",
    429: "Too many requests from this client; retry after `Retry-After` seconds",
    503: "The database is unavailable",
    409: "A newer version of the source was stored while this sheet was being imported; nothing changed",
}


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problem+json responses a handler can give."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=_PROBLEM_DESCRIPTIONS[status],
            media_type=PROBLEM_JSON,
            generate_examples=False,
        )
        for status in statuses
    }


class FeatureRoutes:
    """What every route of one feature declares alike, said once: its OpenAPI tag, the problems all of
    its routes can answer (a 400 for a bad parameter or body, by default), and that a plain ``def``
    handler runs in a worker thread (it never blocks the event loop) unless it says otherwise."""

    def __init__(self, tag: str, problems: Iterable[int] = (400,)) -> None:
        self.tag = tag
        self.problems = frozenset(problems)

    def get(
        self, path: str, *, operation_id: str, problems: Iterable[int] = (), **options: Any
    ) -> Callable[[AnyCallable], HTTPRouteHandler]:
        return self._route(get, path, operation_id, problems, options)

    def post(
        self, path: str, *, operation_id: str, problems: Iterable[int] = (), **options: Any
    ) -> Callable[[AnyCallable], HTTPRouteHandler]:
        return self._route(post, path, operation_id, problems, options)

    def _route(
        self,
        method: Callable[..., Callable[[AnyCallable], HTTPRouteHandler]],
        path: str,
        operation_id: str,
        problems: Iterable[int],
        options: dict[str, Any],
    ) -> Callable[[AnyCallable], HTTPRouteHandler]:
        responses = {
            **problem_responses(*sorted(self.problems | set(problems))),
            **options.pop("responses", {}),
        }

        def declare(handler: AnyCallable) -> HTTPRouteHandler:
            if not inspect.iscoroutinefunction(handler):
                options.setdefault("sync_to_thread", True)
            return method(path, operation_id=operation_id, tags=[self.tag], responses=responses, **options)(
                handler
            )

        return declare


def problem_response(
    request: Request[Any, Any, Any], status: int, title: str, detail: str, **extra: Any
) -> Response[dict[str, Any]]:
    """A problem+json response for ``request``."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    body.update(extra)
    body["request_id"] = REQUEST_ID.get()  # the X-Request-ID header of the response, for support
    return ReadableResponse(content=body, status_code=status, media_type=PROBLEM_JSON)


def _service_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, ServiceError)
    response = problem_response(request, exc.status_code, exc.title, exc.detail, **exc.extra)
    response.headers.update(exc.headers)
    return response


def _invalid_workload(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, InvalidWorkload)
    extra: dict[str, Any] = {"field": exc.field, "errors": [{"field": exc.field, "message": exc.message}]}
    if isinstance(exc, UnknownModel):
        extra["suggestions"] = exc.suggestions
    return problem_response(request, HTTP_400_BAD_REQUEST, "Invalid request", str(exc), **extra)


def _reason(r: Rejection) -> dict[str, object]:
    """One rejection as the problem lists it (``admit_at`` only for a limit that states one)."""
    found: dict[str, object] = {"reason": r.reason, "detail": r.detail}
    if r.admit_at is not None:
        found["admit_at"] = r.admit_at
    return found


def _no_feasible_plan(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, NoFeasiblePlan)
    rejected = [
        {
            "gpu": gpu,
            "reasons": [_reason(r) for r in reasons],
        }
        for gpu, reasons in exc.rejected.items()
    ]
    return problem_response(
        request, HTTP_422_UNPROCESSABLE_ENTITY, "No feasible plan", str(exc), rejected=rejected
    )


def _infeasible_portfolio(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """No schedule of a portfolio: 422 naming each job that cannot fit and the smallest fixes found."""
    assert isinstance(exc, InfeasiblePortfolio)
    jobs = [msgspec.to_builtins(job) for job in exc.jobs]
    return problem_response(
        request, HTTP_422_UNPROCESSABLE_ENTITY, "No feasible portfolio", str(exc), jobs=jobs
    )


def _layout_does_not_fit(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """A valid workload no parallel layout runs on the asked GPUs: 422 naming the field to change."""
    assert isinstance(exc, LayoutDoesNotFit)
    extra: dict[str, Any] = {"field": exc.field, "errors": [{"field": exc.field, "message": exc.message}]}
    return problem_response(request, HTTP_422_UNPROCESSABLE_ENTITY, "Layout does not fit", str(exc), **extra)


def _solver_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """A valid request the models cannot answer (e.g. no calibration for that GPU)."""
    return problem_response(request, HTTP_422_UNPROCESSABLE_ENTITY, "Cannot estimate", str(exc))


def _validation_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """Litestar's own parameter/body validation: name every offending field."""
    assert isinstance(exc, ValidationException)
    errors: list[dict[str, Any]] = []
    raw = exc.extra if isinstance(exc.extra, list) else [exc.extra] if exc.extra else []
    for item in raw:
        if isinstance(item, dict):
            message = str(item.get("message", ""))
            field = str(item.get("key") or item.get("field") or "body")
            named = _UNKNOWN_FIELD.search(message) or _MISSING_FIELD.search(message)
            if item.get("qualified"):
                pass  # the strict body decoding named the whole path already ("data.shards")
            elif field == "data":  # Litestar names the whole body "data"; say which part of it
                field = named.group(1) if named else "body"
            elif named:
                field = f"{field}.{named.group(1)}"
            errors.append({"field": field, "message": message, "source": item.get("source")})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    else:
        detail = exc.detail or "invalid request"
        errors.append({"field": "body", "message": detail, "source": "body"})
    return problem_response(
        request, HTTP_400_BAD_REQUEST, "Invalid request", detail, field=errors[0]["field"], errors=errors
    )


def _http_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, HTTPException)
    if exc.status_code == HTTP_400_BAD_REQUEST:  # e.g. a body that is not JSON at all
        return problem_response(
            request,
            HTTP_400_BAD_REQUEST,
            "Invalid request",
            f"body: {exc.detail}",
            field="body",
            errors=[{"field": "body", "message": exc.detail, "source": "body"}],
        )
    title = {404: "Not found", 405: "Method not allowed", 413: "Request too large"}.get(
        exc.status_code, "Error"
    )
    extra = exc.extra if isinstance(exc.extra, dict) else {}
    response = problem_response(request, exc.status_code, title, exc.detail, **extra)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def _too_many_requests(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """Litestar's rate limit (429): a problem with ``Retry-After``, the seconds until its window resets."""
    assert isinstance(exc, TooManyRequestsException)
    headers = dict(exc.headers or {})
    reset = headers.get("RateLimit-Reset", "1")
    headers["Retry-After"] = str(max(1, int(reset))) if reset.isdigit() else "1"
    detail = "too many requests from this client; retry after the number of seconds in Retry-After"
    response = problem_response(request, exc.status_code, "Too many requests", detail)
    response.headers.update(headers)
    return response


def _unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    _log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem_response(
        request,
        HTTP_500_INTERNAL_SERVER_ERROR,
        "Internal error",
        "an unexpected error happened; it was logged",
    )


exception_handlers: ExceptionHandlersMap = {
    ServiceError: _service_error,
    InvalidWorkload: _invalid_workload,
    NoFeasiblePlan: _no_feasible_plan,
    InfeasiblePortfolio: _infeasible_portfolio,
    LayoutDoesNotFit: _layout_does_not_fit,
    SolverError: _solver_error,
    ValidationException: _validation_error,
    HTTPException: _http_error,
    TooManyRequestsException: _too_many_requests,
    Exception: _unexpected_error,
}
