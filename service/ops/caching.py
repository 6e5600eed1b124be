"""HTTP caching of the responses that never change: a stored plan (``GET /v1/plans/{plan_id}``) and
a price-sheet version (``GET /v1/price-sheets/{version}``).

Their 200 answers get a strong ``ETag`` (a hash of the body) and ``Cache-Control``; a request whose
``If-None-Match`` names that tag gets a 304 without a body. The body is still built (it is one row
read), so the saving is the transfer, and the tag is right whatever produced the body.
"""

from __future__ import annotations

import hashlib
from typing import Final

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, HTTPResponseStartEvent, Message, Receive, Scope, Send

__all__ = ["CACHE_CONTROL", "IMMUTABLE_OPERATIONS", "ImmutableCacheMiddleware", "etag_matches"]

IMMUTABLE_OPERATIONS: Final = frozenset({"getPlan", "getPriceSheet"})
"""The operations whose 200 answer for a given path never changes."""

CACHE_CONTROL: Final = "public, max-age=86400"
"""A day, not forever: a database made anew reuses sheet version numbers (the ETag then differs)."""


def etag_matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 weak comparison of ``If-None-Match`` (a list, or ``*``) with ``etag``."""
    wanted = etag.removeprefix("W/")
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or wanted in tags


class ImmutableCacheMiddleware:
    """Adds ``ETag`` and ``Cache-Control`` to the 200s of :data:`IMMUTABLE_OPERATIONS`; answers 304."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = getattr(scope.get("route_handler"), "operation_id", None)
        if scope["type"] != ScopeType.HTTP or operation not in IMMUTABLE_OPERATIONS:
            await self.app(scope, receive, send)
            return
        http = scope
        if http["method"] != "GET":
            await self.app(scope, receive, send)
            return
        asked = next((v.decode("latin-1") for k, v in http["headers"] if k == b"if-none-match"), None)
        start: HTTPResponseStartEvent | None = None
        chunks: list[bytes] = []

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] == 200:
                start = message
            elif start is None or message["type"] != "http.response.body":  # an error answer: as it is
                await send(message)
            else:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    await _finish(start, b"".join(chunks), asked, send)

        await self.app(scope, receive, buffered)


async def _finish(start: HTTPResponseStartEvent, body: bytes, asked: str | None, send: Send) -> None:
    """Send the held answer with its tag, or a bodiless 304 when the client has that tag."""
    etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
    headers = MutableScopeHeaders.from_message(start)
    headers["ETag"] = etag
    headers["Cache-Control"] = CACHE_CONTROL
    if asked is not None and etag_matches(asked, etag):
        start["status"] = 304
        for name in ("content-length", "content-type"):
            if name in headers:
                del headers[name]
        body = b""
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})
