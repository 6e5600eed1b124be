"""Admission to the planner: a rate limit per client and a bounded queue in front of the solver slots.

A burst of plan requests is answered at once instead of waiting without end: beyond the client's rate
(``GPUPLAN_PLAN_RATE``, Litestar's ``RateLimitConfig``: a fixed window per client address) a 429, and
when every solver slot is busy and ``GPUPLAN_PLAN_QUEUE`` requests already wait, a 503; both carry
``Retry-After``. On PostgreSQL the rate is counted in the database, so replicas share one count per
client (``service.plans.rate_windows``); on DuckDB (one process) in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Final

import anyio
import anyio.to_thread
from litestar import Request
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.rate_limit import (
    DURATION_VALUES,
    CacheObject,
    DurationUnit,
    RateLimitConfig,
    RateLimitMiddleware,
)
from litestar.stores.base import Store as LitestarStore
from litestar.stores.memory import MemoryStore
from litestar.types import ASGIApp, Receive, Scope, Send

from service.errors import Overloaded
from service.plans.rate_windows import RateWindows

__all__ = ["PLAN_CONCURRENCY", "PlanQueue", "plan_rate_limit"]

PLAN_CONCURRENCY: Final = 4
"""Plans computed at once (off the event loop, in worker threads)."""

_PLAN_PATH: Final = "/v1/plans"
_PLAN_PAGES: Final = frozenset({"/plan", "/serving"})


class PlanQueue:
    """``slots`` plans run at once and at most ``waiting`` more wait; any further request is refused
    (``Overloaded``) at once. Counted on the event loop, so no lock is needed."""

    def __init__(self, slots: int = PLAN_CONCURRENCY, waiting: int = 32, retry_after_s: int = 1) -> None:
        self.slots = slots
        self.waiting = waiting
        self.retry_after_s = retry_after_s
        self.admitted = 0
        self._limiter: anyio.CapacityLimiter | None = None

    async def run[T](self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread once a slot is free; ``Overloaded`` when the queue is full."""
        if self.admitted >= self.slots + self.waiting:
            raise Overloaded(
                f"every plan slot is busy and {self.waiting} requests already wait; retry shortly",
                headers={"Retry-After": str(self.retry_after_s)},
            )
        if self._limiter is None:  # made on first use: a limiter belongs to a running event loop
            self._limiter = anyio.CapacityLimiter(self.slots)
        self.admitted += 1
        try:
            return await anyio.to_thread.run_sync(work, limiter=self._limiter)
        finally:
            self.admitted -= 1


class _SweepingRateLimit(RateLimitMiddleware):
    """Litestar's rate limit, also deleting expired entries once in ``sweep_every_s``: its memory store
    drops an entry only when the same client comes back, so every address ever seen would stay."""

    sweep_every_s: ClassVar[float] = 60.0

    def __init__(self, app: ASGIApp, config: RateLimitConfig) -> None:
        super().__init__(app, config)
        self._next_sweep = time.monotonic() + self.sweep_every_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self.sweep_every_s
            await self.sweep(self.config.get_store_from_app(scope["litestar_app"]))
        await super().__call__(scope, receive, send)

    async def sweep(self, store: LitestarStore) -> None:
        """Delete the windows that have ended."""
        if isinstance(store, MemoryStore):
            await store.delete_expired()


def _is_plan_request(request: Request[Any, Any, Any]) -> bool:
    """A request that runs a plan: ``POST /v1/plans``, and the plan pages (``/plan``, ``/serving``)
    when they plan — opened with a model, or saving one — so a page cannot bypass the limit."""
    path = request.url.path.rstrip("/")
    if path == _PLAN_PATH:
        return request.method == "POST"
    if path in _PLAN_PAGES:
        return request.method == "POST" or bool(request.query_params.get("model", "").strip())
    return False


class _SharedRateLimit(_SweepingRateLimit):
    """The same limit counted in the database every replica shares (``RateWindows``, PostgreSQL): each
    plan request is counted by one atomic statement, off the event loop, instead of in this process."""

    def __init__(self, app: ASGIApp, config: RateLimitConfig, windows: RateWindows) -> None:
        super().__init__(app, config)
        self.windows = windows

    def cache_key_from_request(self, request: Request[Any, Any, Any]) -> str:
        """Litestar's key (the client's address) and the rate: a new rate setting starts new windows."""
        return f"{super().cache_key_from_request(request)}::{self.max_requests}/{self.unit}"

    async def retrieve_cached_history(self, key: str, store: LitestarStore) -> CacheObject:
        """This request counted; the window as the requests before it left it (Litestar refuses when
        their count reaches the limit)."""
        hits, reset = await anyio.to_thread.run_sync(self.windows.hit, key, DURATION_VALUES[self.unit])
        return CacheObject(history=[reset] * (hits - 1), reset=reset)

    async def set_cached_history(self, key: str, cache_object: CacheObject, store: LitestarStore) -> None:
        """Counted already (``retrieve_cached_history``): only this request's place in the headers."""
        cache_object.history = [int(time.time()), *cache_object.history]

    async def sweep(self, store: LitestarStore) -> None:
        await anyio.to_thread.run_sync(self.windows.delete_expired)


def plan_rate_limit(
    rate: tuple[str, int] | None, windows: RateWindows | None = None
) -> list[DefineMiddleware]:
    """The app middleware that limits ``POST /v1/plans`` per client address (none when ``rate`` is None),
    counted in ``windows`` (shared by replicas) when given, else in this process."""
    if rate is None:
        return []
    unit: DurationUnit = rate[0]  # type: ignore[assignment]  # validated by Settings
    config = RateLimitConfig(
        rate_limit=(unit, rate[1]),
        check_throttle_handler=_is_plan_request,
        middleware_class=_SweepingRateLimit,
    )
    if windows is not None:
        return [DefineMiddleware(_SharedRateLimit, config=config, windows=windows)]
    return [config.middleware]
