"""Service settings, read from the environment (``GPUPLAN_*``) with documented defaults."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

__all__ = ["DEFAULT_DB_PATH", "Settings"]

DEFAULT_DB_PATH = "var/gpuplan.duckdb"
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Runtime configuration.

    ``db_path`` is the embedded DuckDB file (created and seeded on first start) or ``:memory:``.
    """

    def __repr__(self) -> str:  # never print the admin token
        token = "set" if self.admin_token else None
        return (
            f"Settings(db_path={self.db_path!r}, host={self.host!r}, port={self.port}, admin_token={token})"
        )

    db_path: str = DEFAULT_DB_PATH
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "INFO"
    plan_time_limit_s: float = 5.0
    admin_token: str | None = None
    sources_file: str | None = None
    price_max_age_hours: float = 24 * 30
    price_move_factor: float = 3.0
    cors_origins: tuple[str, ...] = ()
    log_format: Literal["json", "text"] = "json"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``GPUPLAN_DB``, ``GPUPLAN_HOST``, ``GPUPLAN_PORT``, ``GPUPLAN_LOG_LEVEL``,
        ``GPUPLAN_PLAN_TIME_LIMIT_S`` (the MILP time limit per plan), ``GPUPLAN_ADMIN_TOKEN`` (bearer
        token for writes; none: writes refused), ``GPUPLAN_SOURCES`` (TOML file of refresh sources) and
        ``GPUPLAN_PRICE_MAX_AGE_HOURS`` (plans warn about older prices) and ``GPUPLAN_PRICE_MOVE_FACTOR``
        (a price moving more than this factor between versions is flagged)."""
        source = os.environ if env is None else env
        port_text = source.get("GPUPLAN_PORT", "8000")
        try:
            port = int(port_text)
        except ValueError:
            raise ValueError(f"GPUPLAN_PORT must be a whole number, got {port_text!r}") from None
        if not 0 < port < 65536:
            raise ValueError(f"GPUPLAN_PORT must be between 1 and 65535, got {port}")
        level = source.get("GPUPLAN_LOG_LEVEL", "INFO").upper()
        if level not in _LOG_LEVELS:
            raise ValueError(f"GPUPLAN_LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, got {level!r}")
        limit_text = source.get("GPUPLAN_PLAN_TIME_LIMIT_S", "5")
        try:
            limit = float(limit_text)
        except ValueError:
            raise ValueError(
                f"GPUPLAN_PLAN_TIME_LIMIT_S must be a number of seconds, got {limit_text!r}"
            ) from None
        if not 0 < limit <= 600:
            raise ValueError(f"GPUPLAN_PLAN_TIME_LIMIT_S must be in (0, 600], got {limit}")
        age_text = source.get("GPUPLAN_PRICE_MAX_AGE_HOURS", str(24 * 30))
        try:
            max_age = float(age_text)
        except ValueError:
            raise ValueError(
                f"GPUPLAN_PRICE_MAX_AGE_HOURS must be a number of hours, got {age_text!r}"
            ) from None
        if not max_age > 0:
            raise ValueError(f"GPUPLAN_PRICE_MAX_AGE_HOURS must be positive, got {max_age}")
        factor_text = source.get("GPUPLAN_PRICE_MOVE_FACTOR", "3")
        try:
            factor = float(factor_text)
        except ValueError:
            raise ValueError(f"GPUPLAN_PRICE_MOVE_FACTOR must be a number, got {factor_text!r}") from None
        if not factor > 1:
            raise ValueError(f"GPUPLAN_PRICE_MOVE_FACTOR must be above 1, got {factor}")
        token = source.get("GPUPLAN_ADMIN_TOKEN") or None
        if token is not None and len(token) < 16:
            raise ValueError("GPUPLAN_ADMIN_TOKEN must be at least 16 characters")
        return cls(
            admin_token=token,
            sources_file=source.get("GPUPLAN_SOURCES") or None,
            price_max_age_hours=max_age,
            price_move_factor=factor,
            plan_time_limit_s=limit,
            db_path=source.get("GPUPLAN_DB", DEFAULT_DB_PATH),
            host=source.get("GPUPLAN_HOST", "127.0.0.1"),
            port=port,
            log_level=level,
            **_ops_settings(source),
        )

    def db_file(self) -> Path | None:
        """The database file, or ``None`` for an in-memory database."""
        return None if self.db_path == ":memory:" else Path(self.db_path)


_ORIGIN = re.compile(r"https?://[^/\s,]+")


def _ops_settings(source: Mapping[str, str]) -> dict[str, Any]:
    """``GPUPLAN_CORS_ORIGINS`` (comma-separated origins, or ``*``; none: no CORS headers) and
    ``GPUPLAN_LOG_FORMAT`` (``json`` lines, or ``text`` for people)."""
    origins = tuple(
        o.strip().rstrip("/") for o in source.get("GPUPLAN_CORS_ORIGINS", "").split(",") if o.strip()
    )
    for origin in origins:
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise ValueError(
                f"GPUPLAN_CORS_ORIGINS must be comma-separated origins like https://app.example.com "
                f"(scheme and host, no path) or *, got {origin!r}"
            )
    log_format = source.get("GPUPLAN_LOG_FORMAT", "json").lower()
    if log_format not in ("json", "text"):
        raise ValueError(f"GPUPLAN_LOG_FORMAT must be json or text, got {log_format!r}")
    return {"cors_origins": origins, "log_format": log_format}
