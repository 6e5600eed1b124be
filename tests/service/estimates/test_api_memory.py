"""POST /v1/memory end to end on the shipped GPU catalog."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]


def post(client: Client, body: Any) -> Any:
    return client.post("/v1/memory", json=body)


def test_inference_of_a_7b_model_fits_an_l4_but_70b_does_not_fit_one_h100(client: Client) -> None:
    small = post(
        client, {"kind": "batch_inference", "model": {"name": "meta-llama/Llama-2-7b-hf"}, "gpu": "L4"}
    )
    assert small.status_code == 200, small.text
    body = small.json()
    assert body["model"] == "Llama 2 7B"
    assert 12 < body["breakdown"]["weights"] < 13.5  # 6.74e9 params x 2 bytes
    assert body["band"]["low_gib"] <= body["per_gpu_gib"] <= body["band"]["high_gib"]
    assert [f["gpu_id"] for f in body["fits"]] == ["l4"] and body["fits"][0]["fits"]

    large = post(
        client, {"kind": "batch_inference", "model": {"name": "Llama 3 70B"}, "gpu": "h100-sxm"}
    ).json()
    assert large["per_gpu_gib"] > 130 and not large["fits"][0]["fits"] and large["fits"][0]["margin_gib"] < 0


def test_without_gpu_every_catalog_gpu_is_checked_largest_margin_first(client: Client) -> None:
    body = post(
        client, {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "method": "qlora", "precision": "nf4"}
    ).json()
    assert len(body["fits"]) == 56
    margins = [f["margin_gib"] for f in body["fits"]]
    assert margins == sorted(margins, reverse=True)


def test_alias_checks_every_variant(client: Client) -> None:
    body = post(client, {"kind": "batch_inference", "model": {"name": "Mistral 7B"}, "gpu": "H100"}).json()
    assert {"h100-sxm", "h100-pcie"} <= {f["gpu_id"] for f in body["fits"]}


def test_sharding_and_tensor_parallel_lower_per_gpu_memory(client: Client) -> None:
    base = {"kind": "train", "model": {"name": "Llama 3 8B"}, "gpu_count": 8}
    plain = post(client, base).json()["per_gpu_gib"]
    zero3 = post(client, base | {"sharding": "zero3"}).json()["per_gpu_gib"]
    tp8 = post(client, base | {"tp": 8}).json()["per_gpu_gib"]
    assert zero3 < plain and tp8 < plain


def test_explicit_architecture(client: Client) -> None:
    arch = {
        "params_b": 1.1,
        "layers": 22,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "attention_heads": 32,
        "kv_heads": 4,
        "vocab_size": 32000,
    }
    response = post(client, {"kind": "fine_tune", "model": arch, "gpu": "rtx-4090"})
    assert response.status_code == 200, response.text
    assert response.json()["fits"][0]["gpu_id"] == "rtx-4090"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "fine_tune", "model": {"name": "Lama 3 8B"}}, "model.name"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "batch_size": 0}, "batch_size"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "batch_size": "x"}, "batch_size"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "bogus": 1}, "bogus"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B", "extra": 1}}, "model.extra"),
        ({"kind": "fine_tune"}, "model"),
        ({"kind": "dance", "model": {"name": "Llama 3 8B"}}, "kind"),
        ({"kind": "train", "model": {"name": "Llama 3 8B"}, "method": "lora"}, "method"),
        (
            {"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "method": "qlora", "precision": "bf16"},
            "precision",
        ),
        ({"kind": "fine_tune", "model": {"name": "Llama 2 7B"}, "seq_len": 1_000_000}, "seq_len"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu": "Z9000"}, "gpu"),
        ({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}, "gpu_count": 3, "tp": 2}, "gpu_count"),
    ],
)
def test_bad_input_is_400_naming_the_field(client: Client, body: dict[str, Any], field: str) -> None:
    response = post(client, body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == field


def test_unknown_model_suggests_close_names(client: Client) -> None:
    body = post(client, {"kind": "fine_tune", "model": {"name": "Lama 3 8B"}}).json()
    assert "Llama 3 8B" in body["suggestions"]


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b"null", b'{"kind": 1}'])
def test_malformed_body_is_400(client: Client, raw: bytes) -> None:
    response = client.post("/v1/memory", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["field"]
