"""``gpuplan plans launch ID --format …``: the API's launch file, on the database."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import yaml

from service.cli import main
from tests.service.launch.test_api_launch import MIXED

TRAIN = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "tokens": 20_000_000_000}


def test_launch_prints_the_yaml_of_each_format(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file(TRAIN), "--db", cli_db, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert main(["plans", "launch", plan["plan_id"], "--format", "skypilot", "--db", cli_db]) == 0
    task = yaml.safe_load(capsys.readouterr().out)
    assert task["num_nodes"] == plan["choice"]["instances"]
    assert task["resources"]["accelerators"].endswith(f":{plan['choice']['gpu_count']}")
    assert main(["plans", "launch", plan["plan_id"], "--format", "kubernetes", "--db", cli_db]) == 0
    kinds = [doc["kind"] for doc in yaml.safe_load(capsys.readouterr().out)["items"]]
    assert kinds == ["ConfigMap", "Job"]


def test_a_serving_launch_without_its_replica_type_names_it(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file(MIXED), "--db", cli_db, "--json"]) == 0
    plan_id = json.loads(capsys.readouterr().out)["plan_id"]
    assert main(["plans", "launch", plan_id, "--format", "skypilot", "--db", cli_db]) == 1
    assert "replica_type" in capsys.readouterr().err
    assert (
        main(["plans", "launch", plan_id, "--format", "skypilot", "--replica-type", "0", "--db", cli_db]) == 0
    )
    assert "service:" in capsys.readouterr().out
