"""The snapshot's current offers, read one rental version at a time and merged (``rental_parts``), are
what one query over all current offers gives (the query the snapshot ran before issue 28 D6, kept here
as the oracle), through uploads that replace, add and share kinds and offer ids across sources; and a
new snapshot reads only the versions added since the one before it."""

from __future__ import annotations

import random
from typing import Any, Final

import pytest

from service.db.rental_parts import KIND_FIELDS
from service.db.store import Store
from service.price_sheets.importer import import_sheet

_PRICES: Final = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)
_HEADER: Final = "provider,instance_type,gpu,gpus_per_instance,region," + ",".join(_PRICES)
_KIND: Final = ", ".join(KIND_FIELDS)
_ORDERS: Final = {
    "on_demand": "price_per_hour_usd NULLS LAST, offer_id, version",
    "spot": "spot_price_per_hour_usd NULLS LAST, offer_id, version",
    "reserved_1y": "reserved_1y_price_per_hour_usd NULLS LAST, offer_id, version",
    "reserved_3y": "reserved_3y_price_per_hour_usd NULLS LAST, offer_id, version",
    "rent": "price_per_hour_usd NULLS LAST, instance_type, offer_id, version",
}
_ONLY: Final = {
    "reserved_1y": "WHERE reserved_1y_price_per_hour_usd IS NOT NULL ",
    "reserved_3y": "WHERE reserved_3y_price_per_hour_usd IS NOT NULL ",
}
_ORACLE: Final = " UNION ALL ".join(
    f"SELECT version, offer_id, '{pick}' AS pick FROM (SELECT DISTINCT ON ({_KIND}) version, offer_id "
    f"FROM current_offers {_ONLY.get(pick, '')}ORDER BY {_KIND}, {order}) AS {pick}"
    for pick, order in _ORDERS.items()
)
_COUNTS: Final = (
    f"SELECT {_KIND}, count(price_per_hour_usd), count(spot_price_per_hour_usd), "
    "count(reserved_1y_price_per_hour_usd), count(reserved_3y_price_per_hour_usd) "
    f"FROM current_offers GROUP BY {_KIND}"
)


def _sheet(rng: random.Random, providers: tuple[str, ...]) -> bytes:
    """Few instance types, regions and prices, so kinds, offer ids and prices meet across sources."""

    def price() -> str:
        return rng.choice(["", "1", "2", "2.5"])

    rows: dict[str, str] = {}
    for _ in range(rng.randint(1, 40)):
        prices = [rng.choice(["", "1", "3"]), price(), price(), price()]
        if not prices[0] and not prices[1]:
            prices[0] = "3"
        key = f"{rng.choice(providers)},t{rng.randint(10, 19)},{rng.choice(['L4', 'H100 SXM'])},1,{rng.choice(['eu', 'us'])}"
        rows[key] = f"{key},{','.join(prices)}"  # one row per offer
    return ("\n".join([_HEADER, *rows.values()]) + "\n").encode()


def _oracle(store: Store) -> list[tuple[Any, ...]]:
    """Each candidate's (offer id, version, on-demand, spot, 1y, 3y alike) by one query over all."""
    with store.cursor() as cur:
        alike = {tuple(r[:-4]): r[-4:] for r in cur.execute(_COUNTS).fetchall()}
        picks: dict[tuple[str, int], set[str]] = {}
        for version, offer_id, pick in cur.execute(_ORACLE).fetchall():
            picks.setdefault((offer_id, int(version)), set()).add(pick)
        kinds = {
            (r[0], int(r[1])): tuple(r[2:])
            for r in cur.execute(f"SELECT offer_id, version, {_KIND} FROM current_offers").fetchall()
        }
    found = []
    for (offer_id, version), chosen in sorted(picks.items()):
        counts = alike[kinds[offer_id, version]]
        found.append(
            (
                offer_id,
                version,
                *(int(n) if p in chosen else 0 for p, n in zip(_ORDERS, counts, strict=False)),
            )
        )
    return found


def _merged(store: Store) -> list[tuple[Any, ...]]:
    return [
        (
            c.offer.offer_id,
            c.sheet_version,
            c.on_demand_alike,
            c.spot_alike,
            c.reserved_1y_alike,
            c.reserved_3y_alike,
        )
        for c in store.snapshot.candidates
    ]


def _counts(store: Store) -> tuple[dict[str, int], frozenset[str], int]:
    with store.cursor() as cur:
        per_provider = {
            str(p): int(n)
            for p, n in cur.execute(
                "SELECT provider, count(*) FROM current_offers GROUP BY provider"
            ).fetchall()
        }
        regions = frozenset(
            str(r[0]) for r in cur.execute("SELECT DISTINCT region FROM current_offers").fetchall()
        )
    return per_provider, regions, sum(per_provider.values())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_merged_parts_are_what_one_query_over_all_current_offers_gives(db_target: str, seed: int) -> None:
    rng = random.Random(seed)
    with Store.open(db_target) as store:
        for step in range(8):
            source = rng.choice(["a", "b", "c"])
            providers = ("acme", "zeta") if source != "c" else ("acme",)  # acme's offers in every source
            report = import_sheet(
                store, source=source, fmt="rental_csv", body=_sheet(rng, providers), origin="t"
            )
            assert report.result == "ok", (step, report)
            assert _merged(store) == _oracle(store), step
            snapshot = store.snapshot
            assert (dict(snapshot.offer_counts), snapshot.regions, snapshot.current_offer_count) == _counts(
                store
            )
            assert snapshot.providers == frozenset(snapshot.offer_counts)


def test_a_new_snapshot_reads_only_the_rental_versions_added(db_target: str) -> None:
    rng = random.Random(7)
    with Store.open(db_target) as store:
        import_sheet(store, source="big", fmt="rental_csv", body=_sheet(rng, ("acme",)), origin="t")
        before = store.snapshot
        big = max(before.rental.parts)
        import_sheet(store, source="small", fmt="rental_csv", body=_sheet(rng, ("zeta",)), origin="t")
        after = store.snapshot
        assert after.generation > before.generation
        assert after.rental.parts[big] is before.rental.parts[big]  # taken over, not read again
        acme = {kind: merged for kind, merged in before.rental.kinds.items() if kind[0] == "acme"}
        assert acme and all(
            after.rental.kinds[kind] is merged for kind, merged in acme.items()
        )  # not merged again
        assert set(after.rental.parts) == set(before.rental.parts) | {max(after.rental.parts)}
        import_sheet(store, source="big", fmt="rental_csv", body=_sheet(rng, ("acme",)), origin="t")
        assert big not in store.snapshot.rental.parts  # superseded: dropped with its rows
