"""Scheduled price-sheet refresh from operator-configured sources.

Sources are listed in a TOML file named by ``GPUPLAN_SOURCES``::

    [[source]]
    name = "lambda"                 # the sheet source its offers belong to
    url = "https://…/vms.csv"       # or a file path (file:// URLs too)
    format = "cloud_catalog_csv"    # rental_csv | rental_json | cloud_catalog_csv | ownership_csv
    provider = "lambda"             # required for cloud_catalog_csv
    interval_seconds = 3600         # >= 60
    timeout_seconds = 30            # per fetch attempt
    max_bytes = 20000000            # larger bodies are refused
    retries = 3                     # attempts, with exponential backoff (1 s, 2 s, 4 s …)

Only the operator configures URLs; no request can make the service fetch one. Each run records its
result (ok | unchanged | rejected | failed), error and version in ``refresh_runs``; a failed or
rejected run leaves the current version in force. Runs of one source never overlap.
"""

from __future__ import annotations

import logging
import threading
import time
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from msgspec import Meta

from pricing.sheet_formats import SheetFormat
from service.db.store import Store
from service.price_sheets import SheetReport, import_sheet, validate_source_name

__all__ = ["RefreshRun", "Refresher", "SourceConfig", "SourceStatus", "fetch", "load_sources"]

_log = logging.getLogger("gpuplan.refresh")


class SourceConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One configured refresh source."""

    name: Annotated[str, Meta(min_length=1, max_length=64)]
    url: Annotated[str, Meta(min_length=1, max_length=2000)]
    format: SheetFormat
    provider: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    interval_seconds: Annotated[int, Meta(ge=60, le=30 * 86400)] = 3600
    timeout_seconds: Annotated[float, Meta(gt=0, le=600)] = 30.0
    max_bytes: Annotated[int, Meta(ge=1, le=500_000_000)] = 20_000_000
    retries: Annotated[int, Meta(ge=1, le=10)] = 3

    def public_url(self) -> str:
        """The URL without credentials or query string (safe to show)."""
        parts = urlsplit(self.url)
        if not parts.scheme or len(parts.scheme) == 1:  # a path (a Windows drive letter is not a scheme)
            return self.url
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))


class _SourcesFile(msgspec.Struct, forbid_unknown_fields=True):
    source: list[SourceConfig] = msgspec.field(default_factory=list)


class RefreshRun(msgspec.Struct, kw_only=True):
    source: str
    started_at: datetime
    finished_at: datetime
    result: Literal["ok", "unchanged", "rejected", "failed"]
    attempts: int
    error: str | None = None
    version: int | None = None
    report: SheetReport | None = None


class SourceStatus(msgspec.Struct, kw_only=True):
    name: str
    url: str
    format: str
    provider: str | None
    interval_seconds: int
    next_run_at: datetime | None
    last_run: RefreshRun | None


def load_sources(path: str) -> list[SourceConfig]:
    """Read and validate the sources file; a bad file is a ``ValueError`` naming the problem."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read GPUPLAN_SOURCES file {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"GPUPLAN_SOURCES file {path!r} is not valid TOML: {exc}") from None
    try:
        sources = msgspec.convert(raw, _SourcesFile).source
    except msgspec.ValidationError as exc:
        raise ValueError(f"GPUPLAN_SOURCES file {path!r}: {exc}") from None
    names: set[str] = set()
    for i, source in enumerate(sources):
        try:
            validate_source_name(source.name, field=f"source[{i}].name")
        except Exception as exc:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: {exc}") from None
        if source.name in names:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: source name {source.name!r} appears twice")
        if source.format == "cloud_catalog_csv" and not source.provider:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: source[{i}] ({source.name}) needs a provider")
        names.add(source.name)
    return sources


class FetchError(Exception):
    """A source could not be fetched (network, HTTP status, size limit, missing file)."""


def fetch(source: SourceConfig) -> bytes:
    """The sheet's bytes, within the source's timeout and size limit."""
    parts = urlsplit(source.url)
    if parts.scheme in ("http", "https"):
        try:
            with (
                httpx.Client(timeout=source.timeout_seconds, follow_redirects=True) as client,
                client.stream("GET", source.url) as response,
            ):
                if response.status_code != 200:
                    raise FetchError(f"HTTP {response.status_code} from {source.public_url()}")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > source.max_bytes:
                        raise FetchError(f"larger than max_bytes ({source.max_bytes})")
                    chunks.append(chunk)
                return b"".join(chunks)
        except httpx.HTTPError as exc:
            raise FetchError(f"{type(exc).__name__}: {exc}") from None
    path = Path(parts.path if parts.scheme == "file" else source.url)
    try:
        size = path.stat().st_size
        if size > source.max_bytes:
            raise FetchError(f"larger than max_bytes ({source.max_bytes})")
        return path.read_bytes()
    except OSError as exc:
        raise FetchError(f"cannot read {str(path)!r}: {exc.strerror}") from None


class Refresher:
    """Runs refreshes of the configured sources, one at a time per source, and records each run."""

    def __init__(
        self,
        store: Store,
        sources: list[SourceConfig],
        *,
        move_factor: float = 3.0,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.sources = {s.name: s for s in sources}
        self.move_factor = move_factor
        self.backoff_s = backoff_s
        self.sleep = sleep
        self._locks = {name: threading.Lock() for name in self.sources}

    def run(self, name: str) -> RefreshRun:
        """Fetch, validate and import one source now (waits for a run of that source in progress)."""
        source = self.sources[name]
        with self._locks[name]:
            run = self._run(source)
        self._record(run)
        level = logging.INFO if run.result in ("ok", "unchanged") else logging.WARNING
        _log.log(level, "refresh %s: %s%s", name, run.result, f" ({run.error})" if run.error else "")
        return run

    def run_all(self) -> list[RefreshRun]:
        return [self.run(name) for name in self.sources]

    def _run(self, source: SourceConfig) -> RefreshRun:
        started = datetime.now(UTC)
        error = ""
        for attempt in range(1, source.retries + 1):
            try:
                body = fetch(source)
            except FetchError as exc:
                error = str(exc)
                if attempt < source.retries:
                    self.sleep(self.backoff_s * 2 ** (attempt - 1))
                continue
            report = import_sheet(
                self.store,
                source=source.name,
                fmt=source.format,
                body=body,
                provider=source.provider,
                origin=f"refresh from {source.public_url()}",
                fetched_at=datetime.now(UTC),
                move_factor=self.move_factor,
            )
            problems = "; ".join(f"line {p.line}: {p.column or ''} {p.reason}" for p in report.problems[:5])
            return RefreshRun(
                source=source.name,
                started_at=started,
                finished_at=datetime.now(UTC),
                result=report.result,
                attempts=attempt,
                error=f"{len(report.problems)} problem(s): {problems}" if report.problems else None,
                version=report.version,
                report=report,
            )
        return RefreshRun(
            source=source.name,
            started_at=started,
            finished_at=datetime.now(UTC),
            result="failed",
            attempts=source.retries,
            error=error,
        )

    def _record(self, run: RefreshRun) -> None:
        with self.store.cursor() as cur:
            cur.execute(
                "INSERT INTO refresh_runs SELECT coalesce(max(run_id), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ? FROM refresh_runs",
                [
                    run.source,
                    run.started_at,
                    run.finished_at,
                    run.result,
                    run.error,
                    run.version,
                    run.attempts,
                    None if run.report is None else msgspec.json.encode(run.report).decode(),
                ],
            )

    def last_runs(self) -> dict[str, RefreshRun]:
        """The latest recorded run of every source (configured now or not)."""
        with self.store.cursor() as cur:
            rows = cur.execute(
                "SELECT source, started_at, finished_at, result, attempts, error, version, report FROM refresh_runs "
                "QUALIFY row_number() OVER (PARTITION BY source ORDER BY run_id DESC) = 1"
            ).fetchall()
        return {
            r[0]: RefreshRun(
                source=r[0],
                started_at=r[1],
                finished_at=r[2],
                result=r[3],
                attempts=int(r[4]),
                error=r[5],
                version=r[6],
                report=None if r[7] is None else msgspec.json.decode(r[7], type=SheetReport),
            )
            for r in rows
        }
