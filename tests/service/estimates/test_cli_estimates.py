"""``gpuplan throughput`` and ``gpuplan memory``: the API's estimates from a JSON file, as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main

TRAIN_16 = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "batch_size": 4,
    "seq_len": 4096,
    "recompute": "full",
    "gpu": "H100 SXM",
    "gpu_count": 16,
    "gpus_per_instance": 8,
}
LORA = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "batch_size": 4,
    "seq_len": 2048,
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cli-estimates") / "gpuplan.duckdb")


def write(tmp_path: Path, body: object) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    return str(path)


def _throughput(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], body: object
) -> dict[str, object]:
    assert main(["throughput", write(tmp_path, body), "--db", db, "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_throughput_json_is_the_api_answer_and_the_network_matters(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    infiniband = _throughput(db, tmp_path, capsys, TRAIN_16)
    ethernet = _throughput(db, tmp_path, capsys, {**TRAIN_16, "network": {"class": "ethernet", "gbps": 25}})
    assert infiniband["gpu"] == "h100-sxm" and infiniband["gpus_per_instance"] == 8
    assert isinstance(infiniband["value"], float) and isinstance(ethernet["value"], float)
    assert ethernet["value"] < infiniband["value"]  # a 25 Gbit/s network slows a 2-instance job
    assert ethernet["network"] == {
        "class": "ethernet",
        "gbps": 25.0,
        "derived": False,
        "rule": "stated by the request",
    }


def test_throughput_table_says_how_it_was_estimated(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["throughput", write(tmp_path, TRAIN_16), "--db", db]) == 0
    out = capsys.readouterr().out
    for label in ("throughput", "likely", "how", "efficiency", "scaling", "of linear", "method"):
        assert label in out


def test_memory_table_and_json(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", write(tmp_path, LORA), "--db", db, "--top", "3"]) == 0
    out = capsys.readouterr().out
    for label in ("per GPU", "allocated", "reserved", "host RAM", "margin GiB", "more GPUs"):
        assert label in out
    assert main(["memory", write(tmp_path, {**LORA, "gpu": "L4"}), "--db", db, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [fit["gpu_id"] for fit in result["fits"]] == ["l4"]
    assert result["allocated_gib"] <= result["reserved_gib"] <= result["per_gpu_gib"]


def test_bad_bodies_name_the_field(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["throughput", write(tmp_path, {**TRAIN_16, "gpu_count": 0}), "--db", db]) == 2
    assert "gpu_count" in capsys.readouterr().err
    assert main(["memory", write(tmp_path, {**LORA, "batch_size": "4"}), "--db", db]) == 2
    assert "batch_size" in capsys.readouterr().err
    assert main(["throughput", write(tmp_path, {**TRAIN_16, "gpu": "no such gpu"}), "--db", db]) == 2
    assert "gpu" in capsys.readouterr().err
    assert main(["memory", str(tmp_path / "missing.json"), "--db", db]) == 2
    assert "cannot read" in capsys.readouterr().err
