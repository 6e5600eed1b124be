"""Serving-capacity profiles uploaded by operators (POST /v1/profiles): parse, validate, replace.

Columns (CSV header, or JSON objects in a list or ``{"profiles": [...]}``): ``model`` (a catalog model
name or alias), ``gpu`` (an id, name or unambiguous alias), ``tp`` (default 1, at most 64), ``input_len_lo_excl``,
``input_len_hi_incl``, ``output_len_lo_excl``, ``output_len_hi_incl`` (the bucket: lengths in
``(lo, hi]``), ``max_requests_per_s`` (one replica's capacity at the SLO), ``slo`` (free text, e.g.
``"p99 ttft<=500ms tpot<=50ms"``), ``source`` (where the numbers come from; required); any other
column is a problem. A sheet with any problem is rejected whole, with every problem and its line. An accepted sheet replaces the rows
previously uploaded under the same ``source`` name; the shipped Mélange rows are never replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from pricing import (
    MAX_COUNT,
    SheetProblem,
    SheetRowError,
    SheetRows,
    cell_count,
    cell_float,
    cell_text,
    collect_rows,
    read_columns,
)
from service.catalog.gpu_names import resolve_gpu_names
from service.catalog.schemas import ProfileUploadReport
from service.db.backend import Cursor
from service.db.bulk import insert_rows
from service.db.sequences import take_ids
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import InvalidParameter
from solver import ServingProfile, UnknownModel, lookup_model

__all__ = ["import_serving_profiles"]

_REQUIRED = (
    "model",
    "gpu",
    "input_len_lo_excl",
    "input_len_hi_incl",
    "output_len_lo_excl",
    "output_len_hi_incl",
    "max_requests_per_s",
    "source",
)


_COLUMNS = (*_REQUIRED, "tp", "slo")
MAX_SERVING_TP: Final = 64
"""The largest tensor-parallel degree a serving profile may state (an NVLink domain of 64 GPUs; the
planner's replicas stay within one instance, 8 GPUs on today's offers)."""


def _rows(body: bytes, fmt: Literal["csv", "json"], file: str) -> tuple[SheetRows, list[SheetProblem]]:
    """The sheet's rows; a sheet that cannot be read, or has a column no profile has (a misspelt one
    would be dropped silently), is one problem."""
    table, problems = read_columns(
        body, json_format=fmt == "json", list_key="profiles", required=_REQUIRED, file=file
    )
    unknown = sorted(table.names - set(_COLUMNS))
    if unknown and not problems:
        reason = f"unknown column(s): {', '.join(map(repr, unknown))}; profiles have {', '.join(_COLUMNS)}"
        return [], [SheetProblem(file=file, line=0, column=unknown[0], value=None, reason=reason)]
    return table.rows(), problems


def _parse(row: Mapping[str, Any], snapshot: CatalogSnapshot, serving_id: int) -> ServingProfile:
    name = cell_text(row, "model", required=True)
    try:
        model = lookup_model(name).name
    except UnknownModel as exc:
        raise SheetRowError("model", exc.message) from None
    gpu_name = cell_text(row, "gpu", required=True)
    try:
        ids = resolve_gpu_names(snapshot, gpu_name)
    except InvalidParameter as exc:
        raise SheetRowError("gpu", exc.message) from None
    if len(ids) > 1:
        raise SheetRowError("gpu", f"{gpu_name!r} names several GPUs ({', '.join(ids)}); name one")
    edges = {}
    for column in ("input_len_lo_excl", "input_len_hi_incl", "output_len_lo_excl", "output_len_hi_incl"):
        value = cell_float(row, column, required=True, maximum=MAX_COUNT)
        if value is None or value != int(value):
            raise SheetRowError(column, "must be a whole number of tokens")
        edges[column] = int(value)
    for lo, hi in (("input_len_lo_excl", "input_len_hi_incl"), ("output_len_lo_excl", "output_len_hi_incl")):
        if edges[lo] >= edges[hi]:
            raise SheetRowError(hi, f"must be above {lo} ({edges[lo]})")
    rate = cell_float(row, "max_requests_per_s", positive=True, required=True)
    assert rate is not None
    return ServingProfile(
        serving_id=serving_id,
        model=model,
        gpu_id=ids[0],
        tp=cell_count(row, "tp", default=1, maximum=MAX_SERVING_TP),
        max_requests_per_s=rate,
        slo=cell_text(row, "slo") or None,
        hourly_cost_usd=None,
        in_grid=True,
        source=cell_text(row, "source", required=True),
        **edges,
    )


_BUCKET_KEY = (
    "model",
    "gpu_id",
    "tp",
    "input_len_lo_excl",
    "input_len_hi_incl",
    "output_len_lo_excl",
    "output_len_hi_incl",
    "slo",
)


def _replace_rows(cur: Cursor, snapshot: CatalogSnapshot, source: str, rows: list[ServingProfile]) -> int:
    """Replace the rows uploaded under ``source`` (new ids from their sequence); returns how many went."""
    counted = cur.execute(
        "SELECT count(*) FROM serving_profiles WHERE upload_source = ?", [source]
    ).fetchone()
    cur.execute("DELETE FROM serving_profiles WHERE upload_source = ?", [source])
    ids = take_ids(cur, "serving_profile_id_seq", len(rows))
    insert_rows(
        cur,
        "serving_profiles",
        (*ServingProfile.__struct_fields__, "gpu_name", "upload_source"),
        [
            (
                *msgspec.structs.astuple(msgspec.structs.replace(p, serving_id=serving_id)),
                snapshot.gpus[p.gpu_id].name,
                source,
            )
            for p, serving_id in zip(rows, ids, strict=True)
        ],
    )
    return int(counted[0]) if counted else 0


def import_serving_profiles(
    store: Store, *, source: str, fmt: Literal["csv", "json"], body: bytes
) -> ProfileUploadReport:
    """Validate and (if clean) replace the rows of ``source`` in one transaction."""
    snapshot = store.snapshot
    rows, problems = _rows(body, fmt, f"{source}.{fmt}")
    parsed, row_problems = collect_rows(
        rows,
        f"{source}.{fmt}",
        lambda row: _parse(row, snapshot, 0),  # ids are assigned when the rows are stored
        lambda p: tuple(getattr(p, field) for field in _BUCKET_KEY),
        "duplicate bucket (same model, GPU, tp, lengths and SLO)",
    )
    problems.extend(row_problems)
    report = ProfileUploadReport(
        source=source,
        result="rejected",
        rows=len(rows),
        accepted_rows=len(parsed),
        replaced_rows=0,
        problems=problems,
    )
    if problems:
        return report
    replaced = store.transaction(lambda cur: _replace_rows(cur, snapshot, source, parsed))
    store.refresh_snapshot()
    report.result, report.replaced_rows = "ok", replaced
    return report
