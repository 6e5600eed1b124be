"""Serving fleets through POST /v1/plans (kind serving) and serving-profile uploads."""

from __future__ import annotations

import math
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]
MIX = [
    {"input_tokens": 20, "output_tokens": 20, "share": 0.5},
    {"input_tokens": 800, "output_tokens": 1500, "share": 0.5},
]
SERVING = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 20,
    "request_mix": MIX,
    "hours": 100,
}


def test_fleet_plan_is_costed_and_stored(client: Client) -> None:
    response = client.post("/v1/plans", json=SERVING)
    assert response.status_code == 201, response.text
    plan = response.json()
    assert plan["plan_type"] == "serving"
    replicas = plan["choice"]["replicas"]
    assert replicas and all(r["replicas"] >= 1 and r["load"] <= 0.85 + 1e-6 for r in replicas)
    assert plan["cost"]["usd_per_hour"] == pytest.approx(sum(r["usd_per_hour"] for r in replicas))
    assert plan["cost"]["total_usd"] == pytest.approx(plan["cost"]["usd_per_hour"] * 100)
    for i in range(len(MIX)):  # every request class is routed in full
        assert sum(r["classes"][i]["share_of_class"] for r in replicas) == pytest.approx(1.0, abs=1e-6)
    single = plan["best_single_type"]
    assert single is not None and plan["cost"]["usd_per_hour"] <= single["usd_per_hour"] + 1e-6
    assert plan["saving_vs_single_type"]["usd_per_hour"] == pytest.approx(
        single["usd_per_hour"] - plan["cost"]["usd_per_hour"]
    )
    assert client.get(f"/v1/plans/{plan['plan_id']}").json() == plan


def test_one_bucket_costs_ceil_rate_over_capacity_times_price(client: Client) -> None:
    body = {
        **SERVING,
        "requests_per_s": 10,
        "request_mix": [{"input_tokens": 30, "output_tokens": 80, "share": 1}],
        "constraints": {"gpus": ["l4"]},
        "max_utilization": 0.8,
    }
    plan = client.post("/v1/plans", json=body).json()
    (replica,) = plan["choice"]["replicas"]
    capacity = replica["classes"][0]["capacity_requests_per_s"]
    assert (
        replica["classes"][0]["capacity_provenance"] == "measured"
    )  # Mélange's L4 row, bucket (25,100]x(25,100]
    per_instance = replica["replicas"] // replica["instances"]
    instances = math.ceil(10 / (capacity * 0.8 * per_instance) - 1e-9)
    assert replica["instances"] == instances
    assert plan["cost"]["usd_per_hour"] == pytest.approx(instances * replica["offer"]["price_per_hour_usd"])
    higher = client.post("/v1/plans", json={**body, "requests_per_s": 40}).json()
    assert higher["cost"]["usd_per_hour"] >= plan["cost"]["usd_per_hour"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"requests_per_s": None}, "requests_per_s"),
        ({"request_mix": [{"input_tokens": 10, "output_tokens": 10, "share": 0.4}]}, "request_mix"),
        ({"max_utilization": 1.5}, "max_utilization"),
        ({"model": {"name": "ResNet-50"}}, "model"),
        ({"requests_per_s": 1e-12}, "requests_per_s"),
        ({"requests_per_s": 5e-324}, "requests_per_s"),
        ({"request_mix": [{**MIX[0], "share": 1e-300}, {**MIX[1], "share": 1.0}]}, "request_mix[0].share"),
    ],
)
def test_bad_serving_input_names_the_field(client: Client, change: dict[str, Any], field: str) -> None:
    body = {k: v for k, v in {**SERVING, **change}.items() if v is not None}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    "change",
    [
        {"requests_per_s": 1e-6},
        {"request_mix": [{**MIX[0], "share": 1e-9}, {**MIX[1], "share": 1 - 1e-9}]},
        {"requests_per_s": 1e-6, "request_mix": [{**MIX[0], "share": 1e-9}, {**MIX[1], "share": 1.0}]},
    ],
)
def test_the_smallest_rate_and_share_are_planned(client: Client, change: dict[str, Any]) -> None:
    response = client.post("/v1/plans", json={**SERVING, **change})
    assert response.status_code == 201, response.text
    assert response.json()["choice"]["replicas"]


def test_uploaded_profiles_are_validated_and_used(admin: Client) -> None:
    sheet = (
        "model,gpu,tp,input_len_lo_excl,input_len_hi_incl,output_len_lo_excl,output_len_hi_incl,max_requests_per_s,slo,source\n"
        "Llama-2-7b,l40s,1,25,100,25,100,9.5,p99 tpot<=100ms,our load test 2026-11\n"
    )
    auth = AUTH
    bad = sheet + "Llama-2-7b,H100,1,100,25,25,100,1,,x\nNoSuchModel,l40s,1,0,25,0,25,1,,x\n"
    report = admin.post("/v1/profiles", params={"source": "lab"}, content=bad.encode(), headers=auth)
    assert report.status_code == 422
    assert [(p["line"], p["column"]) for p in report.json()["problems"]] == [(3, "gpu"), (4, "model")]
    ok = admin.post("/v1/profiles", params={"source": "lab"}, content=sheet.encode(), headers=auth)
    assert ok.status_code == 201 and ok.json()["accepted_rows"] == 1
    again = admin.post("/v1/profiles", params={"source": "lab"}, content=sheet.encode(), headers=auth)
    assert again.json()["replaced_rows"] == 1
    rows = admin.get("/v1/profiles/serving", params={"gpu": "l40s"}).json()
    assert rows["total"] == 1 and rows["items"][0]["max_requests_per_s"] == 9.5
    body = {
        **SERVING,
        "request_mix": [{"input_tokens": 30, "output_tokens": 80, "share": 1}],
        "constraints": {"gpus": ["l40s"]},
    }
    plan = admin.post("/v1/plans", json=body).json()
    klass = plan["choice"]["replicas"][0]["classes"][0]
    assert klass["capacity_provenance"] == "measured" and klass["capacity_requests_per_s"] == 9.5
    assert admin.post("/v1/profiles", params={"source": "lab"}, content=sheet.encode()).status_code == 401


SLO_FLEET = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 5,
    "slo": {"ttft_ms": 500, "tpot_ms": 50},
    "request_mix": [{"input_tokens": 500, "output_tokens": 200, "share": 1}],
}


def test_a_fleet_runs_two_replicas_unless_told_otherwise(client: Client) -> None:
    """Before: a low rate was served by one replica, which has no redundancy."""
    low = {**SLO_FLEET, "requests_per_s": 0.05}
    plan = client.post("/v1/plans", json=low).json()
    assert sum(r["replicas"] for r in plan["choice"]["replicas"]) == 2
    one = client.post("/v1/plans", json={**low, "min_replicas": 1}).json()
    assert sum(r["replicas"] for r in one["choice"]["replicas"]) == 1
    assert one["cost"]["usd_per_hour"] < plan["cost"]["usd_per_hour"]


def test_a_fleet_surviving_an_instance_loss_is_not_one_host(client: Client) -> None:
    """Issue 23: a 5 requests/s SLO fleet landed on two consumer cards in one marketplace host (at 4
    requests/s it still does, since the engine model's vLLM front end costs 26.3 ms a request)."""
    body = {**SLO_FLEET, "requests_per_s": 4}
    plain = client.post("/v1/plans", json=body).json()
    assert [r["instances"] for r in plain["choice"]["replicas"]] == [1]  # the one host, still allowed
    plan = client.post("/v1/plans", json={**body, "survive_instance_loss": True}).json()
    for replica in plan["choice"]["replicas"]:
        per_instance = replica["replicas"] // replica["instances"]
        assert replica["instances"] >= 2
        # one instance lost: the rest still carry the type's load at max_utilization
        load_left = replica["load"] * replica["replicas"] / (replica["replicas"] - per_instance)
        assert load_left <= 0.85 + 1e-6
    assert plan["best_single_type"]["instances"] >= 2


def test_a_fleets_kv_cache_format_reaches_its_derived_capacities(client: Client) -> None:
    """``kv_cache: fp8`` halves each cached token's bytes, so a replica that runs out of KV room on long
    requests serves more of them: the serving planner used to size every fleet at 16-bit KV whatever
    the request said (the memory model and /v1/throughput honoured it)."""
    body = {
        **SERVING,
        "model": {"name": "Llama 3.1 8B"},
        "requests_per_s": 2,
        "request_mix": [{"input_tokens": 800, "output_tokens": 1500, "share": 1}],
        "constraints": {"gpus": ["RTX 5090"]},
    }
    capacity = {}
    for kv in ("auto", "fp8"):
        response = client.post("/v1/plans", json={**body, "kv_cache": kv})
        assert response.status_code == 201, response.text
        replicas = response.json()["choice"]["replicas"]
        assert {r["gpu"] for r in replicas} == {"rtx-5090"}
        assert all(r["classes"][0]["capacity_provenance"] == "derived" for r in replicas)
        capacity[kv] = max(r["classes"][0]["capacity_requests_per_s"] for r in replicas)
    assert capacity["fp8"] > 1.2 * capacity["auto"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"optimizer": "sgd"}, "optimizer"),
        ({"micro_batch": 4}, "micro_batch"),
        ({"recompute": "full"}, "recompute"),
        ({"efficiency": {"bandwidth_utilization": 0.5}}, "efficiency"),
        ({"constraints": {"deadline_hours": 10}}, "constraints.deadline_hours"),
        ({"method": "lora"}, "method"),  # the engine serves the base model: adapters are not modelled
        ({"lora_rank": 64}, "lora_rank"),
    ],
)
def test_a_training_only_field_on_a_serving_plan_is_a_400_naming_it(
    client: Client, extra: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/plans", json={**SERVING, **extra})
    assert response.status_code == 400, response.text
    assert field in response.text
    assert client.post("/v1/plans", json=SERVING).status_code == 201  # the defaults are no statement


def test_a_fleet_of_a_model_that_is_not_a_decoder_llm_is_a_400(client: Client) -> None:
    response = client.post("/v1/plans", json={**SERVING, "model": {"name": "BERT-Large"}})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "model" and "decoder" in response.json()["detail"]


def test_output_len_on_a_model_that_generates_no_tokens_is_a_400_naming_it(client: Client) -> None:
    body = {"kind": "batch_inference", "model": {"name": "ResNet-50"}, "samples": 10**6, "output_len": 4}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "output_len" and "generates no tokens" in response.json()["detail"]
