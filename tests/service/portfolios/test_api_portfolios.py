"""POST /v1/portfolios, GET /v1/portfolios/{id} and its CSV end to end on the shipped catalog."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.portfolios.bodies import LORA_8B, PRETRAIN_1B, portfolio

Client = TestClient[Any]


def _create(client: Client, body: dict[str, Any]) -> Any:
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_three_job_portfolio_adds_up_and_is_stored_with_its_csv(client: Client) -> None:
    body = portfolio(
        [
            {"name": "lora-a", "plan": LORA_8B, "deadline": "2027-01-17"},
            {"name": "pretrain", "plan": PRETRAIN_1B, "earliest_start": "2027-01-11", "deadline": 400.0},
            {"name": "lora-b", "plan": LORA_8B, "priority": 2},
        ],
        owned=[{"gpu": "H100 SXM", "count": 8}],
    )
    out = _create(client, body)
    jobs = {j["job"]: j for j in out["jobs"]}
    assert set(jobs) == {"lora-a", "pretrain", "lora-b"}
    assert jobs["pretrain"]["start_hour"] >= 168.0 and jobs["pretrain"]["end_hour"] <= 400.0
    assert jobs["lora-a"]["end"] <= "2027-01-18T00:00:00Z"
    spend = sum(b["total_usd"] for b in out["buckets"])
    assert out["total_usd"] == pytest.approx(spend)
    assert out["total_usd"] == pytest.approx(sum(j["cost_usd"] for j in out["jobs"]))
    assert out["saving_usd"] == pytest.approx(out["alone_usd"] - out["total_usd"])
    assert out["solver"]["status"] == "optimal" and out["solver"]["gap"] is not None
    stored = client.get(f"/v1/portfolios/{out['portfolio_id']}")
    assert stored.status_code == 200 and stored.json() == out
    download = client.get(f"/v1/portfolios/{out['portfolio_id']}/schedule.csv")
    assert download.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(download.text)))
    assert sorted(r["name"] for r in rows if r["row"] == "job") == ["lora-a", "lora-b", "pretrain"]
    assert sum(float(r["cost_usd"]) for r in rows if r["row"] == "bucket") == pytest.approx(
        out["total_usd"], abs=0.01 * 26
    )


def _owned_collision(deadline: float) -> dict[str, Any]:
    """Two pretraining runs that each fit the 8 owned H100 SXM for about a day and a half."""
    jobs = [{"name": n, "plan": PRETRAIN_1B, "deadline": deadline} for n in ("first", "second")]
    return portfolio(jobs, owned=[{"gpu": "H100 SXM", "count": 8, "usd_per_gpu_hour": 0.2}])


def test_a_collision_on_owned_gpus_rents_for_one_job_unless_the_deadline_lets_both_share(
    client: Client,
) -> None:
    tight = _create(client, _owned_collision(deadline=60.0))
    sources = sorted(j["source"] for j in tight["jobs"])
    assert sources == ["own", "rent"]
    rented = next(j for j in tight["jobs"] if j["source"] == "rent")
    assert "owned h100-sxm full" in rented["why"]
    assert any(b["kind"] == "owned_capacity" for b in tight["binding"])
    loose = _create(client, _owned_collision(deadline=700.0))
    assert [j["source"] for j in loose["jobs"]] == ["own", "own"]
    assert all(b["owned_busy_gpus"]["h100-sxm"] <= 8 for b in loose["buckets"])  # shared, never overbooked
    assert loose["total_usd"] < tight["total_usd"]
    for job in loose["jobs"]:
        assert loose["buckets"][job["start_bucket"]]["owned_utilization"]["h100-sxm"] > 0


def test_a_tighter_availability_cap_raises_the_cost_and_says_which(client: Client) -> None:
    free = _create(client, portfolio([{"name": "lora", "plan": LORA_8B}]))
    provider = free["jobs"][0]["provider"]
    capped = _create(
        client,
        portfolio(
            [{"name": "lora", "plan": LORA_8B}],
            availability=[{"scope": "provider", "key": provider, "max_instances": 0}],
        ),
    )
    assert capped["jobs"][0]["provider"] != provider
    assert capped["total_usd"] > free["total_usd"]
    assert f"provider {provider}" in capped["jobs"][0]["why"]


def test_a_deadline_that_cannot_be_met_is_explained_and_nothing_is_stored(client: Client) -> None:
    body = portfolio([{"name": "rushed", "plan": PRETRAIN_1B, "deadline": 2.0}])
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 422, response.text
    problem = response.json()
    [job] = problem["jobs"]
    assert job["job"] == "rushed"
    [fix] = job["fixes"]
    assert fix["kind"] == "deadline" and fix["current"] == 2.0 and fix["needed"] > 2.0


def test_caps_that_leave_no_room_name_the_smallest_raise(client: Client) -> None:
    jobs = [{"name": "only", "plan": LORA_8B, "deadline": 168.0}]
    body = portfolio(
        jobs, availability=[{"scope": "gpu", "key": g, "max_instances": 0} for g in _gpus(client)]
    )
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 422, response.text
    [job] = response.json()["jobs"]
    assert job["fixes"] and all(f["kind"] == "availability" and f["needed"] == 1 for f in job["fixes"])


def _gpus(client: Client) -> list[str]:
    return [g["gpu_id"] for g in client.get("/v1/gpus").json()["items"]]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"jobs": [{"name": "x", "plan": {**LORA_8B, "tokens": None, "samples": None}}]}, "jobs[0].plan"),
        ({"jobs": [{"name": "x", "plan": LORA_8B, "deadline": "2027-13-01"}]}, "jobs[0].deadline"),
        ({"budget": [1.0, 2.0]}, "budget"),
        ({"owned": [{"gpu": "no such gpu", "count": 8}]}, "owned[0].gpu"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(client: Client, change: dict[str, Any], field: str) -> None:
    body = {**portfolio([{"name": "x", "plan": LORA_8B}]), **change}
    response = client.post("/v1/portfolios", json=body)
    assert response.status_code == 400, response.text
    assert field in response.text


def test_an_unknown_portfolio_is_a_404(client: Client) -> None:
    assert client.get("/v1/portfolios/pf-nothing").status_code == 404


SERVING_1B = {
    "kind": "serving",
    "model": {"name": "Llama 3.2 1B"},
    "requests_per_s": 20,
    "request_mix": [{"input_tokens": 1000, "output_tokens": 200, "share": 1.0}],
}


def test_serving_is_met_in_every_bucket_by_owned_and_rented_instances(client: Client) -> None:
    rates = [20.0 * 1.3**t for t in range(13)]
    body = portfolio(
        [{"name": "lora", "plan": LORA_8B}],
        serving=[{"name": "chat", "plan": SERVING_1B, "requests_per_s": rates}],
        owned=[{"gpu": "H100 SXM", "count": 8}],
    )
    out = _create(client, body)
    cells = [s for s in out["serving"] if s["serving"] == "chat"]
    assert [c["requests_per_s"] for c in cells] == pytest.approx(rates)
    assert all(c["capacity_requests_per_s"] >= c["requests_per_s"] - 1e-9 for c in cells)
    serving_usd = sum(c["cost_usd"] for c in cells)
    assert out["total_usd"] == pytest.approx(serving_usd + sum(j["cost_usd"] for j in out["jobs"]))
    assert all(b["owned_busy_gpus"]["h100-sxm"] <= 8 for b in out["buckets"])
    grown = _create(
        client, {**body, "serving": [{"name": "chat", "plan": SERVING_1B, "growth_per_bucket": 0.3}]}
    )
    assert [s["requests_per_s"] for s in grown["serving"]] == pytest.approx(rates)
