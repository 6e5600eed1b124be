"""The snapshot holds only the offers a request can pick (the cheapest of each kind), and plans choose
from them exactly what they would choose from every current offer: the same supplies, the same offers
behind them, the same rejections and the same count of offers passed over, whatever the filters."""

from __future__ import annotations

import itertools
import random

import msgspec

from service.buy_vs_rent.inputs import sheet_rows
from service.db.snapshot import CatalogSnapshot, CurrentOffer
from service.db.store import Store
from service.plans.supply import SupplyFilter, build_supply_index, rental_supplies
from service.price_sheets.importer import import_sheet
from solver.spec.host import HostSpec
from tests.service.current import current_offers

_GPUS = ("H100 SXM", "L4", "A100 80GB SXM")


def _sheet(rng: random.Random, rows: int) -> bytes:
    """Offers of few kinds, many alike: repeated prices (ties), spot-only and on-demand-only offers,
    host numbers stated for some."""
    lines = [
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,spot_price_per_hour_usd,"
        "vcpus,memory_gib"
    ]
    for i in range(rows):
        price = rng.choice(["", "2", "3", "3", "4.5", "5", "6", "7.5", "8"])
        spot = rng.choice(["", "", "1", "1.5"]) if price else rng.choice(["1", "2"])
        lines.append(
            f"{rng.choice(['p1', 'p2', 'p3'])},t{rng.randrange(40)}-{i},{rng.choice(_GPUS)},"
            f"{rng.choice([1, 8])},{rng.choice(['eu', 'us', 'ap'])},{price},{spot},"
            f"{rng.choice(['', '8', '16', '64'])},{rng.choice(['', '128', '512'])}"
        )
    return ("\n".join(lines) + "\n").encode()


def _every_offer(store: Store) -> CatalogSnapshot:
    """The snapshot with every current offer as a candidate (what the planner grouped before)."""
    snapshot = store.snapshot
    with store.cursor() as cur:
        versions = dict(cur.execute("SELECT offer_id, version FROM current_offers").fetchall())
    every = tuple(CurrentOffer(offer=o, sheet_version=versions[o.offer_id]) for o in current_offers(store))
    return msgspec.structs.replace(snapshot, candidates=every, built=type(snapshot.built)())


def test_plans_pick_from_the_candidates_what_they_would_pick_from_every_offer() -> None:
    rng = random.Random(13)
    with Store.open(":memory:") as store:
        report = import_sheet(store, source="many", fmt="rental_csv", body=_sheet(rng, 3000), origin="t")
        assert report.result == "ok"
        pruned, full = store.snapshot, _every_offer(store)
        assert len(pruned.candidates) < len(full.candidates)  # many offers alike
        assert pruned.current_offer_count == len(full.candidates)
        pruned_index, full_index = build_supply_index(pruned), build_supply_index(full)
        hosts = [
            None,
            HostSpec(cpu_cores_per_gpu=4),
            HostSpec(cpu_cores_per_gpu=12),
            HostSpec(host_ram_gib_per_gpu=32, cpu_cores_per_gpu=2),
        ]
        providers = [None, frozenset({"p1"}), frozenset({"p2", "p3"}), frozenset({"aws"})]
        regions = [None, frozenset({"eu"}), frozenset({"us", "ap"})]
        for host, chosen, where, spot in itertools.product(hosts, providers, regions, (False, True)):
            filters = SupplyFilter(
                providers=chosen, regions=where, gpus=None, excluded=frozenset(), spot=spot, host=host
            )
            assert rental_supplies(pruned_index, filters) == rental_supplies(full_index, filters)
        for gpu_id in ("h100-sxm", "l4", "a100-80gb-sxm"):  # buy vs rent cites the same cheapest offer
            assert _cheapest(sheet_rows(pruned, gpu_id).offers) == _cheapest(sheet_rows(full, gpu_id).offers)


def _cheapest(offers: list[msgspec.Struct]) -> object:
    return min(
        (o.price_per_hour_usd / o.gpus_per_instance, o.provider, o.instance_type, o.region, o.offer_id)  # type: ignore[attr-defined]
        for o in offers
    )
