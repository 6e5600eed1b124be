"""The shipped rental sheet is as old as its data, not as the database: plans on it warn when stale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from service.db.seed import SEED_RENTAL_PRICES_AS_OF, SEED_SOURCE
from service.db.store import Store
from service.plans.render import price_sheets_used


def test_the_shipped_rental_sheet_is_dated_by_its_source_and_can_be_stale() -> None:
    with Store.open(":memory:") as store:
        snapshot = store.snapshot
    seed = next(s for s in snapshot.sheets if s.source == SEED_SOURCE and s.kind == "rental")
    assert seed.fetched_at == SEED_RENTAL_PRICES_AS_OF
    soon = SEED_RENTAL_PRICES_AS_OF + timedelta(days=10)
    assert price_sheets_used(snapshot, "rent", soon, 24 * 30).warnings == []
    now = datetime.now(UTC)
    warnings = price_sheets_used(snapshot, "rent", now, 24 * 30).warnings
    days = (now - SEED_RENTAL_PRICES_AS_OF).total_seconds() / 86400
    assert any(f"'{SEED_SOURCE}'" in w and f"is {days:.0f} days old" in w for w in warnings), warnings
