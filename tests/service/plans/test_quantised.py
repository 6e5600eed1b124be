"""Quantised weights tried as replica types where the software table says they run (POST /v1/plans)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]
ON_SMALL_CARDS = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 5,
    "slo": {"ttft_ms": 500, "tpot_ms": 50},
    "request_mix": [{"input_tokens": 500, "output_tokens": 200, "share": 1}],
    "constraints": {"gpus": ["l4", "a10g"]},
}


def test_quantised_weights_are_tried_only_when_asked_and_shown(client: Client) -> None:
    """Before: L4 and A10G were sized at bf16 only; fp8/AWQ/GPTQ weights were never tried."""
    plain = client.post("/v1/plans", json=ON_SMALL_CARDS).json()
    assert {r["precision"] for r in plain["choice"]["replicas"]} == {"bf16"}
    quantised = client.post("/v1/plans", json={**ON_SMALL_CARDS, "quantisation": ["fp8", "int4"]}).json()
    assert quantised["cost"]["usd_per_hour"] < plain["cost"]["usd_per_hour"]
    assert {r["precision"] for r in quantised["choice"]["replicas"]} <= {"bf16", "fp8", "int4"}
    assert any(r["precision"] != "bf16" for r in quantised["choice"]["replicas"])
    for replica in quantised["choice"]["replicas"]:
        assert replica["latency"]["tpot_ms"]["p90"] <= 50


def test_fp8_weights_need_the_software_tables_fp8_row(client: Client) -> None:
    """A10G (Ampere) has no fp8_inference row: its fp8 types are refused, its bf16 ones serve."""
    body = {**ON_SMALL_CARDS, "constraints": {"gpus": ["a10g"]}, "quantisation": ["fp8"]}
    plan = client.post("/v1/plans", json=body).json()
    assert {r["precision"] for r in plan["choice"]["replicas"]} == {"bf16"}
    assert (
        plan["solver"]["replica_types"]
        == client.post("/v1/plans", json={**body, "quantisation": []}).json()["solver"]["replica_types"]
    )


def test_a_gpu_without_the_kernels_is_told_why(client: Client) -> None:
    body = {**ON_SMALL_CARDS, "slo": None, "constraints": {"gpus": ["V100 16GB"]}, "quantisation": ["int4"]}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 422, response.text
    reasons = [r["detail"] for g in response.json()["rejected"] for r in g["reasons"]]
    assert any(d.startswith("int4 weights: ") and "vllm" in d for d in reasons), reasons


def test_an_unknown_quantisation_is_refused(client: Client) -> None:
    response = client.post("/v1/plans", json={**ON_SMALL_CARDS, "quantisation": ["fp4"]})
    assert response.status_code == 400 and "quantisation" in response.text
