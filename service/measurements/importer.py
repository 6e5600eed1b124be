"""Import one benchmark result file as a new version of its source (all of it, or nothing).

The file is parsed by its format's parser (``pricing.parse_measurements``), each run's model and GPU are
resolved against the catalog, and the runs are stored as the catalog rows they become
(:mod:`service.measurements.rows`) in one transaction; the snapshot is then reloaded, so the next plan
uses them. Anything that cannot be used is a :class:`MeasurementRejected` (422) naming the field, and
nothing is stored.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from pricing import MeasuredRun, MeasurementError, MeasurementFormat, UploadFacts, parse_measurements
from service.catalog.gpu_names import resolve_gpu_names
from service.db.backend import Cursor
from service.db.bulk import insert_rows
from service.db.sequences import next_id, take_ids
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import InvalidParameter, ServiceError
from service.measurements.queries import list_measurements
from service.measurements.rows import serving_row, training_row
from service.measurements.schemas import MeasurementUploadReport
from solver import MeasuredProfile, ServingProfile, UnknownModel, lookup_model

__all__ = ["MeasurementRejected", "import_measurements"]

_VENDOR: Final = re.compile(r"^\s*(NVIDIA|AMD)\s+", re.IGNORECASE)


class MeasurementRejected(ServiceError):
    """An uploaded benchmark result that cannot be used: 422 naming the field; nothing was stored."""

    status_code = 422
    title = "Measurement rejected"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field=field, errors=[{"field": field, "message": message}])
        self.field = field
        self.message = message


def _resolved(run: MeasuredRun, snapshot: CatalogSnapshot) -> tuple[str, str]:
    """The run's catalog model name and GPU id."""
    try:
        model = lookup_model(run.model).name
    except UnknownModel as exc:
        raise MeasurementRejected("model", exc.message) from None
    try:
        ids = resolve_gpu_names(snapshot, run.gpu)
    except InvalidParameter as exc:
        bare = _VENDOR.sub("", run.gpu)  # CUDA's and ROCm's device names lead with the vendor
        if bare == run.gpu:
            raise MeasurementRejected("gpu", exc.message) from None
        try:
            ids = resolve_gpu_names(snapshot, bare)
        except InvalidParameter:
            raise MeasurementRejected("gpu", exc.message) from None
    if len(ids) > 1:
        raise MeasurementRejected("gpu", f"{run.gpu!r} names several GPUs ({', '.join(ids)}); name one")
    return model, ids[0]


def _rows(
    runs: list[MeasuredRun], snapshot: CatalogSnapshot, ids: list[int], source: str
) -> list[tuple[MeasuredRun, ServingProfile | MeasuredProfile]]:
    rows: list[tuple[MeasuredRun, ServingProfile | MeasuredProfile]] = []
    for run, row_id in zip(runs, ids, strict=True):
        model, gpu_id = _resolved(run, snapshot)
        make = serving_row if run.kind == "serving" else training_row
        rows.append((run, make(run, row_id=row_id, model=model, gpu_id=gpu_id, source=source)))
    return rows


def _store(
    cur: Cursor,
    snapshot: CatalogSnapshot,
    source: str,
    fmt: str,
    body: bytes,
    runs: list[MeasuredRun],
    facts: UploadFacts,
    now: datetime,
) -> tuple[int, int]:
    """Store the runs as a new version of ``source``; (the version, how many current rows it replaced)."""
    rows = _rows(runs, snapshot, take_ids(cur, "measurement_row_seq", len(runs)), source)
    replaced = cur.execute(
        "SELECT count(*) FROM measurements m JOIN current_measurement_uploads u USING (version) "
        "WHERE u.source = ?",
        [source],
    ).fetchone()
    version = next_id(cur, "measurement_version_seq")
    insert_rows(
        cur,
        "measurement_uploads",
        ("version", "source", "format", "content_hash", "row_count", "created_at", "facts"),
        [(version, source, fmt, hashlib.sha256(body).hexdigest(), len(rows), now, _json(facts))],
    )
    insert_rows(
        cur,
        "measurements",
        ("row_id", "version", "kind", "model", "gpu_id", "run", "profile"),
        [(_id(row), version, run.kind, row.model, row.gpu_id, _json(run), _json(row)) for run, row in rows],
    )
    return version, int(replaced[0]) if replaced else 0


def _id(row: ServingProfile | MeasuredProfile) -> int:
    return row.serving_id if isinstance(row, ServingProfile) else row.profile_id


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def import_measurements(
    store: Store, *, source: str, fmt: MeasurementFormat, body: bytes, facts: UploadFacts
) -> MeasurementUploadReport:
    """Parse, resolve and store one file as the new version of ``source`` (module docstring)."""
    try:
        runs = parse_measurements(fmt, body, facts)
    except MeasurementError as exc:
        raise MeasurementRejected(exc.field, exc.reason) from None
    snapshot, now = store.snapshot, datetime.now(UTC)
    for run in runs:  # before the transaction: a bad name stores nothing and takes no ids
        _resolved(run, snapshot)
    version, replaced = store.transaction(
        lambda cur: _store(cur, snapshot, source, fmt, body, runs, facts, now)
    )
    store.refresh_snapshot()
    stored = list_measurements(store, source=source, version=version, limit=len(runs), offset=0)
    return MeasurementUploadReport(
        source=source,
        version=version,
        format=fmt,
        created_at=now,
        rows=len(runs),
        replaced_rows=replaced,
        measurements=stored.items,
    )
