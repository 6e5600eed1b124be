"""What client generators need of the document: the admin token declared where it is required,
distinct model titles, and an explicit, distinct member name for every enum value."""

from __future__ import annotations

from collections import Counter
from typing import Any

from litestar.testing import TestClient

from service.openapi import enum_member_names


def test_admin_operations_declare_the_bearer_token(client: TestClient[Any]) -> None:
    document = client.get("/schema/openapi.json").json()
    assert document["components"]["securitySchemes"]["adminToken"] | {"description": ""} == {
        "type": "http",
        "scheme": "bearer",
        "description": "",
    }
    secured = {
        (method, path)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and operation.get("security")
    }
    assert secured == {
        ("post", "/v1/price-sheets"),
        ("post", "/v1/price-sheets/refresh"),
        ("post", "/v1/profiles"),
        ("post", "/v1/measurements"),
    }
    for method, path in secured:
        operation = document["paths"][path][method]
        assert operation["security"] == [{"adminToken": []}] and {"401", "403"} <= set(operation["responses"])


def test_component_titles_are_distinct(client: TestClient[Any]) -> None:
    schemas = client.get("/schema/openapi.json").json()["components"]["schemas"]
    titles = Counter(s["title"] for s in schemas.values() if "title" in s)
    assert [t for t, n in titles.items() if n > 1] == []
    assert schemas["plan_schemas_OfferRef"]["title"] == "PlanOfferRef"


def _enums(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        own = [node] if isinstance(node.get("enum"), list) and "x-enum-varnames" in node else []
        return own + [e for v in node.values() for e in _enums(v)]
    if isinstance(node, list):
        return [e for v in node for e in _enums(v)]
    return []


def test_every_catalog_enum_names_its_members(client: TestClient[Any]) -> None:
    enums = _enums(client.get("/schema/openapi.json").json())
    assert len(enums) >= 10  # the GPU, provider, region, model … lists
    for enum in enums:
        names = enum["x-enum-varnames"]
        assert len(names) == len(enum["enum"])
        assert len({n.replace("_", "") for n in names}) == len(names)
        assert all(n.isidentifier() and n[0].isalpha() for n in names)


def test_member_names_survive_case_and_punctuation_variants() -> None:
    assert enum_member_names(["A10", "a10", "A100-80G", "A100_80G", "8x", ""]) == [
        "A10",
        "A10_2",
        "A100_80G",
        "A100_80G_2",
        "V_8X",
        "VALUE",
    ]
