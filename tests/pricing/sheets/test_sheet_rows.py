"""Reading a sheet as a table: what makes a whole sheet unreadable is named, once, on line 0."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.cells import JsonRow
from pricing.sheets.sheet_rows import CURL_HINT, read_columns, read_table

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


def _dict_reader(text: str) -> tuple[list[str], list[tuple[int, dict[str, str | None]]]]:
    """How ``csv.DictReader`` reads ``text``: the reading every CSV sheet is defined by."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    return list(header), [(i + 2, dict(row)) for i, row in enumerate(reader)]


_CELL = st.sampled_from(["a", "b", "", "x,y", '"q"', 'say ""hi""', "two\nlines", " s ", "é"])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), blank=st.sets(st.integers(0, 12)), newline=st.sampled_from(["\n", "\r\n"]))
def test_csv_rows_are_those_of_dict_reader(data: st.DataObject, blank: set[int], newline: str) -> None:
    names = ["gpu", "region", "price", "a", "b"]
    header = data.draw(
        st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=data.draw(st.booleans()))
    )
    width = len(header)
    # mostly full rows; some short (padded with None), a few long (more cells than the header)
    length = st.sampled_from([width] * 8 + list(range(width)) + [width + 1])
    rows = data.draw(st.lists(length.flatmap(lambda n: st.lists(_CELL, min_size=n, max_size=n)), max_size=12))

    def line(cells: list[str]) -> str:
        return ",".join(
            f'"{c}"' if any(ch in c for ch in ',"\n') and not c.startswith('"') else c for c in cells
        )

    lines = [line(header)]
    for index, cells in enumerate(rows):
        if index in blank:
            lines.append("")  # a blank line: not a row
        lines.append(line(cells))
    text = newline.join(lines) + newline
    table, problems = read_columns(text.encode(), json_format=False, list_key="offers", required=(), file="x")
    reasons = [p.reason for p in problems]
    try:
        names, expected = _dict_reader(text)
    except csv.Error:
        assert len(reasons) == 1 and reasons[0].startswith("not valid CSV")
        return
    if not text.strip():
        assert len(reasons) == 1 and reasons[0].startswith("the sheet is empty")
    elif not expected:
        assert len(reasons) == 1 and reasons[0].startswith("the sheet has a header but no rows")
    elif len(set(names)) < len(names):
        assert len(reasons) == 1 and reasons[0].startswith("the header names a column twice")
    elif any(None in row for _, row in expected):
        surplus = next(line for line, row in expected if None in row)
        assert reasons == [f"line {surplus} has more cells than the header"]
    else:
        assert reasons == [] and table.rows() == expected
        for name in names:
            assert list(table.column(name)) == [row[name] for _, row in expected]
