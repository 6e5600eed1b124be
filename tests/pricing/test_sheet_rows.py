"""Reading a sheet as a table: what makes a whole sheet unreadable is named, once, on line 0."""

from __future__ import annotations

import pytest

from pricing.cells import JsonRow
from pricing.sheet_rows import CURL_HINT, read_table

HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd"
ROW = "acme,a.l4,L4,1,eu,0.5"


def read(body: bytes, json_format: bool = False) -> tuple[list[object], list[str]]:
    rows, problems = read_table(body, json_format=json_format, list_key="offers", required=("gpu",), file="x")
    assert all(p.line == 0 for p in problems)
    return list(rows), [p.reason for p in problems]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "the sheet is empty"),
        (b" \n\n", "the sheet is empty"),
        (b"\xff\xfeprovider,gpu\n", "not UTF-8 text: byte 0xff at offset 0"),
        (HEADER.encode() + b"\n", "the sheet has a header but no rows"),
        (f"{HEADER}\n{ROW},extra\n".encode(), "line 2 has more cells than the header"),
    ],
)
def test_a_whole_sheet_problem_says_what_is_wrong(body: bytes, reason: str) -> None:
    rows, reasons = read(body)
    assert rows == [] and len(reasons) == 1 and reasons[0].startswith(reason), reasons


def test_a_one_line_csv_gets_the_curl_hint() -> None:
    # curl -d strips line breaks: the header and every row arrive as one long line.
    _, reasons = read((HEADER + ROW + ROW).encode())
    assert reasons == [f"the sheet has a header but no rows; {CURL_HINT}"]
    _, reasons = read(HEADER.encode() + b"\n")
    assert reasons == [
        "the sheet has a header but no rows"
    ]  # a header on its own line is just a header without rows


def test_duplicate_header_columns_are_refused_not_overwritten() -> None:
    _, reasons = read(f"{HEADER},price_per_hour_usd,gpu\n{ROW},9,H100\n".encode())
    assert reasons == ["the header names a column twice: gpu, price_per_hour_usd"]


def test_duplicate_keys_in_a_json_object_are_refused() -> None:
    _, reasons = read(b'[{"gpu": "L4", "gpu": "H100"}]', json_format=True)
    assert reasons == ["an object names a key twice: gpu"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[]", "the sheet has no rows"),
        (b"[1]", "expected a list of objects"),
        (b"[" * 100 + b"]" * 100, "JSON nested deeper than 64 levels"),
    ],
)
def test_whole_json_sheet_problems(body: bytes, reason: str) -> None:
    _, reasons = read(body, json_format=True)
    assert len(reasons) == 1 and reasons[0].startswith(reason), reasons


def test_a_json_integer_beyond_pythons_digit_limit_reaches_its_cell() -> None:
    body = b'[{"gpu": "L4", "gpus_per_instance": ' + b"9" * 5000 + b"}]"
    rows, reasons = read(body, json_format=True)
    assert reasons == []
    (line, row) = rows[0]  # type: ignore[misc]
    assert line == 1 and isinstance(row, JsonRow) and row["gpus_per_instance"] == "9" * 5000
