"""Jobs that may split into stages and ``on_infeasible: drop_lowest_priority`` end to end on the shipped
catalog, through the API (JSON and CSV), the CLI and the web page. The bodies are the README's examples
(examples/portfolios/split.json, crowded.json): Llama 3.2 1B pretraining runs on 8 owned H100 SXM."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.cli import main

Client = TestClient[Any]
_EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "portfolios"


def _example(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((_EXAMPLES / name).read_text())
    return body


def _whole(body: dict[str, Any]) -> dict[str, Any]:
    """The same portfolio with no job allowed to split (so no restarts)."""
    return {**body, "jobs": [{**j, "splittable": False, "restart_hours": 0.0} for j in body["jobs"]]}


def _create(client: Client, body: dict[str, Any]) -> Any:
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_job_that_cannot_fit_whole_around_the_owned_gpus_runs_split_on_them_cheaper_than_renting(
    client: Client,
) -> None:
    """pretrain-60b holds all 8 owned GPUs on days 1–2; pretrain-50b needs about 33 hours on them,
    more than the free day before or after: whole, it rents; split, it runs on day 0 and day 3."""
    body = _example("split.json")
    whole = {j["job"]: j for j in _create(client, _whole(body))["jobs"]}
    assert whole["pretrain-50b"]["source"] == "rent" and not whole["pretrain-50b"]["split"]
    assert "owned h100-sxm full" in whole["pretrain-50b"]["why"]
    out = _create(client, body)
    jobs = {j["job"]: j for j in out["jobs"]}
    split = jobs["pretrain-50b"]
    assert split["source"] == "own" and split["split"]
    assert [s["bucket"] for s in split["stages"]] == [0, 3]
    assert sum(s["share"] for s in split["stages"]) == pytest.approx(1.0)
    assert all((s["gpu"], s["gpu_count"]) == ("h100-sxm", 8) for s in split["stages"])
    # any split of the work between the two free days costs the same: each stage fits its day
    assert all(s["hours"] <= 24.0 + 1e-6 for s in split["stages"])
    restarts = body["jobs"][1]["restart_hours"] * len(split["stages"])
    assert sum(s["hours"] for s in split["stages"]) == pytest.approx(split["hours"] + restarts)
    assert sum(s["cost_usd"] for s in split["stages"]) == pytest.approx(split["cost_usd"])
    assert split["cost_usd"] < whole["pretrain-50b"]["cost_usd"]
    assert out["total_usd"] == pytest.approx(sum(b["total_usd"] for b in out["buckets"]))
    assert [b["owned_busy_gpus"]["h100-sxm"] for b in out["buckets"]] == [8, 8, 8, 8]
    assert jobs["pretrain-60b"]["source"] == "own" and len(jobs["pretrain-60b"]["stages"]) == 1
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/v1/portfolios/{out['portfolio_id']}/schedule.csv").text))
    )
    stages = [r for r in rows if r["row"] == "stage"]
    assert [(r["name"], int(r["bucket"])) for r in stages] == [("pretrain-50b", 0), ("pretrain-50b", 3)]
    assert sum(float(r["share"]) for r in stages) == pytest.approx(1.0, abs=1e-3)


def test_dropping_keeps_the_highest_priority_run_and_says_why_the_others_are_left_out(client: Client) -> None:
    """Three own-only runs each needing all 8 owned GPUs on day 0: ``explain`` answers 422, and
    ``drop_lowest_priority`` schedules release-run (priority 3) and names the other two."""
    body = _example("crowded.json")
    refused = client.post("/v1/portfolios", json={**body, "on_infeasible": "explain"})
    assert refused.status_code == 422
    assert {j["job"] for j in refused.json()["jobs"]} == {"ablation-a", "ablation-b", "release-run"}
    assert all(
        j["fixes"][0]["detail"] == "16 more h100-sxm GPUs in bucket 0 (own or buy)"
        for j in refused.json()["jobs"]
    )
    out = _create(client, body)
    assert [j["job"] for j in out["jobs"]] == ["release-run"]
    assert [(d["job"], d["priority"]) for d in out["dropped"]] == [("ablation-a", 0), ("ablation-b", 1)]
    assert all("owned h100-sxm full in bucket 0" in d["reason"] for d in out["dropped"])
    assert out["total_usd"] == pytest.approx(out["jobs"][0]["cost_usd"])
    text = client.get(f"/v1/portfolios/{out['portfolio_id']}/schedule.csv").text
    dropped = [r for r in csv.DictReader(io.StringIO(text)) if r["row"] == "dropped"]
    assert [r["name"] for r in dropped] == ["ablation-a", "ablation-b"] and "is blocked" in dropped[0]["note"]


def test_the_cli_prints_the_stages_and_the_jobs_left_out(
    cli_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", cli_db, "portfolio", str(_EXAMPLES / "split.json")]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"stage 1/2 +2027-01-04T00:00 +2027-01-0[45]T\d\d:\d\d +8 x h100-sxm +own +owned +\$[\d.]+ +bucket 0: \d+% of the work",
        out,
    )
    assert re.search(
        r"stage 2/2 +2027-01-07T00:00 +2027-01-0[78]T\d\d:\d\d +8 x h100-sxm .* bucket 3: \d+% of the work",
        out,
    )
    assert main(["--db", cli_db, "portfolio", str(_EXAMPLES / "crowded.json")]) == 0
    out = capsys.readouterr().out
    assert "left out: ablation-a (priority 0): jobs of more total priority come first; its cheapest" in out


def test_the_stored_page_draws_each_stage_and_lists_the_jobs_left_out(
    client: Client, body_file: Callable[[object], str]
) -> None:
    saved = client.post(
        "/portfolio", data={"body": json.dumps(_example("split.json"))}, follow_redirects=False
    )
    assert saved.status_code == 303, saved.text
    page = client.get(saved.headers["location"]).text
    gantt = base64.b64decode(re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)[0]).decode()
    assert "2 stages" in gantt and "stage 2 of 2" in page
    saved = client.post(
        "/portfolio", data={"body": json.dumps(_example("crowded.json"))}, follow_redirects=False
    )
    page = client.get(saved.headers["location"]).text
    assert "Left out" in page and "ablation-b (priority 1)" in page


def test_restart_hours_without_splittable_is_a_400_naming_the_field(client: Client) -> None:
    body = _example("split.json")
    body["jobs"][1]["splittable"] = False
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 400
    assert "jobs[1].restart_hours" in response.text and "splittable" in response.text
    assert client.post("/v1/portfolios", json={**body, "jobs": [body["jobs"][0]]}).status_code == 201
