"""Scheduled price-sheet refresh from the operator's configured sources (``service.price_sheets.sources``).

Each run fetches (with retries and exponential backoff), validates and imports one source, and records
its result (ok | unchanged | rejected | failed), error, version and replica in ``refresh_runs``; a
failed or rejected run leaves the current version in force.

Runs of one source never overlap, in one process or across the replicas of one database: each holds
the source's run lock (``Store.run_lock``) until its run is recorded. A scheduled run that finds the
lock held, or a run of its source recorded by any replica less than :data:`RECENT_FRACTION` of an
interval ago, is skipped (every replica schedules every source; one fetch per interval gets through).
A run asked for (refresh now, ``gpuplan prices refresh``) waits for the lock and then runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from apscheduler.schedulers.base import BaseScheduler

from service.db.replica import replica_name
from service.db.store import Store
from service.errors import FetchError, ImportSuperseded, InvalidParameter
from service.price_sheets.importer import import_sheet
from service.price_sheets.retire import retire_seed_provider
from service.price_sheets.schemas import RefreshRun, SheetReport, SourceStatus
from service.price_sheets.sources import SourceConfig, fetch

__all__ = ["RECENT_FRACTION", "RUN_COLUMNS", "Refresher", "run_lock_key", "run_of_row"]

_log = logging.getLogger("gpuplan.refresh")

RECENT_FRACTION: Final = 0.9
"""A scheduled run is skipped when its source's last recorded run started less than this fraction of
its interval ago: replicas whose schedules are out of phase then let one run through per interval
(half an interval would let up to two through)."""


def run_lock_key(source: str) -> str:
    """The run lock of ``source``'s refreshes (``Store.run_lock``)."""
    return f"gpuplan-refresh:{source}"


HIDDEN: Final = "(shown with the admin token)"
"""What an unauthenticated status shows in place of a file path or a run's error."""


def _without_error(run: RefreshRun) -> RefreshRun:
    return run if run.error is None else msgspec.structs.replace(run, error=HIDDEN)


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

    def run(self, name: str) -> RefreshRun:
        """Fetch, validate and import one source now (waits for a run of that source in progress,
        here or in another replica)."""
        return self.run_recorded(name)[1]

    def run_recorded(self, name: str) -> tuple[int, RefreshRun]:
        """:meth:`run`, with the id of the run's row in ``refresh_runs``."""
        with self.store.run_lock(run_lock_key(name), wait=True):
            return self._run_and_record(self.sources[name])

    def run_scheduled(self, name: str) -> RefreshRun | None:
        """The scheduler's run of one source: ``None`` (skipped, logged) when a run of it is in
        progress anywhere or one started less than :data:`RECENT_FRACTION` of its interval ago."""
        source = self.sources[name]
        with self.store.run_lock(run_lock_key(name), wait=False) as got:
            if not got:
                _log.info("refresh %s skipped: a run of it is in progress (here or in another replica)", name)
                return None
            last = self._last_started(name)
            since = None if last is None else (datetime.now(UTC) - last).total_seconds()
            if since is not None and since < RECENT_FRACTION * source.interval_seconds:
                _log.info("refresh %s skipped: its last run started %.1f s ago", name, since)
                return None
            return self._run_and_record(source)[1]

    def _last_started(self, name: str) -> datetime | None:
        with self.store.cursor() as cur:
            row = cur.execute("SELECT max(started_at) FROM refresh_runs WHERE source = ?", [name]).fetchone()
        return None if row is None else row[0]  # TIMESTAMPTZ: an aware time on both backends

    def _run_and_record(self, source: SourceConfig) -> tuple[int, RefreshRun]:
        """Run and record (under the run lock: the next replica to get it sees this run)."""
        run = self._run(source)
        run_id = self._record(run)
        level = logging.INFO if run.result in ("ok", "unchanged") else logging.WARNING
        _log.log(level, "refresh %s: %s%s", source.name, run.result, f" ({run.error})" if run.error else "")
        return run_id, run

    def chosen(self, source: str | None) -> list[str]:
        """``source`` (a 400 unless it is configured), or every configured source."""
        if source is None:
            return list(self.sources)
        if source not in self.sources:
            known = ", ".join(sorted(self.sources)) or "none configured (set GPUPLAN_SOURCES)"
            raise InvalidParameter("source", f"not a configured source; configured: {known}")
        return [source]

    def run_all(self) -> list[RefreshRun]:
        return [self.run(name) for name in self.sources]

    def _run(self, source: SourceConfig) -> RefreshRun:
        started = datetime.now(UTC)
        error = ""
        for attempt in range(1, source.retries + 1):
            try:  # an upload to this source that lands during the import supersedes it: try again
                report = import_sheet(
                    self.store,
                    source=source.name,
                    fmt=source.format,
                    body=fetch(source),
                    provider=source.provider,
                    origin=f"refresh from {source.public_url()}",
                    fetched_at=datetime.now(UTC),
                    move_factor=self.move_factor,
                )
            except (FetchError, ImportSuperseded) as exc:
                error = str(exc)
                if attempt < source.retries:
                    self.sleep(self.backoff_s * 2 ** (attempt - 1))
                continue
            if source.retire_seed_provider and source.provider and report.result in ("ok", "unchanged"):
                retire_seed_provider(self.store, source.provider, by=source.name)
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

    def _record(self, run: RefreshRun) -> int:
        with self.store.cursor() as cur:  # the id from its sequence: unique across processes too
            row = cur.execute(
                f"INSERT INTO refresh_runs (run_id, {RUN_COLUMNS}, replica) "
                "VALUES (nextval('refresh_run_id_seq'), ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id",
                [
                    run.source,
                    run.started_at,
                    run.finished_at,
                    run.result,
                    run.attempts,
                    run.error,
                    run.version,
                    None if run.report is None else msgspec.json.encode(run.report).decode(),
                    replica_name(),
                ],
            ).fetchone()
        assert row is not None
        return int(row[0])

    def statuses(self, scheduler: BaseScheduler | None, *, detailed: bool = False) -> list[SourceStatus]:
        """Every configured source: its last run and when ``scheduler`` runs it next. Unless
        ``detailed`` (the admin token), a file source's path and every run's error are withheld."""
        last = {name: run if detailed else _without_error(run) for name, run in self.last_runs().items()}
        statuses = []
        for name, source in self.sources.items():
            job = scheduler.get_job(f"refresh:{name}") if scheduler is not None else None
            statuses.append(
                SourceStatus(
                    name=name,
                    url=source.public_url() if detailed or source.is_url() else HIDDEN,
                    format=source.format,
                    provider=source.provider,
                    interval_seconds=source.interval_seconds,
                    next_run_at=None if job is None else job.next_run_time,
                    last_run=last.get(name),
                )
            )
        return statuses

    def last_runs(self) -> dict[str, RefreshRun]:
        """The latest recorded run of every source (configured now or not)."""
        with self.store.cursor() as cur:
            rows = cur.execute(
                f"SELECT {RUN_COLUMNS} FROM refresh_runs "
                "WHERE run_id IN (SELECT max(run_id) FROM refresh_runs GROUP BY source)"
            ).fetchall()
        return {r[0]: run_of_row(r) for r in rows}


RUN_COLUMNS: Final = "source, started_at, finished_at, result, attempts, error, version, report"
"""The ``refresh_runs`` columns :func:`run_of_row` reads, in its order."""


def run_of_row(r: Sequence[Any]) -> RefreshRun:
    """A run from a ``refresh_runs`` row of :data:`RUN_COLUMNS`."""
    return RefreshRun(
        source=r[0],
        started_at=r[1],
        finished_at=r[2],
        result=r[3],
        attempts=int(r[4]),
        error=r[5],
        version=r[6],
        report=None if r[7] is None else msgspec.json.decode(r[7], type=SheetReport),
    )
