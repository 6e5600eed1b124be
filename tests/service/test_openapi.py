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


def _body_components(document: dict[str, Any]) -> set[str]:
    """Every component a JSON request body refers to, however deep."""
    components = document["components"]["schemas"]
    seen: set[str] = set()
    todo = [
        ref
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for ref in _refs(operation.get("requestBody", {}).get("content", {}).get("application/json", {}))
    ]
    while todo:
        name = todo.pop().removeprefix("#/components/schemas/")
        if name not in seen:
            seen.add(name)
            todo.extend(_refs(components[name]))
    return seen


def test_request_bodies_say_unknown_fields_are_refused(client: TestClient[Any]) -> None:
    """Every request struct forbids unknown fields (a 400 naming the field); the schema says so, so
    generators and fuzzers never send one as valid data."""
    document = client.get("/schema/openapi.json").json()
    components = document["components"]["schemas"]
    bodies = _body_components(document)
    assert {"PlanRequest", "ModelSpec", "RequestClass", "MemoryRequest", "BuyVsRentRequest"} <= bodies
    open_ = [
        n
        for n in bodies
        if components[n].get("type") == "object" and "additionalProperties" not in components[n]
    ]
    assert open_ == []
    assert all(
        components[n]["additionalProperties"] is False
        for n in bodies
        if "additionalProperties" in components[n]
    )
    refused = client.post("/v1/memory", json={"model": {"name": "Llama 3.1 8B"}, "extra": 1})
    assert refused.status_code == 400 and "extra" in refused.text
