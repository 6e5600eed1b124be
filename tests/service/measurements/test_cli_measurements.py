"""``gpuplan measurements import|list`` on a seeded database file, and ``gpuplan plan`` using the import."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from service.cli import main
from tests.service.measurements.test_api_measurements import FIXTURES, PRETRAIN_8B


def test_a_cli_import_of_a_torchtitan_log_is_listed_and_the_plan_uses_it(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log")
    args = ["--format", "torchtitan_log", "--source", "titan-cli", "--gpu", "H100 SXM", "--gpu-count", "8"]
    facts = ["--model", "Llama 3 8B", "--seq-len", "8192", "--batch-size", "1"]
    assert main(["measurements", "import", log, *args, *facts, "--db", cli_db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["source"], report["rows"], report["measurements"][0]["gpu_count"]) == ("titan-cli", 1, 8)
    assert main(["measurements", "list", "--db", cli_db]) == 0
    assert "titan-cli" in capsys.readouterr().out
    assert main(["plan", body_file(PRETRAIN_8B), "--db", cli_db, "--json"]) == 0
    throughput = json.loads(capsys.readouterr().out)["estimate"]["throughput"]
    assert throughput["route"] == "measured"
    assert [s["source"] for s in throughput["sources"]] == ["titan-cli"]


def test_a_cli_import_missing_the_gpu_fails_naming_it_and_stores_nothing(
    cli_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log")
    facts = ["--gpu-count", "8", "--model", "Llama 3 8B", "--seq-len", "8192"]
    assert (
        main(
            [
                "measurements",
                "import",
                log,
                "--format",
                "torchtitan_log",
                "--source",
                "nogpu",
                *facts,
                "--db",
                cli_db,
            ]
        )
        == 1
    )
    assert "gpu:" in capsys.readouterr().err
    assert main(["measurements", "list", "--source", "nogpu", "--history", "--db", cli_db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0
