"""Time limits on requests, so a stalled or deliberately slow client cannot hold a connection forever.

uvicorn bounds an idle connection between requests (``timeout_keep_alive``) and the size of a request
head (h11's ``max_incomplete_event_size``), but not the time a head takes to arrive, nor a body: a
client that sends half a request line, or a ``Content-Length`` and then nothing, would keep its
connection (and, for a body, a waiting handler) for good. ``head_limited_h11`` closes a connection whose
request head is not complete within the limit; ``body_deadline`` answers 408 when a body is not.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar, Final

import anyio
from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    HTTPScope,
    Receive,
    ReceiveMessage,
    Scope,
    Send,
)
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.errors import RequestTimeout

__all__ = ["MAX_HEAD_BYTES", "HeadSizeLimit", "body_deadline", "head_limited_h11"]

MAX_HEAD_BYTES: Final = 16 * 1024
"""The largest request head (request line and headers): h11 refuses (400) a longer one still arriving,
and :class:`HeadSizeLimit` (431) one that arrived whole in one read (h11 parses that as it is)."""


def head_bytes(scope: HTTPScope) -> int:
    """The size of the request head as sent: request line and header lines."""
    line = len(scope["method"]) + len(scope.get("raw_path") or scope["path"].encode()) + 12
    query = len(scope.get("query_string", b""))
    return line + query + sum(len(k) + len(v) + 4 for k, v in scope["headers"]) + 2


class HeadSizeLimit:
    """ASGI wrapper of the whole app: a request head over :data:`MAX_HEAD_BYTES` is a 431 problem."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or head_bytes(scope) <= MAX_HEAD_BYTES:
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "type": "about:blank",
                "title": "Request header fields too large",
                "status": 431,
                "detail": f"the request head is larger than {MAX_HEAD_BYTES // 1024} KiB",
                "instance": scope["path"],
            }
        ).encode()
        headers = [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
        ]
        start: HTTPResponseStartEvent = {"type": "http.response.start", "status": 431, "headers": headers}
        await send(start)
        await send(HTTPResponseBodyEvent(type="http.response.body", body=body, more_body=False))


class _HeadLimitedH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection that has not sent a whole request head in time."""

    head_timeout_s: ClassVar[float] = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out, self.cycle)

    def _head_timed_out(self, cycle: object) -> None:
        """No new request head since the timer started (``cycle`` unchanged and finished): close."""
        waiting = self.cycle is None or self.cycle.response_complete
        if self.cycle is cycle and waiting and not self.transport.is_closing():
            self.transport.close()


def head_limited_h11(timeout_s: float) -> type[H11Protocol]:
    """The protocol class for ``uvicorn.run(http=…)``: a request head must arrive within ``timeout_s``."""
    return type("HeadLimitedH11", (_HeadLimitedH11,), {"head_timeout_s": timeout_s})


def body_deadline(timeout_s: float) -> Any:
    """Litestar middleware: a request body must arrive in full within ``timeout_s`` of the first read,
    else the request fails with a 408 (``RequestTimeout``)."""

    def middleware(app: ASGIApp) -> ASGIApp:
        async def bounded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            deadline: float | None = None
            body_done = False

            async def receive_in_time() -> ReceiveMessage:
                nonlocal deadline, body_done
                if body_done:  # after the body, a wait for a disconnect is not limited
                    return await receive()
                if deadline is None:
                    deadline = anyio.current_time() + timeout_s
                with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                    message = await receive()
                    body_done = message["type"] != "http.request" or not message.get("more_body", False)
                    return message
                raise RequestTimeout(f"the request body did not arrive within {timeout_s:g} s")

            await app(scope, receive_in_time, send)

        return bounded

    return middleware
