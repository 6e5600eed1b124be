"""JSON bodies are decoded strictly on every estimate and plan route: a value of the wrong JSON type is
a 400 problem naming its field (never coerced: ``0`` is not ``false``, ``"4"`` is not ``4``), and so
is an unknown field, at the top level or nested."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

JOB = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "batch_size": 4,
    "seq_len": 2048,
}
VALID = {
    "/v1/plans": JOB | {"tokens": 1_000_000},
    # 8 GPUs: the fine-tuning stack is data-parallel only, so a step needs at least 8 sequences
    "/v1/throughput": JOB | {"gpu": "h100-sxm", "gpu_count": 8, "batch_size": 64},
    "/v1/memory": JOB | {"gpu": "h100-sxm"},
}
OK = {"/v1/plans": 201, "/v1/throughput": 200, "/v1/memory": 200}

# (field, wrong value, the field the problem names)
EVERY_ROUTE = [
    ("optimizer_in_backward", 0, "optimizer_in_backward"),
    ("optimizer_in_backward", "false", "optimizer_in_backward"),
    ("batch_size", "4", "batch_size"),
    ("batch_size", 4.0, "batch_size"),
    ("seq_len", True, "seq_len"),
    ("lora_rank", "8", "lora_rank"),
    ("lora_dropout", "0.1", "lora_dropout"),
    ("gradient_accumulation_steps", [1], "gradient_accumulation_steps"),
    ("recompute", 1, "recompute"),
    ("model", {"name": 7}, "model.name"),
    ("efficiency", {"mfu": "0.4"}, "efficiency.mfu"),
    ("lora_targets", ["q_proj", 3], "lora_targets[1]"),
]
PER_ROUTE = {
    "/v1/plans": [
        ("tokens", True, "tokens"),
        ("tokens", "1000000", "tokens"),
        ("epochs", "1", "epochs"),
        ("constraints", {"max_gpus": "8"}, "constraints.max_gpus"),
        ("constraints", {"spot": 1}, "constraints.spot"),
        ("constraints", {"gpus": [5]}, "constraints.gpus[0]"),
    ],
    "/v1/throughput": [
        ("gpu_count", True, "gpu_count"),
        ("gpu_count", "8", "gpu_count"),
        ("gpus_per_instance", 8.0, "gpus_per_instance"),
        ("network", {"class": "ethernet", "gbps": "25"}, "network.gbps"),
        ("network", {"class": 1, "gbps": 25}, "network.class"),
    ],
    "/v1/memory": [
        ("tp", 1.0, "tp"),
        ("gpu_count", "1", "gpu_count"),
        ("gpu", 5, "gpu"),
    ],
}
CASES = [(route, *case) for route in VALID for case in EVERY_ROUTE] + [
    (route, *case) for route, cases in PER_ROUTE.items() for case in cases
]
UNKNOWN = [
    (route, body | extra, field)
    for route, body in VALID.items()
    for extra, field in (
        ({"bogus": 1}, "bogus"),
        ({"model": {"name": "Llama 3.1 8B", "extra": 1}}, "model.extra"),
        ({"efficiency": {"mfu": 0.4, "speed": 1}}, "efficiency.speed"),
    )
] + [
    ("/v1/plans", VALID["/v1/plans"] | {"constraints": {"deadline": 4}}, "constraints.deadline"),
    (
        "/v1/throughput",
        VALID["/v1/throughput"] | {"network": {"class": "roce", "gbps": 1, "x": 1}},
        "network.x",
    ),
    ("/v1/throughput", VALID["/v1/throughput"] | {"tokens": 1000}, "tokens"),
    ("/v1/memory", VALID["/v1/memory"] | {"tokens": 1000}, "tokens"),
]


def assert_problem_naming(response: Any, field: str) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 400
    assert problem["field"] == field
    assert field in problem["detail"]
    assert [e["field"] for e in problem["errors"]] == [field]


@pytest.mark.parametrize("route", VALID)
def test_the_valid_bodies_are_accepted(client: Client, route: str) -> None:
    response = client.post(route, json=VALID[route])
    assert response.status_code == OK[route], response.text


@pytest.mark.parametrize(("route", "field", "value", "named"), CASES)
def test_wrong_json_type_is_400_naming_the_field(
    client: Client, route: str, field: str, value: Any, named: str
) -> None:
    assert_problem_naming(client.post(route, json=VALID[route] | {field: value}), named)


@pytest.mark.parametrize(("route", "body", "named"), UNKNOWN)
def test_unknown_field_is_400_naming_it(client: Client, route: str, body: dict[str, Any], named: str) -> None:
    assert_problem_naming(client.post(route, json=body), named)


def test_json_content_type_with_parameters_is_still_strict(client: Client) -> None:
    body = msgspec.json.encode(VALID["/v1/memory"] | {"batch_size": "4"})
    response = client.post(
        "/v1/memory", content=body, headers={"content-type": "application/json; charset=utf-8"}
    )
    assert_problem_naming(response, "batch_size")


@pytest.mark.parametrize("route", VALID)
def test_upper_case_json_media_type_is_as_strict(client: Client, route: str) -> None:
    body = msgspec.json.encode(VALID[route] | {"batch_size": "4"})
    response = client.post(route, content=body, headers={"content-type": "APPLICATION/JSON"})
    assert_problem_naming(response, "batch_size")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/octet-stream"]
)
def test_a_non_json_content_type_does_not_bypass_strict_decoding(client: Client, content_type: str) -> None:
    body = msgspec.json.encode(VALID["/v1/memory"] | {"optimizer_in_backward": 0, "batch_size": "4"})
    response = client.post("/v1/memory", content=body, headers={"content-type": content_type})
    assert response.status_code in (400, 415), response.text


@pytest.mark.parametrize("path", sorted(VALID))
def test_a_key_named_twice_is_a_400_naming_it(client: Client, path: str) -> None:
    body = msgspec.json.encode(VALID[path])[:-1] + b', "batch_size": 8}'
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "batch_size" and "twice" in response.json()["detail"]
    nested = body.replace(b'"name":', b'"name": "x", "name":', 1)
    response = client.post(path, content=nested, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["field"] == "name", response.text


def test_tokens_and_samples_together_is_a_400_naming_both(client: Client) -> None:
    response = client.post("/v1/plans", json=VALID["/v1/plans"] | {"samples": 1000})
    assert response.status_code == 400, response.text
    assert "tokens" in response.json()["detail"] and "samples" in response.json()["detail"]


def test_output_len_beyond_seq_len_is_a_400(client: Client) -> None:
    body = {
        "kind": "batch_inference",
        "model": {"name": "Llama-2-7b"},
        "tokens": 1_000_000,
        "seq_len": 4096,
        "output_len": 10_000_000,
    }
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "output_len" and "seq_len" in response.json()["detail"]
    assert client.post("/v1/plans", json=body | {"output_len": 4096}).status_code == 201
