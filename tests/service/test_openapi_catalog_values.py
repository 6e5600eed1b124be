"""The served OpenAPI document lists the providers and regions the API accepts now, not those of the
start (issue 28 D9): a sheet that adds a provider and a region puts them in the ``enum`` of
``/v1/offers``'s filters, and one that replaces them takes them out, as the API refuses them then."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.service.admin import AUTH

HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"


def _listed(client: TestClient[Any], name: str) -> set[str]:
    """The values the served document lists for ``/v1/offers``'s ``name`` filter."""
    document = client.get("/schema/openapi.json").json()
    (parameter,) = [p for p in document["paths"]["/v1/offers"]["get"]["parameters"] if p["name"] == name]
    schema = parameter["schema"]
    branches = [b for b in schema.get("oneOf", schema.get("anyOf", [schema])) if "enum" in b]
    assert len(branches) == 1, schema
    return set(branches[0]["enum"])


def _upload(client: TestClient[Any], provider: str, region: str) -> None:
    sheet = f"{HEADER}{provider},{provider}.l4,L4,1,{region},0.75\n"
    uploaded = client.post(
        "/v1/price-sheets", params={"source": "novel", "format": "rental_csv"}, content=sheet, headers=AUTH
    )
    assert uploaded.status_code == 201, uploaded.text


def _accepted(client: TestClient[Any], name: str, value: str) -> bool:
    answer = client.get("/v1/offers", params={name: value, "limit": 1})
    assert answer.status_code in (200, 400), answer.text
    return answer.status_code == 200


def test_the_schema_lists_the_providers_and_regions_the_api_accepts_after_each_upload(
    admin: TestClient[Any],
) -> None:
    assert "novelcloud" not in _listed(admin, "provider")  # the document was served once before
    _upload(admin, "novelcloud", "mars-1")
    assert _accepted(admin, "provider", "novelcloud") and _accepted(admin, "region", "mars-1")
    assert {"novelcloud"} <= _listed(admin, "provider") and {"mars-1"} <= _listed(admin, "region")

    _upload(admin, "othercloud", "venus-2")  # the source's new version replaces the one before
    assert not _accepted(admin, "provider", "novelcloud") and not _accepted(admin, "region", "mars-1")
    providers, regions = _listed(admin, "provider"), _listed(admin, "region")
    assert "novelcloud" not in providers and "mars-1" not in regions
    assert {"othercloud"} <= providers and {"venus-2"} <= regions
    assert all(_accepted(admin, "provider", p) for p in providers)
    assert all(_accepted(admin, "region", r) for r in regions)
