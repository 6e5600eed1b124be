"""A live source can retire its provider's shipped offers (``retire_seed_provider`` in the sources
file); a version's diff names each added, removed and repriced offer by instance type, GPU and price."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.db.seed import SEED_SOURCE
from service.db.store import Store
from service.price_sheets.importer import DIFF_DETAIL_LIMIT, import_sheet
from service.price_sheets.refresh import Refresher
from service.price_sheets.sources import SourceConfig, load_sources
from tests.service.current import current_offers

LAMBDA_VMS = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
    "gpu_1x_h100_sxm5,H100,1,26,225,,3.29,,us-east-1,us-east-1a\n"
)


def _lambda_offers(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for offer in current_offers(store):
        if offer.provider == "lambda":
            counts[offer.source] = counts.get(offer.source, 0) + 1
    return counts


@pytest.mark.parametrize("retire", [False, True])
def test_a_live_source_retires_the_shipped_offers_of_its_provider(
    db_target: str, tmp_path: Path, retire: bool
) -> None:
    sheet = tmp_path / "vms.csv"
    sheet.write_text(LAMBDA_VMS)
    source = SourceConfig(
        name="lambda-live",
        url=str(sheet),
        format="cloud_catalog_csv",
        provider="lambda",
        retire_seed_provider=retire,
    )
    with Store.open(db_target) as store:
        shipped = sum(_lambda_offers(store).values())
        assert shipped > 1
        refresher = Refresher(store, [source], sleep=lambda _: None)
        assert refresher.run("lambda-live").result == "ok"
        live = sum(n for s, n in _lambda_offers(store).items() if not s.startswith("skypilot"))
        assert sum(_lambda_offers(store).values()) == (live if retire else shipped + live)
        others = set(store.snapshot.offer_counts)
        assert {"aws", "lambda"} <= others  # only lambda's shipped offers go
        assert refresher.run("lambda-live").result == "unchanged"  # and a second run stores nothing
        with store.cursor() as cur:
            seed_versions = cur.execute(
                "SELECT count(*) FROM price_sheets WHERE source = ? AND kind = 'rental'", [SEED_SOURCE]
            ).fetchone()
        assert seed_versions == ((2,) if retire else (1,))


def test_retiring_needs_a_provider(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(
        '[[source]]\nname = "x"\nurl = "x.csv"\nformat = "rental_csv"\nretire_seed_provider = true\n'
    )
    with pytest.raises(ValueError, match="retire_seed_provider and so needs provider"):
        load_sources(str(path))


HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"


def test_a_diff_names_instance_type_gpu_and_old_and_new_price(db_target: str) -> None:
    with Store.open(db_target) as store:
        first = HEADER + "acme,a.h100,H100 SXM,1,eu-1,2.6\nacme,a.l4,L4,1,eu-1,0.5\n"
        import_sheet(store, source="acme", fmt="rental_csv", body=first.encode(), origin="t")
        second = HEADER + "acme,a.h100,H100 SXM,1,eu-1,2.4\nacme,a.l40s,L40S,2,eu-1,1.8\n"
        report = import_sheet(store, source="acme", fmt="rental_csv", body=second.encode(), origin="t")
    diff = report.diff
    assert diff is not None
    [change] = diff.changed
    assert (change.instance_type, change.gpu, change.region, change.old, change.new) == (
        "a.h100",
        "h100-sxm",
        "eu-1",
        2.6,
        2.4,
    )
    assert [
        (o.instance_type, o.gpu, o.gpus_per_instance, o.price_per_hour_usd) for o in diff.added_offers
    ] == [("a.l40s", "l40s", 2, 1.8)]
    assert [(o.instance_type, o.gpu) for o in diff.removed_offers] == [("a.l4", "l4")]
    assert [o.offer_id for o in diff.added_offers] == diff.added


def test_a_diff_describes_at_most_the_first_offers_in_full(db_target: str) -> None:
    rows = "".join(f"acme,t{i:04d},L4,1,eu-1,0.5\n" for i in range(DIFF_DETAIL_LIMIT + 50))
    with Store.open(db_target) as store:
        report = import_sheet(
            store, source="acme", fmt="rental_csv", body=(HEADER + rows).encode(), origin="t"
        )
    assert report.diff is not None and len(report.diff.added) == DIFF_DETAIL_LIMIT + 50
    assert [o.offer_id for o in report.diff.added_offers] == report.diff.added[:DIFF_DETAIL_LIMIT]
