"""The buy-vs-rent route has its own request hook; its body is still decoded strictly (a string where
a number belongs is a 400 naming the field, as on every other route)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

BASE: dict[str, Any] = {"gpu": "H100 SXM", "gpu_count": 8, "horizon_months": 36, "utilization": 0.7}


@pytest.mark.parametrize(
    ("field", "value"),
    [("gpu_count", "8"), ("horizon_months", "36"), ("utilization", "0.7"), ("gpu_count", 8.0)],
)
def test_strings_where_numbers_belong_are_400(client: TestClient[Any], field: str, value: object) -> None:
    response = client.post("/v1/buy-vs-rent", json=BASE | {field: value})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
    assert client.post("/v1/buy-vs-rent", json=BASE).status_code == 200
