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
    base = {"kind": "train", "model": {"name": "Qwen2.5-1.5B"}, "gpu": "h100-sxm", "interconnect": "nvswitch"}
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


def test_a_precision_the_gpu_lacks_is_422_naming_what_it_runs(client: Client) -> None:
    body = {"kind": "train", "model": {"name": "ViT-L/16"}, "gpu": "v100-16gb", "batch_size": 64}
    refused = post(client, body)
    assert refused.status_code == 422, refused.text
    assert "V100 16GB has no bf16 tensor cores; it runs fp32, fp16" in refused.json()["detail"]
    assert post(client, body | {"precision": "fp16"}).status_code == 200


def test_a_layout_search_on_a_gpu_without_the_precision_is_422_not_500(client: Client) -> None:
    # The layout search rated a tiny model's layouts on the M60 (fp32 only) before any precision
    # check ran and crashed on the missing bf16 rate (schemathesis found it).
    tiny = {"params_b": 0.001, "layers": 1, "hidden_size": 64, "intermediate_size": 256, "attention_heads": 1,
            "kv_heads": 1, "head_dim": 64, "vocab_size": 64, "max_seq_len": 64}  # fmt: skip
    body = {"kind": "train", "model": tiny, "gpu": "m60", "seq_len": 64, "batch_size": 1}
    refused = post(client, body)
    assert refused.status_code == 422, refused.text
    assert "M60 has no bf16 tensor cores" in refused.json()["detail"]
