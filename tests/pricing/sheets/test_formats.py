"""The sheet-format table: each format reads and parses into what its kind says, with one lookup."""

from __future__ import annotations

import json

import pytest

from pricing.sheets.formats import (
    FORMATS,
    SHEET_FORMATS,
    ParsedPrices,
    ParsedProviderCosts,
    SheetContext,
    SheetFormat,
)
from pricing.sheets.offers import ParsedOffers
from service.db.store import Store

SHEETS = {
    "rental_csv": b"provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\nacme,a1,L4,1,eu,0.5\n",
    "rental_json": json.dumps(
        {
            "offers": [
                {
                    "provider": "acme",
                    "instance_type": "a1",
                    "gpu": "L4",
                    "gpus_per_instance": 1,
                    "region": "eu",
                    "price_per_hour_usd": 0.5,
                }
            ]
        }
    ).encode(),
    "cloud_catalog_csv": b"InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\ng2,L4,1,0.7,0,us\n",
    "provider_costs_csv": b"provider,provider_class,storage_usd_per_gb_month,source\nacme,neocloud,0.1,me\n",
    "ownership_csv": b"gpu,purchase_price_usd,source\nL4,2500,me\n",
}


def test_every_format_is_in_the_table_under_its_name() -> None:
    assert tuple(SHEETS) == FORMATS
    assert all(SHEET_FORMATS[name].name == name for name in FORMATS)
    assert [n for n in FORMATS if SHEET_FORMATS[n].needs_provider] == ["cloud_catalog_csv"]
    assert [n for n in FORMATS if SHEET_FORMATS[n].extension == "json"] == ["rental_json"]


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_parses_into_its_kind(name: SheetFormat, store: Store) -> None:
    spec = SHEET_FORMATS[name]
    rows, problems = spec.read(SHEETS[name], f"x.{spec.extension}")
    assert problems == [] and len(rows) == 1
    snapshot = store.snapshot
    sheet = SheetContext(
        file="x", source="t", provider="acme", aliases=snapshot.alias_table(), gpus=snapshot.gpus
    )
    parsed = spec.parse(rows, sheet)
    assert parsed.problems == []
    if spec.kind == "rental":
        assert isinstance(parsed, ParsedOffers) and [o.gpu_id for o in parsed.offers] == ["l4"]
    elif spec.kind == "provider_costs":
        assert isinstance(parsed, ParsedProviderCosts) and [c.provider for c in parsed.costs] == ["acme"]
    else:
        assert isinstance(parsed, ParsedPrices) and [p.gpu_id for p in parsed.prices] == ["l4"]


@pytest.mark.parametrize("name", FORMATS)
def test_a_sheet_without_its_required_columns_is_one_problem(name: SheetFormat) -> None:
    spec = SHEET_FORMATS[name]
    header = ",".join(spec.required[1:])
    body = json.dumps([{c: "1" for c in spec.required[1:]}]) if spec.json else f"{header}\n{'1,' * 3}\n"
    rows, problems = spec.read(body.encode(), "x")
    assert len(rows) == 0 and [p.column for p in problems] == [spec.required[0]]


MIG_SHEET = b"""provider,instance_type,gpu,gpus_per_instance,interconnect,region,price_per_hour_usd,mig_profile
acme,a.b200.slice,B200,1,,eu,0.9,1g.23gb
acme,a.h100.slices,H100 SXM,2,none,eu,1.2,MIG 3g.40gb
acme,a.b200.bad,B200,1,,eu,0.9,1g.10gb
acme,a.l4.bad,L4,1,,eu,0.3,1g.6gb
acme,a.b200.linked,B200,2,nvlink,eu,1.8,1g.23gb
acme,a.b200.whole,B200,1,,eu,6.0,
"""


@pytest.mark.parametrize("name", ["rental_csv", "rental_json"])
def test_a_rental_row_may_rent_mig_slices(name: SheetFormat, store: Store) -> None:
    spec = SHEET_FORMATS[name]
    body = MIG_SHEET
    if name == "rental_json":
        rows_csv = [line.split(",") for line in MIG_SHEET.decode().splitlines()]
        numbers = {"gpus_per_instance": int, "price_per_hour_usd": float}  # JSON numbers, not strings
        items = [
            {c: numbers[c](v) if c in numbers else v for c, v in zip(rows_csv[0], r, strict=True)}
            for r in rows_csv[1:]
        ]
        body = json.dumps(items).encode()
    rows, problems = spec.read(body, f"x.{spec.extension}")
    assert problems == []
    snapshot = store.snapshot
    sheet = SheetContext(
        file="x",
        source="t",
        provider="acme",
        aliases=snapshot.alias_table(),
        gpus=snapshot.gpus,
        mig_slices=snapshot.mig_slices,
    )
    parsed = spec.parse(rows, sheet)
    assert isinstance(parsed, ParsedOffers)
    by_type = {o.instance_type: o for o in parsed.offers}
    assert set(by_type) == {"a.b200.slice", "a.h100.slices", "a.b200.whole"}
    one = by_type["a.b200.slice"]
    assert one.gpu_id == "b200" and one.mig_profile == "1g.23gb" and one.interconnect == "none"
    assert by_type["a.h100.slices"].mig_profile == "3g.40gb"
    assert by_type["a.b200.whole"].mig_profile is None
    assert one.offer_id != by_type["a.b200.whole"].offer_id
    first = 2 if name == "rental_csv" else 1  # CSV lines count the header; JSON rows count from 1
    found = {(p.line - first, p.column): p.reason for p in parsed.problems}
    assert set(found) == {(2, "mig_profile"), (3, "mig_profile"), (4, "interconnect")}
    assert "1g.23gb" in found[2, "mig_profile"] and "no MIG profiles" in found[3, "mig_profile"]


@pytest.mark.parametrize("name", ["rental_csv", "rental_json"])
def test_rental_sheets_carry_the_optional_storage_read_rate(name: SheetFormat, store: Store) -> None:
    spec = SHEET_FORMATS[name]
    rows = [
        {
            "provider": "acme",
            "instance_type": f"a{i}",
            "gpu": "L4",
            "gpus_per_instance": "1",
            "region": "eu",
            "price_per_hour_usd": "0.5",
            "storage_read_gbps": rate,
        }
        for i, rate in enumerate(("12.5", "", "-3"))
    ]
    numeric = ("gpus_per_instance", "price_per_hour_usd", "storage_read_gbps")
    as_json = [{k: float(v) if k in numeric and v else v for k, v in r.items()} for r in rows]
    body = (
        json.dumps(as_json).encode()
        if name == "rental_json"
        else (",".join(rows[0]) + "\n" + "\n".join(",".join(r.values()) for r in rows) + "\n").encode()
    )
    read, problems = spec.read(body, f"x.{spec.extension}")
    assert problems == []
    snapshot = store.snapshot
    sheet = SheetContext(
        file="x", source="t", provider="acme", aliases=snapshot.alias_table(), gpus=snapshot.gpus
    )
    parsed = spec.parse(read, sheet)
    assert isinstance(parsed, ParsedOffers)
    assert [o.storage_read_gbps for o in parsed.offers] == [12.5, None]
    assert [p.column for p in parsed.problems] == ["storage_read_gbps"]  # a negative rate


def _ownership_problems(store: Store, price_date: str) -> list[tuple[int, str | None]]:
    spec = SHEET_FORMATS["ownership_csv"]
    body = f"gpu,purchase_price_usd,price_date,source\nL4,2500,{price_date},me\n".encode()
    rows, problems = spec.read(body, "x.csv")
    assert problems == []
    snapshot = store.snapshot
    sheet = SheetContext(
        file="x", source="t", provider=None, aliases=snapshot.alias_table(), gpus=snapshot.gpus
    )
    return [(p.line, p.column) for p in spec.parse(rows, sheet).problems]


@pytest.mark.parametrize(
    "price_date", ["2026-99", "99999-01", "2024-00", "1800", "2024-1-1", "٢٠٢٤", "24-01"]
)
def test_an_ownership_price_date_is_a_real_year_and_month(store: Store, price_date: str) -> None:
    assert _ownership_problems(store, price_date) == [(2, "price_date")]


@pytest.mark.parametrize("price_date", ["", "2024", "2024-03", "2025-12", "2024-3"])
def test_valid_ownership_price_dates_are_kept(store: Store, price_date: str) -> None:
    assert _ownership_problems(store, price_date) == []
