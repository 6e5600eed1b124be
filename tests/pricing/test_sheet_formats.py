"""The sheet-format table: each format reads and parses into what its kind says, with one lookup."""

from __future__ import annotations

import json

import pytest

from pricing.offers import ParsedOffers
from pricing.sheet_formats import FORMATS, SHEET_FORMATS, ParsedPrices, SheetContext, SheetFormat
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
    else:
        assert isinstance(parsed, ParsedPrices) and [p.gpu_id for p in parsed.prices] == ["l4"]


@pytest.mark.parametrize("name", FORMATS)
def test_a_sheet_without_its_required_columns_is_one_problem(name: SheetFormat) -> None:
    spec = SHEET_FORMATS[name]
    header = ",".join(spec.required[1:])
    body = json.dumps([{c: "1" for c in spec.required[1:]}]) if spec.json else f"{header}\n{'1,' * 3}\n"
    rows, problems = spec.read(body.encode(), "x")
    assert rows == [] and [p.column for p in problems] == [spec.required[0]]


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
    body = (
        json.dumps(rows).encode()
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
