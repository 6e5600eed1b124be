"""``gpuplan throughput`` and ``gpuplan memory``: the API's estimates from a JSON file, as a table or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def _throughput(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str], body: object
) -> dict[str, object]:
    assert main(["throughput", body_file(body), "--db", cli_db, "--json"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_throughput_json_is_the_api_answer_and_the_network_matters(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    infiniband = _throughput(cli_db, body_file, capsys, TRAIN_16)
    ethernet = _throughput(
        cli_db, body_file, capsys, {**TRAIN_16, "network": {"class": "ethernet", "gbps": 25}}
    )
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
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["throughput", body_file(TRAIN_16), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    for label in ("throughput", "likely", "how", "efficiency", "scaling", "of linear", "method"):
        assert label in out


def test_memory_table_and_json(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", body_file(LORA), "--db", cli_db, "--top", "3"]) == 0
    out = capsys.readouterr().out
    for label in ("per GPU", "allocated", "reserved", "host RAM", "margin GiB", "more GPUs"):
        assert label in out
    assert main(["memory", body_file({**LORA, "gpu": "L4"}), "--db", cli_db, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [fit["gpu_id"] for fit in result["fits"]] == ["l4"]
    assert result["allocated_gib"] <= result["reserved_gib"] <= result["per_gpu_gib"]


def test_bad_bodies_name_the_field(
    cli_db: str, body_file: Callable[[object], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["throughput", body_file({**TRAIN_16, "gpu_count": 0}), "--db", cli_db]) == 2
    assert "gpu_count" in capsys.readouterr().err
    assert main(["memory", body_file({**LORA, "batch_size": "4"}), "--db", cli_db]) == 2
    assert "batch_size" in capsys.readouterr().err
    assert main(["throughput", body_file({**TRAIN_16, "gpu": "no such gpu"}), "--db", cli_db]) == 2
    assert "gpu" in capsys.readouterr().err
    assert main(["memory", str(tmp_path / "missing.json"), "--db", cli_db]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_throughput_at_a_serving_load_shows_the_engines_latencies(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = {
        "kind": "serving",
        "model": {"name": "Llama 2 7B"},
        "precision": "fp16",
        "gpu": "a100-80gb-sxm",
        "input_tokens": 512,
        "output_tokens": 128,
        "load": {"requests_per_s": 2},
    }
    assert main(["throughput", body_file(body), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    for label in ("requests per s 2", "TTFT", "TPOT", "end to end", "KV cache", "engine model (vllm)"):
        assert label in out, out
    assert "NOT sustained" not in out
    assert main(["throughput", body_file(body | {"load": {"requests_per_s": 500}}), "--db", cli_db]) == 0
    assert "NOT sustained" in capsys.readouterr().out


def test_a_layout_that_cannot_fit_is_a_message_and_exit_2_not_a_traceback(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A stated layout the memory model refuses is a 422 in the API; the CLI says the same in one line."""
    unbatched = {key: value for key, value in TRAIN_16.items() if key != "batch_size"}
    body = {
        **unbatched,
        "model": {"name": "Llama 3 70B"},
        "tp": 1,
        "pp": 1,
        "sharding": "none",
        "gpu_count": 8,
    }
    assert main(["throughput", body_file(body), "--db", cli_db]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuplan: ") and "Traceback" not in err and "GiB" in err
