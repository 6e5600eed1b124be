"""Country filters in plans: ``constraints.countries`` / ``exclude_countries`` keep offers by the
country derived from their region (a 400 naming the field for a code that is not ISO 3166-1), every
chosen offer and alternative shows its region's country, and offers whose country is unknown are
excluded only when countries are named, with a ``country_unknown`` warning counting them."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]
SERVING = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 5,
    "request_mix": [{"input_tokens": 1000, "output_tokens": 500, "share": 1.0}],
    "hours": 100,
}
LORA_8B = {  # examples/workloads/lora.json
    "kind": "fine_tune",
    "model": {"name": "meta-llama/Llama-3.1-8B"},
    "method": "lora",
    "micro_batch": 4,
    "seq_len": 2048,
    "recompute": "selective",
    "tokens": 2_000_000_000,
}


def _countries(plan: dict[str, Any]) -> set[str | None]:
    return {r["offer"]["country"] for r in plan["choice"]["replicas"] if r["offer"] is not None}


def test_a_5_per_s_fleet_leaves_russia_when_it_is_excluded(client: Client) -> None:
    """The issue's case: the cheapest small fleet has a Vast host in St.-Petersburg."""
    plan = client.post("/v1/plans", json=SERVING).json()
    assert "RU" in _countries(plan)
    excluded = client.post("/v1/plans", json={**SERVING, "constraints": {"exclude_countries": ["RU"]}})
    assert excluded.status_code == 201, excluded.text
    assert "RU" not in _countries(excluded.json())


def test_countries_keeps_only_those_countries_and_shows_them(client: Client) -> None:
    body = {**LORA_8B, "constraints": {"countries": ["de", "FI"]}}
    plan = client.post("/v1/plans", json=body).json()
    assert plan["choice"]["offer"]["country"] in {"DE", "FI"}
    assert {a["country"] for a in plan["alternatives"] if a["provider"]} <= {"DE", "FI"}
    warning = next(w for w in plan["warnings"] if w["code"] == "country_unknown")
    assert "region names no country" in warning["message"] and "hyperbolic 'default'" in warning["message"]


def test_without_countries_an_unknown_country_offer_is_kept(client: Client) -> None:
    """The LoRA of the README runs on Hyperbolic, whose sheet region is ``default``."""
    plan = client.post("/v1/plans", json=LORA_8B).json()
    assert plan["choice"]["offer"]["provider"] == "hyperbolic"
    assert plan["choice"]["offer"]["country"] is None
    assert not [w for w in plan["warnings"] if w["code"] == "country_unknown"]
    excluded = client.post("/v1/plans", json={**LORA_8B, "constraints": {"exclude_countries": ["US"]}}).json()
    assert excluded["choice"]["offer"]["provider"] == "hyperbolic"


@pytest.mark.parametrize(
    ("constraints", "field"),
    [
        ({"countries": ["XX"]}, "constraints.countries[0]"),
        ({"exclude_countries": ["US", "EU"]}, "constraints.exclude_countries[1]"),
    ],
)
def test_an_unknown_country_code_is_a_400_naming_the_field(
    client: Client, constraints: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/plans", json={**LORA_8B, "constraints": constraints})
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert "ISO 3166-1" in response.json()["detail"]


def test_a_fleet_limited_to_countries_warns_about_offers_of_no_known_country(client: Client) -> None:
    plan = client.post("/v1/plans", json={**SERVING, "constraints": {"countries": ["US"]}}).json()
    assert _countries(plan) == {"US"}
    codes = {w["code"] for w in plan["warnings"]}
    assert "country_unknown" in codes
