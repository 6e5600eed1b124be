"""The admin token the service tests configure, and the header that carries it."""

from __future__ import annotations

from typing import Final

TOKEN: Final = "test-admin-token-0123456789"
AUTH: Final = {"Authorization": f"Bearer {TOKEN}"}
