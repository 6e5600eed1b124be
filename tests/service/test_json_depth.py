"""JSON nested deeper than the limit is a 400 problem on every JSON body, uploads included (parsers
recurse: at depth ~1,500 they raised RecursionError, a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]
ROUTES = [
    ("/v1/plans", {}),
    ("/v1/memory", {}),
    ("/v1/throughput", {}),
    ("/v1/buy-vs-rent", {}),
    ("/v1/price-sheets", {"source": "acme", "format": "rental_json"}),
    ("/v1/profiles", {"source": "acme", "format": "json"}),
]


@pytest.mark.parametrize("depth", [65, 1_500, 100_000])
def test_deep_json_is_a_400_on_every_json_body(admin: Client, depth: int) -> None:
    for path, params in ROUTES:
        for body in (b"[" * depth + b"]" * depth, b'{"model": ' * depth + b"1" + b"}" * depth):
            response = admin.post(path, params=params, content=body, headers=AUTH)
            assert response.status_code == 400, (path, response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            problem = response.json()
            assert problem["field"] == "body" and "nested deeper than 64 levels" in problem["detail"], path


def test_shallow_bodies_pass_the_depth_check(admin: Client) -> None:
    body = b'{"kind": "fine_tune", "model": {"name": "Llama 3.2 1B"}, "method": "lora", "tokens": 1000000}'
    assert admin.post("/v1/plans", content=body).status_code == 201
