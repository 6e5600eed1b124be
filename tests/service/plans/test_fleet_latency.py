"""Each replica type of a serving plan states the latencies the engine model simulates at its load,
its precision and GPUs, and the fleet its GPU count (POST /v1/plans)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]
SLO_FLEET = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 5,
    "slo": {"ttft_ms": 500, "tpot_ms": 50, "percentile": 90},
    "request_mix": [{"input_tokens": 500, "output_tokens": 200, "share": 1}],
}


def test_replicas_state_latencies_within_the_slo_precision_gpus_and_region(client: Client) -> None:
    plan = client.post("/v1/plans", json=SLO_FLEET).json()
    replicas = plan["choice"]["replicas"]
    assert plan["choice"]["gpus"] == sum(r["gpus"] for r in replicas) >= 2
    for replica in replicas:
        latency = replica["latency"]
        assert latency is not None and latency["stable"]
        assert latency["requests_per_s"] == pytest.approx(
            5 * replica["classes"][0]["share_of_class"] / replica["replicas"], rel=1e-2
        )
        assert latency["ttft_ms"]["p50"] <= latency["ttft_ms"]["p90"] <= 500
        assert latency["tpot_ms"]["p90"] <= 50
        assert replica["precision"] == "bf16" and replica["offer"]["region"]
    again = client.post("/v1/plans", json=SLO_FLEET).json()  # warm: the same numbers from the cache
    assert [r["latency"] for r in again["choice"]["replicas"]] == [r["latency"] for r in replicas]
