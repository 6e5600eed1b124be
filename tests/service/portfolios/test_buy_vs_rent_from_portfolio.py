"""Buy vs rent from the work: POST /v1/buy-vs-rent with a stored portfolio's id prices its measured
busy GPU-hours of one GPU (instead of an assumed utilisation) and says how many of it to own."""

from __future__ import annotations

import math
from typing import Any

import pytest
from litestar.testing import TestClient

from pricing import HOURS_PER_MONTH
from tests.service.portfolios.bodies import portfolio, ten_jobs

Client = TestClient[Any]


@pytest.fixture(scope="module")
def stored(client: Client) -> dict[str, Any]:
    response = client.post(
        "/v1/portfolios", json=portfolio(ten_jobs(), owned=[{"gpu": "H100 SXM", "count": 16}])
    )
    assert response.status_code == 201, response.text
    out: dict[str, Any] = response.json()
    return out


def test_the_buckets_hold_every_jobs_gpu_hours(stored: dict[str, Any]) -> None:
    by_gpu: dict[str, float] = {}
    for job in stored["jobs"]:
        by_gpu[job["gpu"]] = by_gpu.get(job["gpu"], 0.0) + job["gpu_count"] * job["hours"]
    for gpu, hours in by_gpu.items():
        assert sum(b["gpu_hours"].get(gpu, 0.0) for b in stored["buckets"]) == pytest.approx(hours)


def test_buy_vs_rent_prices_the_portfolios_measured_demand(client: Client, stored: dict[str, Any]) -> None:
    gpu = stored["jobs"][0]["gpu"]
    body = {"gpu": gpu, "horizon_months": 36, "portfolio_id": stored["portfolio_id"]}
    response = client.post("/v1/buy-vs-rent", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    work = sum(b["gpu_hours"].get(gpu, 0.0) for b in stored["buckets"])
    months = math.ceil(13 * 168 / HOURS_PER_MONTH)  # the quarter's 3 months, repeated over 36
    hybrid = answer["hybrid"]
    assert hybrid is not None and 0 <= hybrid["owned_gpus"] <= hybrid["peak_gpus"]
    assert hybrid["owned_gpu_hours"] + hybrid["rented_gpu_hours"] == pytest.approx(
        work * 36 / months, rel=1e-6
    )
    assumed = client.post(
        "/v1/buy-vs-rent", json={"gpu": gpu, "horizon_months": 36, "utilization": 0.85, "gpu_count": 8}
    )
    assert assumed.json()["utilization"] != pytest.approx(answer["utilization"])


def test_a_portfolio_and_a_demand_together_or_a_gpu_it_never_uses_are_400s(
    client: Client, stored: dict[str, Any]
) -> None:
    both = {
        "gpu": "H100 SXM",
        "horizon_months": 12,
        "portfolio_id": stored["portfolio_id"],
        "utilization": 0.5,
    }
    assert client.post("/v1/buy-vs-rent", json=both).status_code == 400
    unused = {"gpu": "T4", "horizon_months": 12, "portfolio_id": stored["portfolio_id"]}
    response = client.post("/v1/buy-vs-rent", json=unused)
    assert response.status_code == 400 and "no work on t4" in response.text
    missing = {"gpu": "H100 SXM", "horizon_months": 12, "portfolio_id": "pf-missing"}
    response = client.post("/v1/buy-vs-rent", json=missing)  # a body field naming nothing: 400, not 404
    assert response.status_code == 400 and response.json()["field"] == "portfolio_id"


def test_the_buy_vs_rent_page_takes_the_portfolio(client: Client, stored: dict[str, Any]) -> None:
    gpu = stored["jobs"][0]["gpu"]
    query = {"gpu": gpu, "horizon_months": "36", "portfolio_id": stored["portfolio_id"]}
    page = client.get("/buy-vs-rent", params=query)
    assert page.status_code == 200 and 'class="error"' not in page.text
    api = client.post("/v1/buy-vs-rent", json={**query, "horizon_months": 36}).json()
    assert f"own {api['hybrid']['owned_gpus']}" in page.text
    bad = client.get("/buy-vs-rent", params={**query, "gpu": "T4"})
    assert "no work on t4" in bad.text
