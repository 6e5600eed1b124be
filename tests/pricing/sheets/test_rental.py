"""A rental sheet read a column at a time gives exactly the offers and problems of reading it row by
row: the same readers, the same name resolution and the same offer building, whatever the cells."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.sheets.context import SheetContext
from pricing.sheets.formats import SHEET_FORMATS
from pricing.sheets.offers import collect_offers
from pricing.sheets.rental import parse_rental, parse_row
from service.db.store import Store

# Cells as sheets write them: good ones (GPU names some rows' context resolves, MIG profiles, stated
# networks, JSON -0.0 and 2.0), and each kind of bad one (empty where required, not a number, out of
# range, a control character, a JSON string or boolean where a number belongs, a name no alias knows, a
# MIG profile the GPU lacks, a class without a rate, a linked single GPU).
GOOD: dict[str, list[Any]] = {
    "provider": ["acme", "aws", "vast", "lambda", "gcp"],
    "instance_type": ["a1", "p4d.24xlarge", "gpu_1x_a100", "2x-A100_SXM4-32-256", "x-nvlink", "g5.xlarge"],
    "gpu": ["L4", "H100 SXM", "h100_sxm", "B200", "A100", "GH200", "H100"],
    "gpus_per_instance": ["1", "2", "8", 1, 8, 2.0],
    "gpu_memory_gib": ["", "40", "80", "96", 80, 40.0],
    "interconnect": ["", "", "", "", "", "nvlink", "PCIE", "none"],
    "region": ["eu", "us-east-1"],
    "vcpus": ["", "16", "-0", -0.0, 0.0],
    "memory_gib": ["", "64"],
    "storage_read_gbps": ["", "12.5"],
    "network_class": ["", "", "", "", "infiniband", "none", "ethernet"],
    "network_gbps": ["", "", "100", 400],
    "price_per_hour_usd": ["0.5", "2.5", 2.5, 1, "1e3"],
    "spot_price_per_hour_usd": ["", "0.2", 0.2],
    "reserved_1y_price_per_hour_usd": ["", "0.4"],
    "billing_increment_s": ["", "1", "3600", 60, "60.0"],
    "mig_profile": ["", "", "", "", "", "1g.10gb", "MIG 3g.40gb", "1g.23gb"],
}
BAD: dict[str, list[Any]] = {
    "provider": ["", "a\x00b", {"a": 1}],
    "instance_type": ["", "t\x1b"],
    "gpu": ["Z9000", ""],
    "gpus_per_instance": ["0", "1.5", "x", "2048", True, "8"],
    "gpu_memory_gib": ["-1", "nan"],
    "interconnect": ["warp"],
    "region": ["", ["eu"]],
    "vcpus": ["1e13"],
    "memory_gib": ["abc"],
    "storage_read_gbps": ["0", "-3"],
    "network_class": ["ib"],
    "network_gbps": ["0", "3200000", "400"],
    "price_per_hour_usd": ["", "1e308", "0", "inf", True],
    "spot_price_per_hour_usd": ["-1"],
    "reserved_1y_price_per_hour_usd": ["x"],
    "billing_increment_s": ["0"],
    "mig_profile": ["7g.80gb", "1g.5gb"],
}
COLUMNS = list(GOOD)
REQUIRED = ("instance_type", "gpu", "gpus_per_instance", "region", "price_per_hour_usd")
NUMERIC = {c for c, values in GOOD.items() if any(isinstance(v, (int, float)) for v in values)}


def _rows(json_format: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    def cell(column: str) -> st.SearchStrategy[Any]:
        good, bad = GOOD[column], BAD[column]
        if json_format:  # JSON numbers where numbers belong; the bad strings stay strings
            good = [float(v) if column in NUMERIC and isinstance(v, str) and v else v for v in good]
        else:  # CSV cells are text
            good, bad = ([str(v) for v in values] for values in (good, bad))
        return st.sampled_from(good * 40 + bad)  # a bad cell in about one row of three

    row = st.fixed_dictionaries(
        {c: cell(c) for c in REQUIRED},
        optional={c: cell(c) for c in COLUMNS if c not in REQUIRED},
    )
    return st.lists(row, min_size=1, max_size=25)


def _body(rows: list[dict[str, Any]], json_format: bool) -> bytes:
    if json_format:
        return json.dumps(rows).encode()
    header = COLUMNS
    lines = [",".join(header)]
    for row in rows:
        cells = ['"' + str(row.get(c, "")).replace('"', '""') + '"' for c in header]
        width = len(header) if "mig_profile" in row else header.index("mig_profile")
        lines.append(",".join(cells[:width]))  # a row without a MIG profile cell is short
    return ("\n".join(lines) + "\n").encode()


def _context(store: Store, provider: str | None) -> SheetContext:
    snapshot = store.snapshot
    return SheetContext(
        file="x",
        source="t",
        provider=provider,
        aliases=snapshot.alias_table(),
        gpus=snapshot.gpus,
        mig_slices=snapshot.mig_slices,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), json_format=st.booleans(), given_provider=st.sampled_from([None, "acme", "vast"]))
def test_reading_by_column_equals_reading_row_by_row(
    store: Store, data: st.DataObject, json_format: bool, given_provider: str | None
) -> None:
    rows = data.draw(_rows(json_format))
    if data.draw(st.booleans()):  # repeat rows: duplicate offers, and the same cell values many times
        rows = rows + rows[: len(rows) // 2]
    spec = SHEET_FORMATS["rental_json" if json_format else "rental_csv"]
    table, problems = spec.read(_body(rows, json_format), f"x.{spec.extension}")
    if problems:  # a whole-sheet problem (e.g. a required column no row has): nothing to compare
        return
    sheet = _context(store, given_provider)
    by_column = parse_rental(table, sheet)
    by_row = collect_offers(table.rows(), "x", partial(parse_row, sheet=sheet))
    assert by_column.offers == by_row.offers
    assert by_column.problems == by_row.problems


def test_a_large_valid_sheet_gives_every_offer(store: Store) -> None:
    header = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,mig_profile"
    lines = [header] + [
        f"acme,i{i},{('L4', 'A100 80GB SXM', 'H100 SXM')[i % 3]},{1 + i % 8},r{i % 7},{1 + i % 50},"
        + ("1g.10gb" if i % 3 == 1 else "")
        for i in range(5000)
    ]
    table, problems = SHEET_FORMATS["rental_csv"].read(("\n".join(lines) + "\n").encode(), "x.csv")
    sheet = _context(store, None)
    parsed = parse_rental(table, sheet)
    assert problems == [] and parsed.problems == [] and len(parsed.offers) == 5000
    assert parsed.offers == collect_offers(table.rows(), "x", partial(parse_row, sheet=sheet)).offers
    assert {o.mig_profile for o in parsed.offers} == {None, "1g.10gb"}
