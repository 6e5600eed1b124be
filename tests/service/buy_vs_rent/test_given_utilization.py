"""A utilization the user gave comes back exactly as given and labelled as given; one computed from a
demand profile is labelled derived."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient


def _utilization(client: TestClient[Any], body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    response = client.post("/v1/buy-vs-rent", json={"gpu": "h100-sxm", "horizon_months": 36, **body})
    assert response.status_code == 200, response.text
    answer = response.json()
    [item] = [a for a in answer["assumptions"] if a["name"] == "utilization"]
    return answer["utilization"], item


def test_a_given_utilization_is_exact_and_labelled_given(admin: TestClient[Any]) -> None:
    for given in (0.7, 0.3, 0.85, 0.1):
        value, item = _utilization(admin, {"utilization": given, "gpu_count": 8})
        assert value == given and item["value"] == given
        assert (item["source"], item["citation"]) == ("request", "given")


def test_a_utilization_from_demand_is_derived(admin: TestClient[Any]) -> None:
    value, item = _utilization(admin, {"monthly_demand_gpu_hours": [3650, 3650, 8760]})
    assert item["source"] == "derived" and 0 < value <= 1
