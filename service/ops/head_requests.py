"""``HEAD`` answers what ``GET`` would, without the body (RFC 9110 §9.3.2).

Litestar routes a ``HEAD`` to a GET handler only when the handler lists it, so every GET route
answered 405: monitoring probes, link checkers and caches that ask ``HEAD`` first were refused. This
middleware, outermost but for the request id and the head-size limit, runs a ``HEAD`` as the ``GET``
of the same URL and sends its status and headers (``Content-Length`` and ``ETag`` included, as the
RFC asks) with an empty body. A path without a GET keeps its 405 and its ``Allow`` header.
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HeadAsGet"]


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request is served as a ``GET`` whose body is dropped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)
