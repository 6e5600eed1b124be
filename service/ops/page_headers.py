"""Security headers: every answer says ``X-Content-Type-Options: nosniff`` and ``X-Frame-Options:
DENY``; the HTML pages also send a Content Security Policy that keeps them out of frames (the
price-sheets page takes the admin token, so a framing page must not overlay it), loads nothing from
elsewhere and posts forms and ``fetch`` calls only to this server.

The pages' own inline styles and the price-sheets page's inline script are allowed; every value the
pages show is escaped text. The API documentation (``/schema``: Swagger UI, Scalar) gets a policy of its
own (``DOCS_POLICY``): its scripts come from this server too (shipped, see ``service.openapi``), and it
may call this server only (the "try it" requests).
"""

from __future__ import annotations

from typing import Final

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DOCS_POLICY", "PAGE_POLICY", "PageHeadersMiddleware"]

PAGE_POLICY: Final = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The Content Security Policy of every HTML page."""

DOCS_POLICY: Final = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The policy of the API documentation pages: everything from this server, the initialising inline
scripts (the OpenAPI document is inlined into Swagger's), data: images and fonts."""


class PageHeadersMiddleware:
    """Adds the security headers (see the module) to every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        documentation = scope["path"].startswith("/schema")

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableScopeHeaders.from_message(message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("X-Frame-Options", "DENY")
                html = (headers.get("content-type") or "").startswith("text/html")
                if html:
                    headers.setdefault(
                        "Content-Security-Policy", DOCS_POLICY if documentation else PAGE_POLICY
                    )
            await send(message)

        await self.app(scope, receive, sending)
