"""A 16 MB rental sheet through the import path: time and peak memory (RSS) of this process.

The store is in memory, so its data (the 330,000 rows, compressed, and their index) counts in the RSS;
before issue 13 the import took 22-40 s and grew the RSS by 1.2 GB."""

from __future__ import annotations

import resource
import time

from service.db.store import Store
from service.price_sheets.importer import import_sheet
from tests.service.price_sheets.large_sheet import large_rental_sheet


def test_a_16_mb_sheet_import() -> None:
    body = large_rental_sheet(330_000)
    assert len(body) >= 16_000_000
    store = Store.open(":memory:")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = import_sheet(store, source="big", fmt="rental_csv", body=body, origin="t")
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store.close()
    assert report.result == "ok" and report.accepted_rows == 330_000
    print(
        f"\n16 MB sheet ({len(body) / 1e6:.1f} MB, 330,000 rows): {elapsed:.1f} s, "
        f"peak RSS {before:.0f} -> {peak:.0f} MB (+{peak - before:.0f} MB)"
    )
    assert elapsed < 60 and peak - before < 900
