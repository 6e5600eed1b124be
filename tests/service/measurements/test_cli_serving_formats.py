"""``gpuplan measurements import`` of the serving formats (the real fixtures of tests/pricing/measurements)."""

from __future__ import annotations

import json

import pytest

from service.cli import main
from tests.service.measurements.test_api_serving_formats import FIXTURES


def test_a_cli_import_of_a_guidellm_report_stores_each_benchmark(
    cli_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = str(FIXTURES / "guidellm_0_8_1_mock_server_constant_2_4.json")
    facts = ["--gpu", "L40S", "--tp", "1", "--model", "Llama 3.1 8B", "--engine", "vllm"]
    args = ["measurements", "import", report, "--format", "guidellm", "--source", "gl-cli", *facts]
    assert main([*args, "--db", cli_db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["rows"], [m["engine"] for m in out["measurements"]]) == (2, ["vllm", "vllm"])
    assert main(["measurements", "list", "--source", "gl-cli", "--db", cli_db]) == 0
    assert "gl-cli" in capsys.readouterr().out


def test_a_cli_import_of_an_sglang_file_without_its_tp_fails_naming_it(
    cli_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = str(FIXTURES / "sglang_bench_llama33_70b_4xh200.jsonl")
    facts = ["--gpu", "H200 SXM", "--model", "Llama 3.3 70B"]
    args = ["measurements", "import", lines, "--format", "sglang_bench", "--source", "sgl-cli", *facts]
    assert main([*args, "--db", cli_db]) == 1
    assert "tp:" in capsys.readouterr().err
    assert main(["measurements", "list", "--source", "sgl-cli", "--history", "--db", cli_db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0
