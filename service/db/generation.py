"""What the catalog snapshot is read from, in two cheap queries: the current sheet versions, the
serving profiles (their highest id and count: an upload replaces rows with new ids), the loaded seed,
the current measurement uploads and the number of sheet versions (which retention lowers).

Every write that changes the snapshot changes this state, whichever process made it, so a process can
poll it to learn that its snapshot is stale (the reload itself is the caller's).
"""

from __future__ import annotations

import msgspec

from service.db.backend import Cursor

__all__ = ["CatalogState", "read_catalog_state"]


class CatalogState(msgspec.Struct, frozen=True, kw_only=True):
    sheet_versions: tuple[int, ...]
    """The current version of every source and kind, ascending."""
    serving_profiles: tuple[int, int]
    """The highest serving-profile id and the number of serving profiles."""
    seed: str | None
    """The fingerprint of the shipped data loaded."""
    measurements: tuple[int, ...] = ()
    """The current version of every imported measurement source, ascending."""
    sheet_count: int = 0
    """Stored price-sheet versions, current or not (``price_sheets.retention`` deletes superseded ones)."""


def read_catalog_state(cur: Cursor) -> CatalogState:
    versions = tuple(
        int(r[0]) for r in cur.execute("SELECT version FROM current_sheets ORDER BY version").fetchall()
    )
    row = cur.execute(
        "SELECT (SELECT coalesce(max(serving_id), 0) FROM serving_profiles), "
        "(SELECT count(*) FROM serving_profiles), (SELECT max(content_hash) FROM seed_state), "
        "(SELECT count(*) FROM price_sheets)"
    ).fetchone()
    assert row is not None  # a SELECT without FROM returns one row
    measured = tuple(
        int(r[0])
        for r in cur.execute("SELECT version FROM current_measurement_uploads ORDER BY version").fetchall()
    )
    return CatalogState(
        sheet_versions=versions,
        serving_profiles=(int(row[0]), int(row[1])),
        seed=row[2],
        measurements=measured,
        sheet_count=int(row[3]),
    )
