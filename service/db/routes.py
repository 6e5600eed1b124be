"""``GET /v1/db/stats``: what the database holds, rows per table and every shipped or uploaded row it
could not use (what ``gpuplan db stats`` prints, also while a running server holds the file)."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from litestar import Request
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from service.db.stats import DbStats, db_stats
from service.db.store import Store
from service.health import HIDDEN
from service.http import is_admin
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("service")
"""Every route of this feature: tagged ``service``, a 400 for a bad parameter."""


@_API.get("/db/stats", operation_id="dbStats")
def db_stats_handler(request: Request[Any, Any, Any], store: NamedDependency[Store]) -> DbStats:
    """Rows per table, unresolved GPU names and every row not used, with the reason. The database's
    location is shown with the admin token only."""
    stats = db_stats(store)
    return stats if is_admin(request) else msgspec.structs.replace(stats, path=HIDDEN)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (db_stats_handler,)
"""The database handlers."""
