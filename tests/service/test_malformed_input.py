"""Malformed input to every endpoint: a 400/404 problem naming the parameter, never a 500."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

Client = TestClient[Any]

BAD_QUERIES = [
    ("/v1/offers", "limit", "abc"),
    ("/v1/offers", "limit", "0"),
    ("/v1/offers", "limit", "100000"),
    ("/v1/offers", "offset", "-1"),
    ("/v1/offers", "max_price", "cheap"),
    ("/v1/offers", "max_price", "-3"),
    ("/v1/offers", "max_price", "nan"),
    ("/v1/offers", "min_gpus", "1.5"),
    ("/v1/offers", "interconnect", "infiniband"),
    ("/v1/offers", "sort", "price; DROP TABLE offers"),
    ("/v1/offers", "gpu", "Z9000"),
    ("/v1/offers", "provider", "nowhere-cloud"),
    ("/v1/offers", "region", "moon-1"),
    ("/v1/offers", "gpus", "H100"),
    ("/v1/gpus", "min_memory_gib", "lots"),
    ("/v1/gpus", "nvlink", "maybe"),
    ("/v1/gpus", "vendor", "Intel"),
    ("/v1/profiles", "gpu_count", "many"),
    ("/v1/profiles", "task", "dance"),
    ("/v1/profiles", "metric", "furlongs"),
    ("/v1/profiles", "model", "NoSuchModel 9000"),
    ("/v1/profiles", "limit", "1.5"),
]


@pytest.mark.parametrize(("path", "param", "value"), BAD_QUERIES)
def test_bad_query_value_is_400_naming_the_parameter(
    client: Client, path: str, param: str, value: str
) -> None:
    response = client.get(path, params={param: value})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 400
    assert param in body["detail"]
    assert body["errors"][0]["field"] == param


def test_min_above_max_is_an_empty_answer(client: Client) -> None:
    response = client.get("/v1/offers", params={"min_gpus": 8, "max_gpus": 2})
    assert response.status_code == 200
    assert response.json()["total"] == 0


def test_unknown_route_and_method(client: Client) -> None:
    assert client.get("/v1/nothing").status_code == 404
    response = client.post("/v1/gpus")
    assert response.status_code == 405
    assert response.headers["content-type"].startswith("application/problem+json")


ENDPOINTS = {
    "/v1/offers": [
        "gpu",
        "provider",
        "region",
        "min_gpus",
        "max_gpus",
        "max_price",
        "interconnect",
        "sort",
        "limit",
    ],
    "/v1/profiles": ["gpu", "model", "task", "metric", "precision", "gpu_count", "limit", "offset"],
    "/v1/gpus": ["vendor", "min_memory_gib", "nvlink", "ecc", "limit", "offset"],
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(sorted(ENDPOINTS)),
    data=st.data(),
)
def test_fuzzed_query_values_never_500(client: Client, path: str, data: st.DataObject) -> None:
    params = {
        name: data.draw(st.text(max_size=30) | st.integers().map(str) | st.floats().map(str), label=name)
        for name in data.draw(st.lists(st.sampled_from(ENDPOINTS[path]), unique=True, max_size=4))
    }
    response = client.get(path, params=params)
    assert response.status_code in (200, 400), response.text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.text(min_size=1, max_size=40))
def test_fuzzed_gpu_ids_never_500(client: Client, key: str) -> None:
    response = client.get(f"/v1/gpus/{quote(key, safe='')}")
    assert response.status_code in (200, 404, 400), response.text
