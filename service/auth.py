"""Admin authentication for writes: ``Authorization: Bearer <GPUPLAN_ADMIN_TOKEN>``.

Without a configured token every write is refused (403, saying how to enable writes); a missing or
wrong token is a 401. Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from service.errors import Forbidden, Unauthorized
from service.settings import Settings

__all__ = ["require_admin"]


def require_admin(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Litestar guard for write endpoints."""
    settings = connection.app.state.settings
    assert isinstance(settings, Settings)
    expected = settings.admin_token
    if not expected:
        raise Forbidden("writes are disabled: the operator has not set GPUPLAN_ADMIN_TOKEN")
    header = connection.headers.get("authorization", "")
    scheme, _space, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send Authorization: Bearer <admin token>", headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(token.strip().encode(), expected.encode()):
        raise Unauthorized("wrong admin token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
