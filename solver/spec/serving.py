"""The request side of a serving plan: the mix of request sizes and the latency SLO.

A serving workload is a request rate split over :class:`RequestClass` es (prompt and output lengths
with the share of requests of that size) and an optional :class:`ServingSlo`. msgspec enforces the
``Meta`` bounds when a request is decoded; :func:`validate_mix` checks what the types cannot (the
shares sum to one) and re-checks each item, because a Struct built in code skips ``Meta`` bounds.
Failures are :class:`~solver.errors.InvalidWorkload` errors naming ``request_mix`` or
``request_mix[i].<field>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Final

import msgspec
from msgspec import Meta

from solver.errors import InvalidWorkload

__all__ = [
    "MAX_REQUEST_CLASSES",
    "SHARE_TOLERANCE",
    "RequestClass",
    "ServingLoad",
    "ServingSlo",
    "validate_mix",
]

SHARE_TOLERANCE: Final = 1e-6
"""How far the shares of a mix may sum from 1."""

MAX_REQUEST_CLASSES: Final = 64
"""Most request classes one mix may hold (the MILP has one share variable per class and replica type)."""

_Tokens = Annotated[int, Meta(ge=1, le=10_000_000)]


class RequestClass(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """Requests of one size: prompt and generated lengths, and their share of all requests."""

    input_tokens: Annotated[_Tokens, Meta(description="Prompt (input) tokens per request.")]
    output_tokens: Annotated[_Tokens, Meta(description="Generated (output) tokens per request.")]
    share: Annotated[
        float,
        Meta(
            ge=1e-9,
            le=1,
            description="Fraction of all requests of this size, at least 1e-9; shares sum to 1.",
        ),
    ]


class ServingLoad(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """How requests reach a replica: all at once (``offline``), a closed loop of ``concurrency``
    clients (each sends its next request when the last one finishes), or Poisson arrivals at
    ``requests_per_s``. Exactly one is given."""

    offline: Annotated[bool, Meta(description="true: every request queued at once (max throughput).")] = False
    concurrency: (
        Annotated[int, Meta(ge=1, le=65_536, description="Requests in flight (closed loop).")] | None
    ) = None
    requests_per_s: (
        Annotated[float, Meta(ge=1e-3, le=1e6, description="Poisson arrival rate, requests per second.")]
        | None
    ) = None
    requests: (
        Annotated[int, Meta(ge=10, le=20_000, description="Requests simulated (default: by the load).")]
        | None
    ) = None

    def mode(self) -> tuple[str, float]:
        """``(load, value)``: ``offline``, ``concurrency`` or ``requests_per_s`` and its number;
        raises :class:`InvalidWorkload` naming ``load`` unless exactly one is given."""
        given = [
            (name, value)
            for name, value in (
                ("offline", 1.0 if self.offline else None),
                ("concurrency", self.concurrency),
                ("requests_per_s", self.requests_per_s),
            )
            if value is not None
        ]
        if len(given) != 1:
            raise InvalidWorkload("load", "give exactly one of offline: true, concurrency or requests_per_s")
        name, value = given[0]
        return name, float(value)


class ServingSlo(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """Latency targets every replica must meet; ``None`` leaves that latency unconstrained."""

    ttft_ms: (
        Annotated[float, Meta(gt=0, description="Time to first token (queueing + prefill), milliseconds.")]
        | None
    ) = None
    tpot_ms: (
        Annotated[float, Meta(gt=0, description="Mean time per output token after the first, milliseconds.")]
        | None
    ) = None
    percentile: Annotated[
        float,
        Meta(
            gt=0,
            le=100,
            description="Percentile of requests the TTFT and TPOT targets apply to (default the 90th; "
            "simulated latencies are kept up to the 99th, so a higher one is read as 99).",
        ),
    ] = 90.0


def _check_item(index: int, item: RequestClass) -> None:
    """Re-check one class's bounds (Structs built in code bypass the ``Meta`` checks)."""
    where = f"request_mix[{index}]"
    for field in ("input_tokens", "output_tokens"):
        value = getattr(item, field)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidWorkload(f"{where}.{field}", f"must be a whole number of tokens >= 1, got {value!r}")
    if not (math.isfinite(item.share) and 0 < item.share <= 1):
        raise InvalidWorkload(f"{where}.share", f"must be in (0, 1], got {item.share!r}")


def validate_mix(mix: Sequence[RequestClass]) -> None:
    """Raise :class:`~solver.errors.InvalidWorkload` unless ``mix`` is a valid request mix.

    Valid: 1 to :data:`MAX_REQUEST_CLASSES` classes, each with positive token counts and a share in
    ``(0, 1]``, the shares summing to 1 within :data:`SHARE_TOLERANCE`.
    """
    if not mix:
        raise InvalidWorkload("request_mix", "must hold at least one request class")
    if len(mix) > MAX_REQUEST_CLASSES:
        raise InvalidWorkload(
            "request_mix", f"must hold at most {MAX_REQUEST_CLASSES} request classes, got {len(mix)}"
        )
    for index, item in enumerate(mix):
        _check_item(index, item)
    total = math.fsum(item.share for item in mix)
    if abs(total - 1.0) > SHARE_TOLERANCE:
        raise InvalidWorkload(
            "request_mix", f"shares must sum to 1 (within {SHARE_TOLERANCE:g}), got {total:.9g}"
        )
