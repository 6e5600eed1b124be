"""The OpenAPI document publishes the fields added to the estimate, plan and offer answers, and live
answers carry exactly the properties their published component lists (all the required ones)."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from litestar.testing import TestClient

from solver.catalog.network import NETWORK_CLASSES
from solver.optimise.warnings import WarningCode

Client = TestClient[Any]

EXPECTED_FIELDS = {
    "ThroughputResponse": {
        "workload_class",
        "stack",
        "efficiency",
        "band",
        "scaling",
        "gpus_per_instance",
        "network",
    },
    "ThroughputRequest": {"network", "gpus_per_instance", "efficiency", "stack"},
    "MemoryResponse": {
        "recompute",
        "allocated_gib",
        "reserved_gib",
        "fit_counter",
        "peak_phase",
        "host_ram_gib",
    },
    "PlanOut": {"warnings"},
    "EstimateOut": {"hours_band", "scaling"},
    "CostOut": {"total_usd_band"},
    "ChoiceOut": {"recompute"},
    "ThroughputOut": {"workload_class", "stack", "efficiency", "band"},
    "OfferOut": {"network"},
    "Network": {"class", "gbps", "derived", "rule"},
    "PlanWarning": {"code", "message"},
    "ScalingEstimate": {"efficiency", "communication_fraction", "bottleneck", "method"},
    "Band": {"low", "high"},
}


@pytest.fixture(scope="module")
def document(client: Client) -> dict[str, Any]:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    spec: dict[str, Any] = response.json()
    return spec


def component(document: dict[str, Any], name: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["components"]["schemas"][name]
    return schema


def refers_to(node: dict[str, Any], name: str) -> bool:
    target = f"#/components/schemas/{name}"
    return node.get("$ref") == target or any(option.get("$ref") == target for option in node.get("oneOf", []))


@pytest.mark.parametrize("name", EXPECTED_FIELDS)
def test_new_fields_are_published_and_required(document: dict[str, Any], name: str) -> None:
    schema = component(document, name)
    assert EXPECTED_FIELDS[name] <= set(schema["properties"]), name
    if not name.endswith("Request"):
        assert EXPECTED_FIELDS[name] <= set(schema["required"]), name


def test_nested_fields_point_at_their_components(document: dict[str, Any]) -> None:
    throughput = component(document, "ThroughputResponse")["properties"]
    assert refers_to(throughput["band"], "Band") and refers_to(throughput["scaling"], "ScalingEstimate")
    assert refers_to(throughput["network"], "Network")
    assert refers_to(component(document, "OfferOut")["properties"]["network"], "Network")
    assert refers_to(component(document, "EstimateOut")["properties"]["hours_band"], "Band")
    assert refers_to(component(document, "EstimateOut")["properties"]["scaling"], "ScalingEstimate")
    assert refers_to(component(document, "CostOut")["properties"]["total_usd_band"], "Band")
    warnings = component(document, "PlanOut")["properties"]["warnings"]
    assert warnings["type"] == "array" and refers_to(warnings["items"], "PlanWarning")


def test_enums_list_every_code_and_class(document: dict[str, Any]) -> None:
    code = component(document, "PlanWarning")["properties"]["code"]
    assert set(code["enum"]) == set(typing.get_args(WarningCode))
    network_class = component(document, "Network")["properties"]["class"]
    assert set(network_class["enum"]) == set(NETWORK_CLASSES)
    bottleneck = component(document, "ScalingEstimate")["properties"]["bottleneck"]
    assert set(bottleneck["enum"]) == {"none", "intra_instance", "inter_instance", "pipeline_bubble"}


def test_offer_network_filters_are_published(document: dict[str, Any]) -> None:
    parameters = {p["name"]: p for p in document["paths"]["/v1/offers"]["get"]["parameters"]}
    network_class = parameters["network_class"]
    assert network_class["in"] == "query" and network_class.get("required") is not True
    options = network_class["schema"].get("oneOf", [network_class["schema"]])
    assert any(set(o.get("enum", ())) - {None} == set(NETWORK_CLASSES) for o in options)
    gbps = parameters["min_network_gbps"]
    assert gbps["in"] == "query"
    assert gbps["schema"].get("minimum", gbps["schema"].get("exclusiveMinimum")) == 0


def _assert_matches(document: dict[str, Any], name: str, answer: dict[str, Any]) -> None:
    schema = component(document, name)
    assert set(schema["required"]) <= set(answer), (name, set(schema["required"]) - set(answer))
    assert set(answer) <= set(schema["properties"]), (name, set(answer) - set(schema["properties"]))


def test_live_answers_carry_the_published_properties(client: Client, document: dict[str, Any]) -> None:
    job = {"kind": "train", "model": {"name": "Llama 3 8B"}, "seq_len": 2048}
    throughput = client.post(
        "/v1/throughput", json=job | {"gpu": "h100-sxm", "gpu_count": 16, "gpus_per_instance": 8}
    ).json()
    _assert_matches(document, "ThroughputResponse", throughput)
    _assert_matches(document, "ScalingEstimate", throughput["scaling"])
    _assert_matches(document, "Network", throughput["network"])
    _assert_matches(document, "MemoryResponse", client.post("/v1/memory", json=job).json())
    offer = client.get("/v1/offers", params={"limit": 1}).json()["items"][0]
    _assert_matches(document, "OfferOut", offer)
    _assert_matches(document, "Network", offer["network"])
    response = client.post("/v1/plans", json=job | {"tokens": 10**9})
    assert response.status_code == 201, response.text
    plan = response.json()
    _assert_matches(document, "PlanOut", plan)
    _assert_matches(document, "EstimateOut", plan["estimate"])
    _assert_matches(document, "CostOut", plan["cost"])
    _assert_matches(document, "ChoiceOut", plan["choice"])
    for warning in plan["warnings"]:
        _assert_matches(document, "PlanWarning", warning)
