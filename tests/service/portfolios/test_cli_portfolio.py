"""``gpuplan portfolio FILE`` on a seeded database file: the table, --json, --csv and an infeasible exit."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from service.cli import main
from tests.service.portfolios.bodies import PRETRAIN_1B, portfolio, ten_jobs


def test_a_ten_job_portfolio_prints_its_schedule_and_buckets(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = portfolio(ten_jobs(), owned=[{"gpu": "H100 SXM", "count": 16}])
    assert main(["--db", cli_db, "portfolio", body_file(body)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("portfolio pf-")
    for i in range(10):
        assert f"job-{i}" in out
    assert "owned busy (utilisation)" in out and "saving" in out and "solver: optimal" in out


def test_json_matches_the_api_and_csv_lists_every_job(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = portfolio(ten_jobs()[:3])
    assert main(["--db", cli_db, "portfolio", body_file(body), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [j["job"] for j in answer["jobs"]] == ["job-0", "job-1", "job-2"]
    assert answer["total_usd"] == pytest.approx(sum(j["cost_usd"] for j in answer["jobs"]))
    assert main(["--db", cli_db, "portfolio", body_file(body), "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("row,name,bucket") and sum(line.startswith("job,") for line in lines) == 3


def test_an_unmeetable_deadline_exits_3_with_the_fix(
    cli_db: str, body_file: Callable[[object], str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = portfolio([{"name": "rushed", "plan": PRETRAIN_1B, "deadline": 1.0}])
    assert main(["--db", cli_db, "portfolio", body_file(body)]) == 3
    err = capsys.readouterr().err
    assert "rushed" in err and "move the deadline to hour" in err


def test_the_readme_quarter_example_adds_up(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/portfolios/quarter.json (the README's "Plan a quarter"): one job rents beside the owned GPUs."""
    assert main(["--db", cli_db, "portfolio", "examples/portfolios/quarter.json", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    jobs = {j["job"]: j for j in answer["jobs"]}
    assert [jobs[n]["source"] for n in ("lora-support", "pretrain-1b", "pretrain-1b-v2")] == [
        "own",
        "rent",
        "own",
    ]
    assert answer["total_usd"] == pytest.approx(sum(j["cost_usd"] for j in answer["jobs"]))
    assert answer["total_usd"] == pytest.approx(sum(b["total_usd"] for b in answer["buckets"]))
    assert all(b["owned_busy_gpus"]["h100-sxm"] <= 8 for b in answer["buckets"])
