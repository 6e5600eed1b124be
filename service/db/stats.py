"""What the store holds: rows per table and every shipped or uploaded row it could not use (``gpuplan db stats``)."""

from __future__ import annotations

from typing import Final

import msgspec

from service.db.store import Store

__all__ = ["DbStats", "TableCount", "UnusableRow", "db_stats"]


class TableCount(msgspec.Struct, kw_only=True):
    table: str
    rows: int


class UnusableRow(msgspec.Struct, kw_only=True):
    file: str
    line: int
    column: str | None
    value: str | None
    reason: str


class DbStats(msgspec.Struct, kw_only=True):
    """Rows per table and every shipped or uploaded row the store could not use, with the reason."""

    path: str
    schema_version: int
    tables: list[TableCount]
    unresolved_gpu_names: list[UnusableRow]
    unusable_rows: list[UnusableRow]


_STATS_TABLES: Final = (
    "gpus",
    "gpu_aliases",
    "price_sheets",
    "offers",
    "current_offers",
    "ownership_prices",
    "ownership_defaults",
    "throughput_profiles",
    "serving_profiles",
    "unusable_rows",
)


def db_stats(store: Store) -> DbStats:
    """Rows per table, and every row that could not be used (unresolved GPU names first)."""
    with store.cursor() as cur:
        tables = []
        for table in _STATS_TABLES:
            row = cur.execute(f"SELECT count(*) FROM {table}").fetchone()
            tables.append(TableCount(table=table, rows=int(row[0]) if row else 0))
        unusable = [
            UnusableRow(file=r[0], line=r[1], column=r[2], value=r[3], reason=r[4])
            for r in cur.execute(
                'SELECT file, line, "column", value, reason FROM unusable_rows ORDER BY file, line'
            ).fetchall()
        ]
    unresolved = [u for u in unusable if u.column in ("gpu", "accelerator")]
    return DbStats(
        path=store.path,
        schema_version=store.schema_version(),
        tables=tables,
        unresolved_gpu_names=unresolved,
        unusable_rows=unusable,
    )
