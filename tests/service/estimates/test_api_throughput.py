"""POST /v1/throughput end to end on the shipped measured profiles."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]


def post(client: Client, body: dict[str, Any]) -> Any:
    return client.post("/v1/throughput", json=body)


def test_exact_measured_row_is_returned_with_its_source(client: Client) -> None:
    rows = client.get(
        "/v1/profiles",
        params={"gpu": "a100-80gb-sxm", "model": "ResNet-50", "gpu_count": 8, "precision": "fp16_amp"},
    ).json()["items"]
    assert rows, "the shipped Lambda suite measures ResNet-50 on 8x A100 80GB SXM"
    body = {
        "kind": "train",
        "model": {"name": "ResNet-50"},
        "gpu": "a100-80gb-sxm",
        "gpu_count": 8,
        "precision": "fp16",
    }
    response = post(client, body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["provenance"] == "measured" and result["unit"] == "images_per_s"
    cited = {s["profile_id"] for s in result["sources"]}
    assert cited & {r["profile_id"] for r in rows}
    assert result["interconnect"] == "nvswitch" and result["interconnect_derived"] is True


def test_unmeasured_config_is_derived_and_says_how(client: Client) -> None:
    body = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3 8B"},
        "method": "lora",
        "gpu": "l40s",
        "gpu_count": 2,
    }
    result = post(client, body).json()
    assert result["provenance"] == "derived"
    assert result["value"] > 0 and result["unit"] == "tokens_per_s"
    assert result["sources"] and result["method"] and result["confidence"] in ("high", "medium", "low")


def test_more_gpus_are_not_slower(client: Client) -> None:
    base = {"kind": "train", "model": {"name": "Qwen2.5-7B"}, "gpu": "h100-sxm", "interconnect": "nvswitch"}
    one = post(client, base | {"gpu_count": 1, "interconnect": "none"}).json()["value"]
    eight = post(client, base | {"gpu_count": 8}).json()["value"]
    assert eight > one


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu": "H100"}, 400, "gpu"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu": "Z9000"}, 400, "gpu"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}}, 400, "gpu"),
        (
            {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu": "l4", "interconnect": "warp"},
            400,
            "interconnect",
        ),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu": "t4", "precision": "fp8"}, 422, None),
    ],
)
def test_errors(client: Client, body: dict[str, Any], status: int, field: str | None) -> None:
    response = post(client, body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    if field:
        assert response.json()["field"] == field
