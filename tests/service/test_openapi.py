"""The OpenAPI document: every reference resolves, and component names stay the ones clients know."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def test_every_reference_names_a_component(client: TestClient[Any]) -> None:
    document = client.get("/schema/openapi.json").json()
    components = document["components"]["schemas"]
    refs = _refs(document)
    assert refs and {r.removeprefix("#/components/schemas/") for r in refs} <= set(components)


def test_the_two_offer_references_keep_their_published_names(client: TestClient[Any]) -> None:
    components = client.get("/schema/openapi.json").json()["components"]["schemas"]
    plan_offer, rent_offer = components["plan_schemas_OfferRef"], components["buy_vs_rent_schemas_OfferRef"]
    assert "pricing" in plan_offer["properties"] and "commitment_discount" in rent_offer["properties"]
    assert not [
        name
        for name in components
        if name.endswith("OfferRef")
        and name
        not in (
            "plan_schemas_OfferRef",
            "buy_vs_rent_schemas_OfferRef",
        )
    ]
