"""GET /v1/offers end to end: every offer's network between instances, and the network filters."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

NETWORK_CLASSES = ("none", "ethernet", "roce", "infiniband", "efa", "gpudirect_tcpx")


def offers(client: Client, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/v1/offers", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["total"] == len(page["items"]), "one page holds the whole answer"
    items: list[dict[str, Any]] = page["items"]
    return items


@pytest.fixture(scope="module")
def every_offer(client: Client) -> list[dict[str, Any]]:
    return offers(client)


def test_every_offer_says_how_its_instances_reach_each_other(every_offer: list[dict[str, Any]]) -> None:
    assert every_offer
    for offer in every_offer:
        network = offer["network"]
        assert set(network) == {"class", "gbps", "derived", "rule"}, offer["offer_id"]
        assert network["class"] in NETWORK_CLASSES
        assert isinstance(network["derived"], bool) and isinstance(network["rule"], str) and network["rule"]
        assert isinstance(network["gbps"], float | int) and network["gbps"] >= 0
        # no bandwidth exactly when there is no network
        assert (network["gbps"] == 0) == (network["class"] == "none"), offer["offer_id"]


def test_the_shipped_sheet_has_more_than_one_network_class(every_offer: list[dict[str, Any]]) -> None:
    classes = {o["network"]["class"] for o in every_offer}
    assert {"ethernet", "none"} < classes and classes & {"infiniband", "roce", "efa"}


@pytest.mark.parametrize("network_class", NETWORK_CLASSES)
def test_network_class_filter_keeps_exactly_that_class(
    client: Client, every_offer: list[dict[str, Any]], network_class: str
) -> None:
    found = offers(client, network_class=network_class)
    assert all(o["network"]["class"] == network_class for o in found)
    expected = {o["offer_id"] for o in every_offer if o["network"]["class"] == network_class}
    assert {o["offer_id"] for o in found} == expected


def test_class_filters_partition_the_offers(client: Client, every_offer: list[dict[str, Any]]) -> None:
    totals = [
        client.get("/v1/offers", params={"network_class": c, "limit": 1}).json()["total"]
        for c in NETWORK_CLASSES
    ]
    assert sum(totals) == len(every_offer)


@pytest.mark.parametrize("gbps", [0, 0.5, 10, 100, 400, 1600, 3200, 1e6])
def test_min_network_gbps_keeps_exactly_the_offers_at_or_above_it(
    client: Client, every_offer: list[dict[str, Any]], gbps: float
) -> None:
    found = offers(client, min_network_gbps=gbps)
    assert all(o["network"]["gbps"] >= gbps for o in found)
    expected = {o["offer_id"] for o in every_offer if o["network"]["gbps"] >= gbps}
    assert {o["offer_id"] for o in found} == expected


def test_a_higher_minimum_never_returns_more(client: Client) -> None:
    sizes = [len(offers(client, min_network_gbps=g)) for g in (0, 10, 100, 800, 3200)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1] > 0


def test_network_filters_combine_with_each_other_and_the_gpu(
    client: Client, every_offer: list[dict[str, Any]]
) -> None:
    found = offers(client, gpu="H100", network_class="ethernet", min_network_gbps=50)
    assert found
    for offer in found:
        assert offer["gpu_id"].startswith("h100")
        assert offer["network"]["class"] == "ethernet" and offer["network"]["gbps"] >= 50
    by_gpu = {o["offer_id"] for o in offers(client, gpu="H100")}
    expected = {
        o["offer_id"]
        for o in every_offer
        if o["offer_id"] in by_gpu and o["network"]["class"] == "ethernet" and o["network"]["gbps"] >= 50
    }
    assert {o["offer_id"] for o in found} == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"network_class": "bogus"}, "network_class"),
        ({"network_class": "Infiniband-HDR"}, "network_class"),
        ({"min_network_gbps": -1}, "min_network_gbps"),
        ({"min_network_gbps": -0.001}, "min_network_gbps"),
        ({"min_network_gbps": "fast"}, "min_network_gbps"),
    ],
)
def test_bad_network_filter_is_400_naming_the_parameter(
    client: Client, params: dict[str, Any], field: str
) -> None:
    response = client.get("/v1/offers", params=params)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == field
