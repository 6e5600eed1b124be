"""ETag and Cache-Control on the GETs whose answer never changes, 304 on If-None-Match (issue 13,
A5b); CORS only for the configured origins (A5a)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.ops.caching import CACHE_CONTROL, etag_matches
from service.settings import Settings
from tests.service.ops.test_metrics import PLAN


def _revalidates(client: TestClient[Any], path: str) -> None:
    first = client.get(path)
    assert first.status_code == 200, first.text
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["cache-control"] == CACHE_CONTROL
    assert client.get(path).headers["etag"] == etag  # the same body, the same tag
    unchanged = client.get(path, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["etag"] == etag and "content-length" not in unchanged.headers
    listed = client.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    assert listed.status_code == 304
    stale = client.get(path, headers={"If-None-Match": '"something-else"'})
    assert stale.status_code == 200 and stale.content == first.content


def test_a_stored_plan_and_a_sheet_version_revalidate(client: TestClient[Any]) -> None:
    created = client.post("/v1/plans", json=PLAN)
    assert created.status_code == 201 and "etag" not in created.headers
    _revalidates(client, created.headers["location"])
    _revalidates(client, "/v1/price-sheets/1")
    assert (
        client.get("/v1/price-sheets/2").headers["etag"] != client.get("/v1/price-sheets/1").headers["etag"]
    )


def test_errors_and_changing_lists_are_not_cached(client: TestClient[Any]) -> None:
    missing = client.get("/v1/plans/nope", headers={"If-None-Match": "*"})
    assert missing.status_code == 404 and "etag" not in missing.headers
    listed = client.get("/v1/price-sheets")
    assert listed.status_code == 200 and "etag" not in listed.headers


def test_if_none_match_comparison() -> None:
    assert etag_matches('"a"', '"a"') and etag_matches('W/"a"', '"a"') and etag_matches("*", '"a"')
    assert etag_matches('"b", "a"', '"a"') and not etag_matches('"b"', '"a"')


def _preflight(client: TestClient[Any], origin: str) -> Any:
    return client.options(
        "/v1/plans",
        headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
    )


def test_cors_answers_only_the_configured_origins(store: Store, client: TestClient[Any]) -> None:
    settings = Settings(db_path=":memory:", cors_origins=("https://app.example.com",))
    with TestClient(create_app(settings, store=store)) as cors:
        allowed = _preflight(cors, "https://app.example.com")
        assert allowed.status_code == 204
        assert allowed.headers["access-control-allow-origin"] == "https://app.example.com"
        assert "POST" in allowed.headers["access-control-allow-methods"]
        simple = cors.get("/health/live", headers={"Origin": "https://app.example.com"})
        assert "x-request-id" in simple.headers["access-control-expose-headers"].lower()
        assert "access-control-allow-origin" not in _preflight(cors, "https://evil.example").headers
    plain = client.get("/health/live", headers={"Origin": "https://app.example.com"})
    assert "access-control-allow-origin" not in plain.headers  # no origins configured: no CORS


def test_cors_origins_are_read_and_checked_from_the_environment() -> None:
    env = {"GPUPLAN_CORS_ORIGINS": "https://a.example, http://localhost:3000/ ,"}
    assert Settings.from_env(env).cors_origins == ("https://a.example", "http://localhost:3000")
    assert Settings.from_env({"GPUPLAN_CORS_ORIGINS": "*"}).cors_origins == ("*",)
    assert Settings.from_env({}).cors_origins == ()
    for bad in ("a.example", "https://a.example/path", "ftp://a.example"):
        with pytest.raises(ValueError, match="GPUPLAN_CORS_ORIGINS"):
            Settings.from_env({"GPUPLAN_CORS_ORIGINS": bad})
    with pytest.raises(ValueError, match="GPUPLAN_LOG_FORMAT"):
        Settings.from_env({"GPUPLAN_LOG_FORMAT": "xml"})
