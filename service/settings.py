"""Service settings, read from the environment (``GPUPLAN_*``) with documented defaults."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

import msgspec

from service.db.backend import display_target

__all__ = ["DEFAULT_DB_PATH", "Settings"]

DEFAULT_DB_PATH = "var/gpuplan.duckdb"
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Runtime configuration.

    ``db_path`` is the embedded DuckDB file (created and seeded on first start), ``:memory:``, or a
    ``postgresql://`` URL of an existing PostgreSQL database (migrated and seeded on start).
    """

    def __repr__(self) -> str:  # never print the admin token
        token = "set" if self.admin_token else None
        return f"Settings(db_path={display_target(self.db_path)!r}, host={self.host!r}, port={self.port}, admin_token={token})"

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
    plan_rate: tuple[str, int] | None = ("minute", 600)
    """``POST /v1/plans`` per client address: (second | minute | hour | day, count); ``None``: no limit."""
    plan_queue: int = 32
    """Plan requests that may wait for one of the solver slots; more get a 503 at once."""
    request_timeout_s: float = 20.0
    """Seconds a request's head may take to arrive (then the connection is closed), and then its body
    (then a 408)."""
    plan_retention_days: float = 0.0
    """Stored plans older than this many days are deleted hourly by the scheduler (0: kept forever)."""
    sheet_retention_days: float = 0.0
    """Superseded price-sheet versions older than this many days are deleted hourly by the scheduler,
    unless a stored plan names them (0: kept forever)."""
    sheet_retention_keep: int = 0
    """The newest superseded versions of each source and kind kept whatever their age."""
    run_scheduler: bool = True
    """Refresh the configured sources on a schedule in this process. Off (``GPUPLAN_SCHEDULER=off``)
    when replicas share one database and a CronJob runs ``gpuplan prices refresh`` instead."""

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
        limit = _number(source, "GPUPLAN_PLAN_TIME_LIMIT_S", "5", " of seconds")
        if not 0 < limit <= 600:
            raise ValueError(f"GPUPLAN_PLAN_TIME_LIMIT_S must be in (0, 600], got {limit}")
        max_age = _number(source, "GPUPLAN_PRICE_MAX_AGE_HOURS", str(24 * 30), " of hours")
        if not max_age > 0:
            raise ValueError(f"GPUPLAN_PRICE_MAX_AGE_HOURS must be positive, got {max_age}")
        factor = _number(source, "GPUPLAN_PRICE_MOVE_FACTOR", "3")
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
            **_api_limits(source),
        )

    def db_file(self) -> Path | None:
        """The database file, or ``None`` for an in-memory database."""
        return None if self.db_path == ":memory:" else Path(self.db_path)


def _number(source: Mapping[str, str], name: str, default: str, unit: str = "") -> float:
    """The float ``name`` holds (``default`` when unset); a ``ValueError`` naming it when it is not one."""
    text = source.get(name, default)
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number{unit}, got {text!r}") from None


_ORIGIN = re.compile(r"https?://[^/\s,]+")


def _ops_settings(source: Mapping[str, str]) -> dict[str, Any]:
    """``GPUPLAN_CORS_ORIGINS`` (comma-separated origins, or ``*``; none: no CORS headers),
    ``GPUPLAN_LOG_FORMAT`` (``json`` lines, or ``text`` for people), ``GPUPLAN_SCHEDULER`` (``on``:
    this process refreshes the sources on their schedule; ``off``: something else does) and
    ``GPUPLAN_PLAN_RETENTION_DAYS`` (stored plans older than this are deleted; 0 keeps them)."""
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
    scheduler_text = source.get("GPUPLAN_SCHEDULER", "on")
    scheduler = scheduler_text.strip().lower()
    if scheduler not in ("on", "off"):
        raise ValueError(f"GPUPLAN_SCHEDULER must be on or off, got {scheduler_text!r}")
    retention = _number(source, "GPUPLAN_PLAN_RETENTION_DAYS", "0", " of days")
    if not 0 <= retention <= 100_000:
        raise ValueError(
            f"GPUPLAN_PLAN_RETENTION_DAYS must be from 0 (keep every plan) to 100000, got {retention}"
        )
    return {
        "cors_origins": origins,
        "log_format": log_format,
        "run_scheduler": scheduler == "on",
        "plan_retention_days": retention,
        **_sheet_retention(source),
    }


def _sheet_retention(source: Mapping[str, str]) -> dict[str, Any]:
    """``GPUPLAN_SHEET_RETENTION_DAYS`` (superseded price-sheet versions older than this are deleted,
    unless a stored plan names them; 0 keeps them) and ``GPUPLAN_SHEET_RETENTION_KEEP`` (the newest
    superseded versions of each source and kind kept whatever their age)."""
    days = _number(source, "GPUPLAN_SHEET_RETENTION_DAYS", "0", " of days")
    if not 0 <= days <= 100_000:
        raise ValueError(
            f"GPUPLAN_SHEET_RETENTION_DAYS must be from 0 (keep every version) to 100000, got {days}"
        )
    keep_text = source.get("GPUPLAN_SHEET_RETENTION_KEEP", "0")
    if not keep_text.strip().isascii() or not keep_text.strip().isdigit() or int(keep_text) > 100_000:
        raise ValueError(
            f"GPUPLAN_SHEET_RETENTION_KEEP must be a whole number of versions from 0 to 100000, got {keep_text!r}"
        )
    return {"sheet_retention_days": days, "sheet_retention_keep": int(keep_text)}


_RATE_UNITS = ("second", "minute", "hour", "day")


class _ApiLimits(TypedDict):
    plan_rate: tuple[str, int] | None
    plan_queue: int
    request_timeout_s: float


def _api_limits(source: Mapping[str, str]) -> _ApiLimits:
    """``GPUPLAN_PLAN_RATE`` (``N/unit``, e.g. ``600/minute``; ``0`` turns the limit off),
    ``GPUPLAN_PLAN_QUEUE`` (plans waiting for a solver slot) and ``GPUPLAN_REQUEST_TIMEOUT_S``."""
    rate_text = source.get("GPUPLAN_PLAN_RATE", "600/minute").strip()
    count_text, _slash, unit = rate_text.partition("/")
    rate: tuple[str, int] | None
    if count_text.strip() == "0" and not unit:
        rate = None
    elif not count_text.strip().isdigit() or unit.strip() not in _RATE_UNITS or int(count_text) < 1:
        raise ValueError(
            f"GPUPLAN_PLAN_RATE must be N/unit (unit: {', '.join(_RATE_UNITS)}, N >= 1) or 0, got {rate_text!r}"
        )
    else:
        rate = (unit.strip(), int(count_text))
    queue_text = source.get("GPUPLAN_PLAN_QUEUE", "32")
    if not queue_text.strip().isdigit() or int(queue_text) > 10_000:
        raise ValueError(f"GPUPLAN_PLAN_QUEUE must be a whole number from 0 to 10000, got {queue_text!r}")
    timeout_text = source.get("GPUPLAN_REQUEST_TIMEOUT_S", "20")
    timeout = _number(source, "GPUPLAN_REQUEST_TIMEOUT_S", "20", " of seconds")
    if not 0 < timeout <= 3600:
        raise ValueError(f"GPUPLAN_REQUEST_TIMEOUT_S must be in (0, 3600], got {timeout_text!r}")
    return {"plan_rate": rate, "plan_queue": int(queue_text), "request_timeout_s": timeout}
