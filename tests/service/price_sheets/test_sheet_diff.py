"""The diff the store computes between two versions of a source lists exactly the offers added and
removed and every price that moved (nulls included), in offer-id then field order, as comparing the
two sheets' offers one by one does."""

from __future__ import annotations

import random

from pricing.sheets.formats import SHEET_FORMATS, SheetContext
from pricing.sheets.offers import RentalOffer
from service.db.store import Store
from service.price_sheets.importer import import_sheet

FIELDS = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)
HEADER = "provider,instance_type,gpu,gpus_per_instance,region," + ",".join(FIELDS)


def _sheet(rng: random.Random, kept: range) -> bytes:
    def price() -> str:
        return rng.choice(["", "1", "2", "2.5", "9"])

    lines = [HEADER]
    for i in kept:
        prices = [rng.choice(["1", "3"]), price(), price(), price()]  # an on-demand price in every row
        lines.append(f"acme,t{i},L4,1,eu,{','.join(prices)}")
    return ("\n".join(lines) + "\n").encode()


def _offers(store: Store, body: bytes) -> dict[str, RentalOffer]:
    table, _ = SHEET_FORMATS["rental_csv"].read(body, "x.csv")
    snapshot = store.snapshot
    sheet = SheetContext(
        file="x", source="source 'acme'", provider=None, aliases=snapshot.alias_table(), gpus=snapshot.gpus
    )
    return {o.offer_id: o for o in SHEET_FORMATS["rental_csv"].parse(table, sheet).offers}  # type: ignore[union-attr]


def test_the_stored_diff_is_the_offer_by_offer_comparison() -> None:
    rng = random.Random(7)
    with Store.open(":memory:") as store:
        first, second = _sheet(rng, range(400)), _sheet(rng, range(150, 600))
        assert import_sheet(store, source="acme", fmt="rental_csv", body=first, origin="t").result == "ok"
        report = import_sheet(
            store, source="acme", fmt="rental_csv", body=second, origin="t", move_factor=2.0
        )
        before, after = _offers(store, first), _offers(store, second)
    diff = report.diff
    assert diff is not None
    assert diff.added == sorted(set(after) - set(before))
    assert diff.removed == sorted(set(before) - set(after))
    expected = [
        (offer_id, field, getattr(before[offer_id], field), getattr(after[offer_id], field))
        for offer_id in sorted(set(after) & set(before))
        for field in FIELDS
        if getattr(before[offer_id], field) != getattr(after[offer_id], field)
    ]
    assert [(c.offer_id, c.field, c.old, c.new) for c in diff.changed] == expected
    assert any(c.old is None for c in diff.changed) and any(c.new is None for c in diff.changed)
    assert {c.instance_type for c in diff.changed} <= {o.instance_type for o in after.values()}
    moved = [c for c in diff.changed if c.old and c.new and max(c.old / c.new, c.new / c.old) > 2.0]
    assert len(report.warnings) == len(moved) > 0
    assert [o.offer_id for o in diff.removed_offers] == diff.removed[:200]
