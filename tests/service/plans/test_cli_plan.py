from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from service.cli import main

LORA = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "batch_size": 4,
    "seq_len": 2048,
    "recompute": "selective",
    "tokens": 2_000_000_000,
}


def test_plan_prints_a_readable_table(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file(LORA), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    for label in (
        "choice",
        "recompute=selective",
        "layout",
        "tokens per step",
        "total cost",
        "likely",
        "throughput",
        "alternatives",
        "why it lost",
    ):
        assert label in out
    table = out[out.index("\nalternatives") : out.index("why it lost") + 2000]
    assert "H100 SXM" in table or "B200" in table  # GPU names, as the choice line shows them


def test_plan_json_is_the_api_plan(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file(LORA), "--db", cli_db, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["plan_id"].startswith("pl-") and plan["cost"]["total_usd"] > 0


def test_bad_workload_file_names_the_field(
    cli_db: str, body_file: Callable[[object], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file({**LORA, "tokens": -5}), "--db", cli_db]) == 2
    assert "tokens" in capsys.readouterr().err
    assert main(["plan", str(tmp_path / "missing.json"), "--db", cli_db]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_impossible_workload_lists_reasons(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = {
        "kind": "train",
        "model": {"name": "Llama 3.1 405B"},
        "tokens": 10**9,
        "constraints": {"max_gpus": 4},
    }
    assert main(["plan", body_file(body), "--db", cli_db]) == 3
    assert "memory" in capsys.readouterr().err


def test_plan_json_on_stdout_is_only_json_in_a_fresh_process(
    cli_db: str, body_file: Callable[[object], str]
) -> None:
    """The solver's banner (printed by highspy from C++ on the first solver object) must not reach stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "plan", body_file(LORA), "--db", cli_db, "--json"],
        capture_output=True,
        check=True,
        timeout=300,
    )
    assert json.loads(done.stdout)["plan_id"].startswith("pl-")
    assert b"Running HiGHS" not in done.stdout + done.stderr


def test_plan_prints_the_breakdown_that_adds_up_and_spot_beside_on_demand(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    spot = {
        "kind": "train",
        "model": {"name": "Llama 3.1 8B"},
        "batch_size": 4,
        "seq_len": 4096,
        "tokens": 200_000_000_000,
        "constraints": {"spot": True, "deadline_hours": 1000},
        "reliability": {"preemptions_per_hour": 0.05},
    }
    assert main(["plan", body_file(spot), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    lines = {line.split("  ")[0].strip(): line for line in out.splitlines()}
    parts = (
        "compute",
        "setup",
        "checkpoint",
        "failures",
        "preemption",
        "billing rounding",
        "storage",
        "data transfer",
    )
    dollars = [float(lines[p].split("$")[1].split()[0].replace(",", "")) for p in parts]
    total = float(lines["total"].split("$")[1].split()[0].replace(",", ""))
    assert sum(dollars) == pytest.approx(total, abs=0.05)  # cents rounded per line
    assert "preemptions expected" in out and "checkpoint every" in out
    assert "by kind of price" in out and "on-demand" in out and "spot" in out


def test_plan_prints_what_the_memory_headroom_costs(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The 8B LoRA at micro-batch 4: 2 × L40S fit only below the default 10 % headroom; the table
    says so beside the choice, with their memory and what they would save."""
    lora = {key: value for key, value in LORA.items() if key != "batch_size"} | {"micro_batch": 4}
    assert main(["plan", body_file(lora), "--db", cli_db, "--json"]) == 0
    below = json.loads(capsys.readouterr().out)["pareto_below_headroom"]
    assert below
    assert main(["plan", body_file(lora), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    table = out[out.index("what the memory headroom costs") :]
    for point in below:
        assert f"{point['per_gpu_gib']:,.1f} of {point['capacity_gib']:g} GiB" in table
        saving = point["usd_below_choice"]
        assert f"${abs(saving):,.2f} {'less' if saving >= 0 else 'more'}" in table  # never "$-…"
    assert "$-" not in table
    assert main(["plan", body_file({**lora, "constraints": {"memory_headroom": 0}}), "--db", cli_db]) == 0
    assert "what the memory headroom costs" not in capsys.readouterr().out
