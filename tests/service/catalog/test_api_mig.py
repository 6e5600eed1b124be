"""MIG slices in the catalog: GET /v1/gpus?mig=true, GET /v1/gpus/{slice}, and the parents' lists."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.cli import main

Client = TestClient[Any]


def test_the_default_listing_stays_whole_gpus_naming_their_slices(client: Client) -> None:
    body = client.get("/v1/gpus").json()
    assert body["total"] == 56 and all(g["parent_gpu_id"] is None for g in body["items"])
    b200 = next(g for g in body["items"] if g["gpu_id"] == "b200")
    assert "b200-mig-1g-23gb" in b200["mig_slices"] and len(b200["mig_slices"]) == 6
    mi300x = next(g for g in body["items"] if g["gpu_id"] == "mi300x")
    assert mi300x["mig_slices"] == []


def test_mig_true_lists_slices_with_parent_and_profile(client: Client) -> None:
    body = client.get("/v1/gpus", params={"mig": "true", "limit": 1000}).json()
    assert body["total"] == 75 == len(body["items"])
    assert all(g["parent_gpu_id"] and g["mig_profile"] and g["nvlink"] is False for g in body["items"])
    one = next(g for g in body["items"] if g["gpu_id"] == "b200-mig-1g-23gb")
    assert one["parent_gpu_id"] == "b200" and one["mig_profile"] == "1g.23gb" and one["memory_gib"] == 23
    assert one["mig"] == {"compute_fraction": pytest.approx(1 / 7), "memory_fraction": 0.125, "max_count": 7}
    assert one["bf16_tflops"] == pytest.approx(2250 / 7, abs=0.1)


def test_filters_apply_to_slices(client: Client) -> None:
    body = client.get("/v1/gpus", params={"mig": "true", "min_memory_gib": 100, "limit": 1000}).json()
    assert body["items"] and all(g["memory_gib"] >= 100 for g in body["items"])
    assert {g["parent_gpu_id"] for g in body["items"]} <= {"b200", "h200-sxm", "h200-nvl"}
    amd = client.get("/v1/gpus", params={"mig": "true", "vendor": "AMD"}).json()
    assert amd["total"] == 0 and amd["items"] == []
    paged = client.get("/v1/gpus", params={"mig": "true", "limit": 10, "offset": 70}).json()
    assert paged["total"] == 75 and len(paged["items"]) == 5


def test_one_slice_by_id_or_name(client: Client) -> None:
    for key in ("b200-mig-1g-23gb", "B200 MIG 1g.23gb"):
        response = client.get(f"/v1/gpus/{key}")
        assert response.status_code == 200, key
        assert response.json()["gpu_id"] == "b200-mig-1g-23gb"
    assert client.get("/v1/gpus/b200-mig-9g-1gb").status_code == 404


def test_cli_lists_slices(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--db", cli_db, "--mig"]) == 0
    out = capsys.readouterr().out
    assert "b200-mig-1g-23gb" in out and "1g.23gb" in out and "75 MIG slices" in out
