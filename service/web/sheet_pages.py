"""The price-sheet page: sources and their versions, a diff between any two rental versions, and an
upload form (the admin token is typed into the page and kept only in the page's memory)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from pricing import FORMATS
from service.db.store import Store
from service.errors import ServiceError
from service.price_sheets.history import list_versions
from service.settings import Settings
from service.web.render import page
from service.web.sheet_diff import diff_versions

__all__ = ["SHEET_PAGES"]

_PAGE: Final[dict[str, Any]] = {
    "include_in_schema": False,
    "sync_to_thread": True,
    "opt": {"form_query": True},
}
_FIELDS: Final = ("from", "to")


def _version_number(text: str | None, field: str) -> int | None:
    if text is None or not text.strip():
        return None
    if not text.strip().isdigit():
        raise ServiceError(f"{field}: not a version number: {text!r}", field=field)
    return int(text)


@get("/price-sheets", **_PAGE)
def price_sheets_page(
    store: NamedDependency[Store], settings: NamedDependency[Settings], request: Request[Any, Any, Any]
) -> Response[str]:
    """Every version (newest first, the current ones marked, with its age; a current one older than
    ``GPUPLAN_PRICE_MAX_AGE_HOURS`` flagged stale), a diff when two are chosen, the upload."""
    query = {k: v for k, v in request.query_params.items() if k in _FIELDS}
    versions = list_versions(store, limit=500).items
    context: dict[str, Any] = {"query": query, "versions": versions, "formats": FORMATS, "diff": None,
                               "error": None, "error_field": None, "now": datetime.now(UTC),
                               "stale_after_days": settings.price_max_age_hours / 24}  # fmt: skip
    try:
        old, new = _version_number(query.get("from"), "from"), _version_number(query.get("to"), "to")
        if old is not None and new is not None:
            context["diff"] = diff_versions(store, old, new)
        elif old is not None or new is not None:
            raise ServiceError("choose two versions to compare", field="to" if old is not None else "from")
    except ServiceError as exc:
        errors = exc.extra.get("errors") or [{"message": exc.detail}]
        context.update(error=str(errors[0]["message"]), error_field=str(exc.extra.get("field", "")) or None)
    return page("price_sheets.html", **context)


SHEET_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (price_sheets_page,)
