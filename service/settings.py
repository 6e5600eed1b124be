"""Service settings, read from the environment (``GPUPLAN_*``) with documented defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

__all__ = ["DEFAULT_DB_PATH", "Settings"]

DEFAULT_DB_PATH = "var/gpuplan.duckdb"
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Runtime configuration.

    ``db_path`` is the embedded DuckDB file (created and seeded on first start) or ``:memory:``.
    """

    db_path: str = DEFAULT_DB_PATH
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "INFO"
    plan_time_limit_s: float = 5.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``GPUPLAN_DB``, ``GPUPLAN_HOST``, ``GPUPLAN_PORT``, ``GPUPLAN_LOG_LEVEL`` and
        ``GPUPLAN_PLAN_TIME_LIMIT_S`` (the MILP time limit per plan)."""
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
        return cls(
            plan_time_limit_s=limit,
            db_path=source.get("GPUPLAN_DB", DEFAULT_DB_PATH),
            host=source.get("GPUPLAN_HOST", "127.0.0.1"),
            port=port,
            log_level=level,
        )

    def db_file(self) -> Path | None:
        """The database file, or ``None`` for an in-memory database."""
        return None if self.db_path == ":memory:" else Path(self.db_path)
