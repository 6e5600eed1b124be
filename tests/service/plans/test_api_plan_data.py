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
    assert "ImageNet" in plan["cost"]["assumptions"]["data_staging"]
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


LONG = {  # examples/workloads/long.json with a 4 TB dataset
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "micro_batch": 4,
    "seq_len": 4096,
    "tokens": 300_000_000_000,
    "constraints": {"gpus": ["H100 SXM"], "max_gpus": 64, "deadline_hours": 300},
    "data": {"dataset_gb": 4000},
}


def test_a_4_tb_dataset_is_staged_once_not_downloaded_by_every_instance(client: Client) -> None:
    """Issue 24: a 4 TB dataset was downloaded to each of the plan's nodes as setup."""
    plan = _plan(client, LONG)
    data, cost, units = plan["estimate"]["data"], plan["cost"], plan["choice"]["instances"]
    assert units > 1
    assert data["staged_once"] is True
    assert data["staging_hours"] == pytest.approx(4000 * 8 / 5 / 3600)  # at the neocloud's 5 Gbit/s
    staging = cost["assumptions"]["data_staging"]
    assert "staged once" in staging and f"each of the {units} instance(s) would cost $" in staging
    assert "dataset staged once" in cost["assumptions"]["setup_usd"]
    assert cost["breakdown"]["setup_usd"] < plan["choice"]["offer"]["price_per_hour_usd"] * units * 0.5


def test_marketplace_hosts_share_no_storage_so_each_downloads_its_copy(client: Client) -> None:
    body = {**RESNET, "constraints": {"providers": ["vast"]}}
    plan = _plan(client, body)
    assert plan["estimate"]["data"]["staged_once"] is False
    assert "no storage shared" in plan["cost"]["assumptions"]["data_staging"]
