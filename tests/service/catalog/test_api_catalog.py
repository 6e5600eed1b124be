"""The read API end to end against the shipped data."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]


def test_health_reports_db_and_scheduler(client: Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["db"]["ok"] and body["db"]["gpus"] == 56 and body["db"]["current_offers"] == 930
    assert body["scheduler"]["running"] is True


def test_gpus_lists_the_whole_catalog(client: Client) -> None:
    body = client.get("/v1/gpus").json()
    assert body["total"] == 56 and len(body["items"]) == 56
    h100 = next(g for g in body["items"] if g["gpu_id"] == "h100-sxm")
    assert h100["memory_gib"] == 80 and h100["nvlink"] is True and "H100-SXM" in h100["aliases"]


def test_gpu_by_id_name_or_alias(client: Client) -> None:
    for key in ("h100-sxm", "H100 SXM", "H100_SXM5"):
        response = client.get(f"/v1/gpus/{key}")
        assert response.status_code == 200, key
        assert response.json()["gpu_id"] == "h100-sxm"


def test_unknown_gpu_is_404_problem(client: Client) -> None:
    response = client.get("/v1/gpus/Z9000")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 404


def test_ambiguous_alias_lists_the_candidates(client: Client) -> None:
    body = client.get("/v1/gpus/H100").json()
    assert {"h100-sxm", "h100-pcie"} <= set(body["candidates"])


def test_offers_for_h100_from_several_providers(client: Client) -> None:
    body = client.get("/v1/offers", params={"gpu": "H100", "limit": 1000}).json()
    assert body["total"] == len(body["items"]) > 20
    assert len({o["provider"] for o in body["items"]}) >= 5
    assert all(o["gpu_id"].startswith("h100") for o in body["items"])
    priced = [o for o in body["items"] if o["price_per_hour_usd"] is not None]
    assert priced and all(o["price_per_hour_usd"] > 0 for o in priced)
    per_gpu = [o["price_per_gpu_hour_usd"] for o in body["items"] if o["price_per_gpu_hour_usd"] is not None]
    assert per_gpu == sorted(per_gpu)  # default sort


def test_offer_filters_combine(client: Client) -> None:
    params = {"gpu": "h100-sxm", "min_gpus": 8, "interconnect": "nvswitch", "max_price": 60, "limit": 1000}
    body = client.get("/v1/offers", params=params).json()
    assert body["items"]
    for offer in body["items"]:
        assert offer["gpu_id"] == "h100-sxm"
        assert offer["gpus_per_instance"] >= 8
        assert offer["interconnect"] == "nvswitch"
        assert offer["price_per_hour_usd"] <= 60


def test_offer_pagination_and_sort(client: Client) -> None:
    first = client.get("/v1/offers", params={"limit": 5, "sort": "-price_per_hour_usd"}).json()
    second = client.get("/v1/offers", params={"limit": 5, "offset": 5, "sort": "-price_per_hour_usd"}).json()
    assert first["total"] == second["total"] == 930
    prices = [o["price_per_hour_usd"] for o in first["items"] + second["items"]]
    assert prices == sorted(prices, reverse=True)
    assert not {o["offer_id"] for o in first["items"]} & {o["offer_id"] for o in second["items"]}


def test_provider_and_region_filters(client: Client) -> None:
    body = client.get("/v1/offers", params={"provider": "lambda", "limit": 1000}).json()
    assert body["total"] > 0 and {o["provider"] for o in body["items"]} == {"lambda"}
    region = body["items"][0]["region"]
    regional = client.get("/v1/offers", params={"region": region, "limit": 1000}).json()
    assert {o["region"] for o in regional["items"]} == {region}


def test_profiles_for_h100_are_measured_rows_with_sources(client: Client) -> None:
    body = client.get("/v1/profiles", params={"gpu": "H100", "limit": 1000}).json()
    assert body["total"] > 50
    assert all(p["source"] and p["value"] > 0 for p in body["items"])
    llama = client.get("/v1/profiles", params={"model": "llama 3 8b", "task": "inference"}).json()
    assert llama["total"] > 0 and all(p["model"] == "Llama 3 8B" for p in llama["items"])
    counted = client.get("/v1/profiles", params={"gpu_count": 8, "limit": 5}).json()
    assert all(p["gpu_count"] == 8 for p in counted["items"])


def test_openapi_schema_and_browsable_page(client: Client) -> None:
    spec = client.get("/schema/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    for path in ("/health", "/v1/gpus", "/v1/gpus/{gpu_id}", "/v1/offers", "/v1/profiles"):
        assert path in spec["paths"], path
    page = client.get("/schema")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
