"""Sheet cells are bounded: finite numbers under their cap, whole numbers that fit the store, text
without control characters, JSON numbers as numbers; a row reports every problem it has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pricing.cells import (
    MAX_COUNT,
    MAX_PRICE_PER_HOUR_USD,
    JsonRow,
    cell_count,
    cell_float,
    cell_text,
)
from pricing.errors import SheetRowError
from pricing.sheets.offers import collect_rows


def reason(read: Any, row: Mapping[str, Any], **kwargs: Any) -> str:
    with pytest.raises(SheetRowError) as caught:
        read(row, "c", **kwargs)
    assert caught.value.column == "c"
    return caught.value.reason


@pytest.mark.parametrize("value", ["2147483648", str(2**63), "9" * 5000, 2**31, 1e300, "1e300"])
def test_whole_numbers_beyond_the_integer_columns_are_out_of_range(value: object) -> None:
    assert reason(cell_count, {"c": value}).startswith(f"must be at most {MAX_COUNT:,}")
    assert cell_count({"c": str(MAX_COUNT)}, "c") == MAX_COUNT


def test_a_long_number_is_not_echoed_whole() -> None:
    assert len(reason(cell_count, {"c": "9" * 5000})) < 100


@pytest.mark.parametrize("value", ["1e308", 1e308, "10000.01", "9" * 400])
def test_prices_above_the_cap_are_refused(value: object) -> None:
    text = reason(cell_float, {"c": value}, positive=True, maximum=MAX_PRICE_PER_HOUR_USD)
    assert text.startswith("must be at most 10,000")
    assert cell_float({"c": "10000"}, "c", maximum=MAX_PRICE_PER_HOUR_USD) == 10_000


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", float("inf"), float("nan")])
def test_non_finite_numbers_are_refused(value: object) -> None:
    assert "non-negative number" in reason(cell_float, {"c": value})


def test_every_number_has_a_cap() -> None:
    assert reason(cell_float, {"c": "1e13"}).startswith("must be at most 1,000,000,000,000")


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85"])
def test_control_characters_in_text_are_refused(char: str) -> None:
    text = reason(cell_text, {"c": f"a{char}b"})
    assert text == f"contains the control character U+{ord(char):04X}"
    assert cell_text({"c": "tab\tinside"}, "c") == "tab\tinside"


def test_a_json_row_needs_numbers_where_numbers_belong() -> None:
    assert "JSON number is expected" in reason(cell_count, JsonRow(c="8"))
    assert "JSON number is expected" in reason(cell_float, JsonRow(c="0.5"))
    assert cell_count(JsonRow(c=8), "c") == 8 and cell_float(JsonRow(c=0.5), "c") == 0.5
    assert cell_count({"c": "8"}, "c") == 8  # CSV cells are all text


def test_a_row_reports_every_problem_it_has() -> None:
    def parse(row: Mapping[str, Any]) -> tuple[int, float | None, str]:
        count = cell_count(row, "count")
        price = cell_float(row, "price", positive=True)
        name = cell_text(row, "name", required=True)
        if name != "ok":
            raise SheetRowError("name", f"unknown name {name!r}")
        return count, price, name

    rows = [
        (2, {"count": "x", "price": "-1", "name": "\x00"}),
        (3, {"count": "1", "price": "1", "name": "ok"}),
    ]
    items, problems = collect_rows(rows, "f", parse, lambda item: item, "duplicate")
    assert items == [(1, 1.0, "ok")]
    assert [(p.line, p.column) for p in problems] == [(2, "count"), (2, "price"), (2, "name")]


@pytest.mark.parametrize("value", ["1_0", "٢.٥", "１", "0x10", "1,5", "2.5e", "--1"])
def test_numbers_are_ascii_decimal_only(value: str) -> None:
    assert "ASCII digits" in reason(cell_float, {"c": value})
    assert "ASCII digits" in reason(cell_count, {"c": value})


@pytest.mark.parametrize(("value", "number"), [(" 2.5 ", 2.5), ("1e3", 1000.0), (".5", 0.5), ("+3", 3.0)])
def test_plain_decimal_numbers_still_read(value: str, number: float) -> None:
    assert cell_float({"c": value}, "c") == number


@pytest.mark.parametrize(("value", "kind"), [({"a": 1}, "an object"), ([1, 2], "an array"), ([], "an array")])
def test_a_json_object_or_array_is_no_text(value: object, kind: str) -> None:
    assert reason(cell_text, JsonRow(c=value)) == f"a JSON string is expected, not {kind}"
