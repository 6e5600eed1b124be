"""One log format for the app and uvicorn: JSON lines (or plain text) on stderr, each with a timestamp
and, inside a request, that request's id (a context variable set by :mod:`service.ops.request_id`)."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any, Final, Literal

__all__ = ["LOG_FORMATS", "REQUEST_ID", "LogFormat", "RequestIdFilter", "log_config"]

LogFormat = Literal["json", "text"]
LOG_FORMATS: Final = ("json", "text")

REQUEST_ID: ContextVar[str | None] = ContextVar("gpuplan_request_id", default=None)
"""The id of the request being served (``None`` outside a request)."""

_TEXT: Final = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (``-`` outside a request), so formats can name it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or "-"
        return True


def _formatter(fmt: LogFormat) -> dict[str, Any]:
    if fmt == "text":
        return {"format": _TEXT}
    return {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
        "rename_fields": {"levelname": "level", "name": "logger"},
        "timestamp": True,  # ISO 8601 in UTC, under "timestamp"
    }


def log_config(level: str, fmt: LogFormat = "json") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the whole process; ``gpuplan serve`` hands the same dict to
    uvicorn (``log_config``), so its error and access logs share the app's format."""
    return {
        "version": 1,
        "disable_existing_loggers": False,  # module loggers made at import keep working
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {"default": _formatter(fmt)},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "default",
                "filters": ["request_id"],
            }
        },
        "root": {"handlers": ["default"], "level": level.upper()},
        # uvicorn's loggers propagate to the root handler instead of having their own, at the level
        # asked (a level an earlier uvicorn start set on them would otherwise stay and drop lines)
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": level.upper()}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
