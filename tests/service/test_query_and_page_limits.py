"""Query strings and pages held to the API's rules: a whole number in digits, each parameter once; the
form's scientific notation bounded as the API bounds it; pages that cannot be framed or sniffed."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.ops.page_headers import PAGE_POLICY

Client = TestClient[Any]


@pytest.mark.parametrize("query", ["limit=1e3", "limit=1.0", "limit=%D9%A1", "offset=1e2"])
def test_a_whole_number_query_is_digits_only(client: Client, query: str) -> None:
    response = client.get(f"/v1/offers?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["field"] == query.split("=")[0]


def test_a_query_parameter_given_twice_is_a_400(client: Client) -> None:
    response = client.get("/v1/offers?limit=1&limit=2")
    assert response.status_code == 400 and response.json()["field"] == "limit"
    assert "2 times" in response.json()["detail"]
    assert client.get("/v1/offers?limit=2").status_code == 200


def test_the_form_bounds_tokens_in_scientific_notation_as_the_api_does(client: Client) -> None:
    query = {"model": "Llama-2-7b", "kind": "batch_inference", "tokens": "1e30"}
    page = client.get("/plan", params=query)
    assert page.status_code == 200 and "&lt;= 10000000000000000" in page.text
    api = client.post(
        "/v1/plans", json={"model": {"name": "Llama-2-7b"}, "kind": "batch_inference", "tokens": 10**30}
    )
    assert api.status_code == 400 and "<= 10000000000000000" in api.text
    fine = client.get("/plan", params=query | {"tokens": "1e6"})
    assert "Save this plan" in fine.text


@pytest.mark.parametrize("path", ["/", "/plan", "/price-sheets", "/serving", "/buy-vs-rent"])
def test_pages_cannot_be_framed_or_sniffed(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == PAGE_POLICY
    assert "frame-ancestors 'none'" in PAGE_POLICY


def test_api_answers_are_not_sniffed_either(client: Client) -> None:
    response = client.get("/v1/gpus")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in response.headers
