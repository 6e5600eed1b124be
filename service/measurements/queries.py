"""``GET /v1/measurements``: the imported runs, current ones by default, every version on request."""

from __future__ import annotations

from typing import Any, Final

import msgspec

from pricing import MeasuredRun
from service.db.store import Store
from service.measurements.schemas import MeasurementOut, MeasurementPage
from solver import MeasuredProfile, ServingProfile

__all__ = ["list_measurements"]

_SELECT: Final = (
    "SELECT m.row_id, m.version, u.source, u.format, c.version IS NOT NULL, m.run, m.profile "
    "FROM measurements m JOIN measurement_uploads u USING (version) "
    "LEFT JOIN current_measurement_uploads c USING (version)"
)


def _row_text(kind: str, profile: str) -> str:
    if kind == "serving":
        s = msgspec.json.decode(profile, type=ServingProfile)
        return (
            f"serving row {s.serving_id}: {s.model} on {s.gpu_id} (tp {s.tp}), input ({s.input_len_lo_excl}, "
            f"{s.input_len_hi_incl}] x output ({s.output_len_lo_excl}, {s.output_len_hi_incl}] tokens: "
            f"{s.max_requests_per_s:.4g} req/s per replica, {s.slo}"
        )
    t = msgspec.json.decode(profile, type=MeasuredProfile)
    return (
        f"throughput row {t.profile_id}: {t.model} {t.task} on {t.gpu_count}x {t.gpu_id} ({t.precision}), "
        f"seq {t.seq_len_or_resolution}: {t.value:,.0f} {t.metric}"
    )


def _out(row: tuple[Any, ...]) -> MeasurementOut:
    run = msgspec.json.decode(str(row[5]), type=MeasuredRun)
    figures = {
        f: getattr(run, f) for f in MeasurementOut.__struct_fields__ if hasattr(run, f) and f != "tool"
    }
    return MeasurementOut(
        row_id=int(row[0]),
        version=int(row[1]),
        source=str(row[2]),
        format=str(row[3]),
        current=bool(row[4]),
        row=_row_text(run.kind, str(row[6])),
        **figures,
    )


def list_measurements(
    store: Store,
    *,
    source: str | None = None,
    version: int | None = None,
    all_versions: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> MeasurementPage:
    """The stored runs, newest version first (only the current versions unless ``all_versions``)."""
    where, params = [], []
    if not all_versions and version is None:
        where.append("c.version IS NOT NULL")
    for column, value in (("u.source", source), ("m.version", version)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    with store.cursor() as cur:
        counted = cur.execute(f"SELECT count(*) FROM ({_SELECT}{clause}) AS counted", params).fetchone()
        rows = cur.execute(
            f"{_SELECT}{clause} ORDER BY m.version DESC, m.row_id LIMIT ? OFFSET ?", [*params, limit, offset]
        ).fetchall()
    return MeasurementPage(
        total=int(counted[0]) if counted else 0, limit=limit, offset=offset, items=[_out(r) for r in rows]
    )
