"""A mix of replica types is recommended only when it saves more than ``mix_threshold`` (POST /v1/plans)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]
# at 16 requests/s the cheapest mix (three replica types) saves about 0.5 % over H100 SXM alone
SMALL_SAVING = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 16,
    "request_mix": [
        {"input_tokens": 20, "output_tokens": 20, "share": 0.5},
        {"input_tokens": 800, "output_tokens": 1500, "share": 0.5},
    ],
    "constraints": {"gpus": ["a10g", "l4", "a100-80gb-sxm", "h100-sxm"]},
}


def test_a_mix_saving_less_than_the_threshold_is_not_recommended(client: Client) -> None:
    """Before: the mix was the choice whatever it saved ("saves $0.00 (0.0 %)" mixes)."""
    plan = client.post("/v1/plans", json=SMALL_SAVING).json()
    (replica,) = plan["choice"]["replicas"]
    single = plan["best_single_type"]
    assert replica["gpu"] == single["gpu"] and plan["cost"]["usd_per_hour"] == pytest.approx(
        single["usd_per_hour"]
    )
    assert plan["saving_vs_single_type"]["usd_per_hour"] == pytest.approx(0.0)
    why = plan["choice"]["why"]
    assert (
        why.startswith("the best single type: the cheapest mix (3 replica types")
        and "3.0% mix_threshold" in why
    )


def test_a_mix_saving_more_than_the_threshold_is_recommended(client: Client) -> None:
    plan = client.post("/v1/plans", json={**SMALL_SAVING, "mix_threshold": 0.003}).json()
    assert len(plan["choice"]["replicas"]) == 3
    saving = plan["saving_vs_single_type"]
    assert 0.003 < saving["fraction"] < 0.03
    assert plan["choice"]["why"].startswith("a mix of 3 replica types: it saves")


def test_one_type_says_so(client: Client) -> None:
    plan = client.post("/v1/plans", json={**SMALL_SAVING, "requests_per_s": 6}).json()
    assert plan["choice"]["why"] == "one replica type is the cheapest fleet"


@pytest.mark.parametrize("value", [-0.01, 1.5])
def test_the_threshold_is_a_share(client: Client, value: float) -> None:
    response = client.post("/v1/plans", json={**SMALL_SAVING, "mix_threshold": value})
    assert response.status_code == 400 and "mix_threshold" in response.text
