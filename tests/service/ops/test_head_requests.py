"""HEAD on a GET route answers the GET's status and headers without a body (issue 28, D17-D21)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]


def test_head_is_the_get_without_its_body(client: Client) -> None:
    for path in ("/v1/gpus", "/health", "/", "/v1/offers?limit=2"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200, path
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers.get("content-length") == got.headers.get("content-length")


def test_head_on_a_route_without_get_keeps_its_405_and_allow(client: Client) -> None:
    head = client.head("/v1/memory")
    assert head.status_code == 405 and "POST" in head.headers["allow"] and head.content == b""
