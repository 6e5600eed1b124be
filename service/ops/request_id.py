"""Request ids: ``X-Request-ID`` is taken from the request when it is a sane token, otherwise made
up; it is echoed on the response, put in problem bodies and on every log line of the request.

It wraps the whole Litestar ASGI handler (as Litestar wraps its own CORS middleware), so routing
errors such as a 404 carry the id too.

Not ``asgi-correlation-id``: it requires Starlette (a second web framework in the image for these
25 lines) and accepts only UUID4 ids unless given a validator, which is the one rule kept here.
"""

from __future__ import annotations

import re
import uuid
from typing import Final

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.ops.logs import REQUEST_ID

__all__ = ["HEADER", "RequestIdMiddleware", "request_id_of"]

HEADER: Final = "X-Request-ID"
_SANE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}")
"""What a client's id may be: a short token that is safe in a header and a log line."""


def request_id_of(value: str | None) -> str:
    """The client's id when it is sane, else a new one (32 hex digits)."""
    if value is not None and _SANE.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """ASGI middleware: sets :data:`REQUEST_ID` for the request and adds the header to the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        sent = next((v for k, v in scope["headers"] if k == b"x-request-id"), None)
        request_id = request_id_of(sent.decode("latin-1") if sent is not None else None)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableScopeHeaders.from_message(message)[HEADER] = request_id
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)
