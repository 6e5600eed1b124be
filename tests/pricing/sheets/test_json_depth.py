"""JSON nesting depth is measured without parsing: brackets inside strings do not count."""

from __future__ import annotations

import json

from pricing.sheets.json_depth import MAX_JSON_DEPTH, json_depth, json_depth_exceeds


def test_depth_counts_arrays_and_objects() -> None:
    assert json_depth(b"1") == 0
    assert json_depth(b'{"a": [1, {"b": []}]}') == 4
    assert json_depth(json.dumps({"k": [[[1]]]}).encode()) == 4


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"name": "[[[[{{{{" * 100, "quote": 'say "[" \\ ]'}).encode()
    assert json_depth(text) == 1
    assert not json_depth_exceeds(text)
    tricky = [{"a": "x\\", "b": [["["]]}, ["", "[[", [""]], {"k": '"["', "v": [[[]]]}, ['""', "{{{{"]]
    assert [json_depth(json.dumps(t).encode()) for t in tricky] == [3, 2, 4, 1]


def test_the_limit() -> None:
    at_limit = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    beyond = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
    assert not json_depth_exceeds(at_limit)
    assert json_depth_exceeds(beyond)
    assert json_depth_exceeds(b"[" * 100_000)  # unbalanced, as an attacker sends it
    wide = json.dumps([[i] for i in range(10_000)]).encode()  # many brackets, shallow
    assert not json_depth_exceeds(wide)
