from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from service.buy_vs_rent.formats import CSV_COLUMNS
from service.cli import main


@pytest.fixture(scope="module")
def db(cli_db: str) -> str:
    return cli_db


def test_summary_and_csv(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schedule.csv"
    argv = ["buy-vs-rent", "--db", db, "--gpu", "h100-sxm", "--gpu-count", "8", "--horizon-months", "36"]
    assert main([*argv, "--utilization", "0.9", "--purchase-price", "25000", "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "owned USD per busy GPU-hour" in printed and "recommendation:" in printed
    assert "purchase_price_usd_per_gpu" in printed and "request" in printed  # assumptions with sources
    assert f"CSV written to {out}" in printed
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows = rows[: rows.index([])]  # the monthly section; the summary and assumptions follow
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 38
    assert float(rows[1][0]) == 0 and float(rows[1][1]) == pytest.approx(8 * 25_000 * 1.4)


def test_json_matches_the_api_fields_and_profile_hybrid(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["buy-vs-rent", "--db", db, "--gpu", "H100 SXM", "--horizon-months", "12", "--json"]
    assert main([*argv, "--demand", "730,1460,2920", "--rent-price", "3.5", "--commitment", "1y"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["gpu_count"] == 4 and answer["rent_billing"] == "reserved"
    assert answer["hybrid"]["peak_gpus"] == 4 and len(answer["monthly"]) == 13


def test_svg_output(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "chart.svg"
    argv = ["buy-vs-rent", "--db", db, "--gpu", "l40s", "--gpu-count", "2", "--horizon-months", "24"]
    assert main([*argv, "--utilization", "0.5", "--svg", str(chart)]) == 0
    assert chart.read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in chart.read_bytes()
    assert "SVG written to" in capsys.readouterr().out


def test_bad_input_is_a_clear_error(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["buy-vs-rent", "--db", db, "--gpu-count", "8", "--horizon-months", "36"]
    assert main([*argv, "--gpu", "H100", "--utilization", "0.5"]) == 2
    assert "name one" in capsys.readouterr().err
    assert main([*argv, "--gpu", "h100-sxm", "--utilization", "1.5"]) == 2
    assert "utilization" in capsys.readouterr().err
    assert main([*argv, "--gpu", "a10g", "--utilization", "0.5"]) == 2
    assert "own.purchase_price_usd_per_gpu" in capsys.readouterr().err


def test_json_stdout_is_only_json_in_a_fresh_process(db: str) -> None:
    # HiGHS prints a banner on the process's stdout on its first solve; --json output must stay parseable
    argv = [
        "buy-vs-rent",
        "--db",
        db,
        "--gpu",
        "h100-sxm",
        "--horizon-months",
        "6",
        "--demand",
        "730,2190",
        "--json",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", *argv], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hybrid"]["solver"]["status"] == "optimal"
