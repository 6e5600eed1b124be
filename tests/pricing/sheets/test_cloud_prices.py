from __future__ import annotations

from pricing.rules.aliases import AliasRule, AliasTable
from pricing.sheets.cloud_prices import parse_cloud_price_rows
from solver.catalog.gpus import GpuSpec
from tests.gpu_facts import facts

GPUS = {
    "h100-sxm": GpuSpec(
        gpu_id="h100-sxm",
        name="H100 SXM",
        vendor="NVIDIA",
        memory_gib=80,
        form_factor="SXM5",
        **facts("h100-sxm"),
    ),
}
ALIASES = AliasTable([AliasRule(alias="H100", canonical_gpu="H100 SXM", context="provider=aws")])


def row(**overrides: str) -> dict[str, str]:
    base = {
        "provider": "aws",
        "instance_type": "p5.48xlarge",
        "accelerator": "H100",
        "accelerator_count": "8",
        "gpu_memory_gib": "80",
        "vcpus": "192",
        "memory_gib": "2048",
        "region": "us-east-1",
        "price_per_hour_usd": "98.32",
        "spot_price_per_hour_usd": "",
        "source_file": "catalogs/v8/aws/vms.csv",
        "snapshot_commit": "abc",
    }
    return base | overrides


def parse(*rows: dict[str, str]):  # type: ignore[no-untyped-def]
    return parse_cloud_price_rows(rows, file="sheet.csv", aliases=ALIASES, gpus=GPUS)


def test_good_row_becomes_an_offer_with_derived_interconnect() -> None:
    parsed = parse(row())
    assert parsed.problems == []
    offer = parsed.offers[0]
    assert offer.gpu_id == "h100-sxm"
    assert offer.interconnect == "nvswitch"
    assert offer.interconnect_derived
    assert offer.price_per_hour_usd == 98.32
    assert offer.source == "skypilot-catalog:catalogs/v8/aws/vms.csv@abc"


def test_bad_rows_are_reported_with_line_and_column_never_dropped() -> None:
    parsed = parse(
        row(price_per_hour_usd="abc"),
        row(accelerator="Z900"),
        row(accelerator_count="0"),
        row(price_per_hour_usd="", spot_price_per_hour_usd=""),
        row(provider="gcp"),
        row(price_per_hour_usd="-1"),
    )
    assert parsed.offers == []
    assert [(p.line, p.column) for p in parsed.problems] == [
        (2, "price_per_hour_usd"),
        (3, "accelerator"),
        (4, "accelerator_count"),
        (5, "price_per_hour_usd"),
        (6, "accelerator"),
        (7, "price_per_hour_usd"),
    ]


def test_duplicate_offer_is_reported() -> None:
    parsed = parse(row(), row(price_per_hour_usd="90"))
    assert len(parsed.offers) == 1
    assert "duplicate" in parsed.problems[0].reason


def test_spot_only_offer_is_kept() -> None:
    parsed = parse(row(price_per_hour_usd="", spot_price_per_hour_usd="30"))
    assert parsed.offers[0].price_per_hour_usd is None
    assert parsed.offers[0].spot_price_per_hour_usd == 30
