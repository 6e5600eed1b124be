"""Numbers from sequences (created by migration 8), never ``max + 1``: two transactions, in one process
or in two replicas on one PostgreSQL database, never take the same one. A rolled-back transaction
leaves a gap; numbers only need to be unique and increasing."""

from __future__ import annotations

from typing import Final, Literal

from service.db.backend import Cursor

__all__ = ["SEQUENCES", "SequenceName", "next_id", "take_ids"]

SequenceName = Literal[
    "price_sheet_version_seq",
    "serving_profile_id_seq",
    "refresh_run_id_seq",
    "refresh_batch_id_seq",
    "measurement_version_seq",
    "measurement_row_seq",
]
SEQUENCES: Final[dict[SequenceName, tuple[str, str]]] = {
    "price_sheet_version_seq": ("price_sheets", "version"),
    "serving_profile_id_seq": ("serving_profiles", "serving_id"),
    "refresh_run_id_seq": ("refresh_runs", "run_id"),
    "refresh_batch_id_seq": ("refresh_batches", "batch_id"),
}
"""Each sequence migration 8 created and the table and column it numbers (migration 13 creates
``measurement_version_seq`` and ``measurement_row_seq`` with its tables)."""


def next_id(cur: Cursor, sequence: SequenceName) -> int:
    row = cur.execute(f"SELECT nextval('{sequence}')").fetchone()
    assert row is not None  # a SELECT without FROM returns one row
    return int(row[0])


def take_ids(cur: Cursor, sequence: SequenceName, count: int) -> list[int]:
    """``count`` new numbers of ``sequence``, ascending."""
    if count <= 0:
        return []
    rows = cur.execute(f"SELECT nextval('{sequence}') FROM generate_series(1, ?)", [count]).fetchall()
    return sorted(int(r[0]) for r in rows)
