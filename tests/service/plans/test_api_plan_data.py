"""What a plan's data costs: a dataset whose size the job does not state is derived from the work
(token ids for text, ImageNet-sized JPEGs for images) and marked as derived, so it is stored and
moved at its size instead of "unknown (0)"."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from solver.costs.job_terms import IMAGE_BYTES

Client = TestClient[Any]
RESNET = {"kind": "train", "model": {"name": "ResNet-50"}, "samples": 1_281_167, "epochs": 90}
PRETRAIN = {"kind": "train", "model": {"name": "Llama 3.2 1B"}, "tokens": 10_000_000_000}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def test_an_image_dataset_is_derived_from_its_samples(client: Client) -> None:
    plan = _plan(client, RESNET)
    data = plan["estimate"]["data"]
    assert data["dataset_gb"] == pytest.approx(1_281_167 * IMAGE_BYTES / 1e9)
    assert data["dataset_gb"] == pytest.approx(138, rel=1e-6)  # ImageNet-1k's training archive
    assert data["dataset_derived"] is True
    assert "ImageNet" in data["dataset_rule"]
    assert "ImageNet" in plan["cost"]["assumptions"]["setup_usd"]
    assert plan["cost"]["breakdown"]["storage_usd"] > 0


def test_a_text_dataset_is_derived_from_its_tokens_as_token_ids(client: Client) -> None:
    data = _plan(client, PRETRAIN)["estimate"]["data"]
    assert data["dataset_gb"] == pytest.approx(10e9 * 4 / 1e9)  # a 128,256-token vocabulary: int32 ids
    assert data["dataset_derived"] is True
    assert "Megatron-LM" in data["dataset_rule"]


def test_a_stated_dataset_is_given_not_derived(client: Client) -> None:
    data = _plan(client, {**RESNET, "data": {"dataset_gb": 150}})["estimate"]["data"]
    assert data["dataset_gb"] == 150
    assert data["dataset_derived"] is False
    assert data["dataset_rule"] == "given"
