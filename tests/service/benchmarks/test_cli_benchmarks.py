"""``gpuplan plans benchmarks ID``: the API's short list on the database, as a table with the top
recipe, or as the API's JSON; an unknown plan fails with its reason."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from service.cli import main

TRAIN = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "tokens": 20_000_000_000}


def _plan_id(cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["plan", body_file(TRAIN), "--db", cli_db, "--json"]) == 0
    plan_id: str = json.loads(capsys.readouterr().out)["plan_id"]
    return plan_id


def test_benchmarks_prints_the_short_list_and_the_first_recipe(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    plan_id = _plan_id(cli_db, body_file, capsys)
    assert main(["plans", "benchmarks", plan_id, "--db", cli_db, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["plan_id"] == plan_id and answer["candidates"]
    assert main(["plans", "benchmarks", plan_id, "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert "changed since the plan was made: nothing" in out
    for label in ("configuration", "saving", "benchmark", "worth it"):
        assert label in out
    top = answer["candidates"][0]
    assert f"#1 {top['gpu_count']} x {top['gpu_name']}: {top['recipe']['rule']}" in out
    assert "tensor_parallel_degree = " in out  # the torchtitan config of the first recipe
    assert f"$ {top['recipe']['commands'][-1]}" in out


def test_an_unknown_plan_fails_with_its_reason(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plans", "benchmarks", "pl-0000000000000000", "--db", cli_db]) == 1
    assert "no plan 'pl-0000000000000000'" in capsys.readouterr().err
