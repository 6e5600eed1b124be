"""Availability: a rental sheet's ``available_instances`` caps how many instances of an offer a plan may
take; a job that needs more goes elsewhere and the plan says why (an ``availability_cap`` warning), and a
portfolio caps the offer for all its jobs together."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH
from tests.service.portfolios.bodies import portfolio

Client = TestClient[Any]
SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,network_class,network_gbps,available_instances
acme,capped.h100,H100 SXM,8,eu-1,8.00,infiniband,3200,4
acme,open.h100,H100 SXM,8,eu-2,24.00,infiniband,3200,
"""
PRETRAIN_8B = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "micro_batch": 8,
    "seq_len": 2048,
    "tokens": 100_000_000_000,
    "constraints": {"providers": ["acme"], "gpus": ["H100 SXM"], "max_gpus": 64, "deadline_hours": 70},
}
"""32 H100 (the 4 instances capped.h100 has) take about 93 h at 90 % confidence: the deadline needs more."""


@pytest.fixture
def acme(admin: Client) -> Client:
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "acme", "format": "rental_csv"},
        content=SHEET.encode(),
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    return admin


def _offer(client: Client, offer_id: str) -> dict[str, Any]:
    """The offer with this id (GET /v1/offers)."""
    offers = client.get("/v1/offers", params={"limit": 1000, "provider": "acme"}).json()["items"]
    return next(o for o in offers if o["offer_id"] == offer_id)


def test_a_job_needing_more_instances_than_an_offer_has_goes_elsewhere_and_says_why(acme: Client) -> None:
    response = acme.post("/v1/plans", json=PRETRAIN_8B)
    assert response.status_code == 201, response.text
    plan = response.json()
    assert plan["choice"]["gpu_count"] > 32
    assert plan["choice"]["offer"]["instance_type"] == "open.h100"
    [warning] = [w for w in plan["warnings"] if w["code"] == "availability_cap"]
    assert "capped.h100" in warning["message"] and "publishes 4 available" in warning["message"]
    assert "at most 32 GPUs there" in warning["message"]
    later = {**PRETRAIN_8B, "constraints": {**PRETRAIN_8B["constraints"], "deadline_hours": 120}}
    within = acme.post("/v1/plans", json=later).json()
    assert within["choice"]["offer"]["instance_type"] == "capped.h100" and within["choice"]["instances"] <= 4


def test_a_portfolio_shares_the_published_cap_between_its_jobs(acme: Client) -> None:
    job = {**PRETRAIN_8B, "tokens": 20_000_000_000}
    body = portfolio([{"name": n, "plan": job, "deadline": 30.0} for n in ("a", "b")])
    response = acme.post("/v1/portfolios", json=body)
    assert response.status_code == 201, response.text
    out = response.json()
    capped = [
        j
        for j in out["jobs"]
        if _offer(acme, j["supply"].rsplit(":", 1)[0])["instance_type"] == "capped.h100"
    ]
    assert capped and sum(j["instances"] for j in capped) <= 4
    assert len(capped) < 2 or all(j["start_bucket"] != capped[0]["start_bucket"] for j in capped[1:])
    assert any(b["kind"] == "availability" for b in out["binding"])
