"""MIG slices in plans through POST /v1/plans: owned slices for serving and batch inference, never for
training; the choice says which slices on how many GPUs, and what a slice costs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.cli import main
from service.db.store import Store
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN

Client = TestClient[Any]
SMALL_AT_LOW_RATE = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 0.5,
    "request_mix": [{"input_tokens": 200, "output_tokens": 200, "share": 1}],
    "hours": 100,
    "acquisition": "own",
    "constraints": {"gpus": ["B200"], "mig": True},
}


def _b200_slices(store: Store) -> list[str]:
    return sorted(k for k, s in store.snapshot.mig_slices.items() if s.parent_gpu_id == "b200")


def test_a_small_model_at_a_low_rate_is_served_on_a_slice_of_an_owned_b200(
    client: Client, store: Store
) -> None:
    sliced = client.post("/v1/plans", json=SMALL_AT_LOW_RATE)
    assert sliced.status_code == 201, sliced.text
    (replica,) = sliced.json()["choice"]["replicas"]
    assert replica["gpu"].startswith("b200-mig-") and replica["acquisition"] == "own"
    mig = replica["mig"]
    assert mig["parent_gpu"] == "b200" and mig["slices"] == replica["replicas"] and mig["parent_gpus"] == 1
    assert mig["summary"] == f"{mig['slices']} × {mig['profile']} on one owned B200"
    # the same plan without `mig`: naming B200 names the whole GPU, dearer by the profile's count
    whole_body = {**SMALL_AT_LOW_RATE, "constraints": {"gpus": ["B200"]}}
    whole = client.post("/v1/plans", json=whole_body).json()
    (gpu,) = whole["choice"]["replicas"]
    assert gpu["gpu"] == "b200" and gpu["mig"] is None
    per_gpu = gpu["owned"]["usd_per_busy_gpu_hour"]
    assert replica["owned"]["usd_per_busy_gpu_hour"] == pytest.approx(per_gpu / mig["slices_per_gpu"])
    assert sliced.json()["cost"]["usd_per_hour"] < whole["cost"]["usd_per_hour"]
    assert f"/ {mig['slices_per_gpu']}" in replica["owned"]["assumptions"][0]  # the pricing rule is stated


def test_naming_a_gpu_admits_its_slices_only_with_mig(client: Client, store: Store) -> None:
    """Before: `constraints.gpus: ["B200"]` silently admitted the B200's slices."""
    body = {**SMALL_AT_LOW_RATE, "constraints": {"gpus": ["B200"], "exclude_gpus": _b200_slices(store)}}
    excluded = client.post("/v1/plans", json=body).json()
    plain = client.post("/v1/plans", json={**SMALL_AT_LOW_RATE, "constraints": {"gpus": ["B200"]}}).json()
    assert plain["cost"] == excluded["cost"]
    assert {r["gpu"] for r in plain["choice"]["replicas"]} == {"b200"}
    named = {**SMALL_AT_LOW_RATE, "constraints": {"gpus": ["B200 MIG 1g.23gb"]}}  # a slice by name: no flag
    (replica,) = client.post("/v1/plans", json=named).json()["choice"]["replicas"]
    assert replica["gpu"] == "b200-mig-1g-23gb"


def test_rejections_never_list_a_slice(client: Client, store: Store) -> None:
    plan = client.post("/v1/plans", json=SMALL_AT_LOW_RATE).json()
    assert not {r["gpu"] for r in plan["rejected"]} & set(store.snapshot.mig_slices)
    assert {r["gpu"] for r in plan["rejected"]} <= set(store.snapshot.gpus)


def test_the_fleet_mixes_slices_and_whole_gpus(client: Client) -> None:
    """Whole owned B200 are bought as 8-GPU servers (purchase units, issue 24), so the rate is one that
    fills whole servers with replicas and leaves a remainder for slices (capacities from the engine
    model, issue 23)."""
    body = {
        **SMALL_AT_LOW_RATE,
        "requests_per_s": 700,
        "request_mix": [
            {"input_tokens": 200, "output_tokens": 200, "share": 0.7},
            {"input_tokens": 1000, "output_tokens": 500, "share": 0.3},
        ],
    }
    plan = client.post("/v1/plans", json=body).json()
    kinds = {r["mig"] is None for r in plan["choice"]["replicas"]}
    assert kinds == {True, False}, plan["choice"]
    assert all(r["gpus"] % 8 == 0 for r in plan["choice"]["replicas"] if r["mig"] is None)
    assert plan["cost"]["usd_per_hour"] <= plan["best_single_type"]["usd_per_hour"] + 1e-9


def test_batch_inference_may_run_on_slices(client: Client) -> None:
    body = {
        "kind": "batch_inference",
        "model": {"name": "Llama-2-7b"},
        "tokens": 10_000_000,
        "acquisition": "own",
        "constraints": {"gpus": ["B200 MIG 1g.45gb"]},
    }
    plan = client.post("/v1/plans", json=body).json()
    choice = plan["choice"]
    assert choice["gpu"] == "b200-mig-1g-45gb" and choice["mig"]["profile"] == "1g.45gb"
    assert choice["mig"]["slices"] == choice["gpu_count"]
    assert choice["mig"]["parent_gpus"] == -(-choice["gpu_count"] // 4)
    assert plan["estimate"]["memory"]["capacity_gib"] == 45


def test_training_never_runs_on_slices(client: Client, store: Store) -> None:
    body = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.2 1B"},
        "method": "lora",
        "tokens": 10**8,
        "acquisition": "own",
        "constraints": {"gpus": ["B200"]},
    }
    plan = client.post("/v1/plans", json=body).json()
    used = {
        plan["choice"]["gpu"],
        *(a["gpu"] for a in plan["alternatives"]),
        *(p["gpu"] for p in plan["pareto"]),
    }
    assert used == {"b200"} and plan["choice"]["mig"] is None
    only_slices = {**body, "constraints": {"gpus": _b200_slices(store)}}
    refused = client.post("/v1/plans", json=only_slices)
    assert refused.status_code == 422


def test_the_cli_says_which_slices_on_which_gpu(
    cli_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "serving.json"
    path.write_text(json.dumps(SMALL_AT_LOW_RATE), encoding="utf-8")
    assert main(["plan", str(path), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert "on one owned B200" in out and "× 1g." in out


SLICE_SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,mig_profile
sliceco,s.h100.1g,H100 SXM,1,eu-1,0.30,1g.20gb
sliceco,s.h100.whole,H100 SXM,1,eu-1,2.50,
"""


@pytest.fixture(scope="module")
def sliced(fresh_db: Callable[[], str]) -> Iterator[Client]:
    """A store of its own with a sheet that rents H100 slices."""
    store = Store.open(fresh_db())
    with TestClient(create_app(Settings(db_path=":memory:", admin_token=TOKEN), store=store)) as client:
        response = client.post(
            "/v1/price-sheets",
            params={"source": "sliceco", "format": "rental_csv"},
            content=SLICE_SHEET.encode(),
            headers=AUTH,
        )
        assert response.status_code == 201, response.text
        yield client
    store.close()


def test_a_rented_slice_offer_is_listed_with_its_profile(sliced: Client) -> None:
    offers = sliced.get("/v1/offers", params={"provider": "sliceco"}).json()["items"]
    by_type = {o["instance_type"]: o for o in offers}
    assert by_type["s.h100.1g"]["mig_profile"] == "1g.20gb" and by_type["s.h100.1g"]["gpu_id"] == "h100-sxm"
    assert by_type["s.h100.1g"]["interconnect"] == "none" and by_type["s.h100.whole"]["mig_profile"] is None


def test_serving_rents_the_slice_when_it_is_cheaper(sliced: Client) -> None:
    body = {**SMALL_AT_LOW_RATE, "acquisition": "rent", "constraints": {"providers": ["sliceco"]}}
    plan = sliced.post("/v1/plans", json=body).json()
    (replica,) = plan["choice"]["replicas"]
    assert replica["gpu"] == "h100-sxm-mig-1g-20gb" and replica["acquisition"] == "rent"
    assert replica["offer"]["instance_type"] == "s.h100.1g"
    mig = replica["mig"]
    assert mig["parent_gpus"] is None and mig["summary"].endswith("H100 SXM GPUs rented from sliceco")


def test_training_never_rents_slices(sliced: Client) -> None:
    body = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.2 1B"},
        "method": "lora",
        "tokens": 10**7,
        "acquisition": "rent",
        "constraints": {"providers": ["sliceco"]},
    }
    plan = sliced.post("/v1/plans", json=body).json()
    assert plan["choice"]["gpu"] == "h100-sxm" and plan["choice"]["offer"]["instance_type"] == "s.h100.whole"


def test_a_profile_the_gpu_lacks_is_a_row_problem(sliced: Client) -> None:
    bad = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,mig_profile\n"
    bad += "sliceco,s.x,H100 SXM,1,eu-1,0.05,1g.23gb\n"
    response = sliced.post(
        "/v1/price-sheets",
        params={"source": "sliceco2", "format": "rental_csv"},
        content=bad.encode(),
        headers=AUTH,
    )
    assert response.status_code == 422
    ((problem,),) = [response.json()["problems"]]
    assert problem["line"] == 2 and problem["column"] == "mig_profile" and "1g.10gb" in problem["reason"]


FP8_BATCH = {
    "kind": "batch_inference",
    "model": {"name": "Llama-2-7b"},
    "tokens": 1_000_000,
    "seq_len": 512,
    "output_len": 128,
    "acquisition": "own",
    "precision": "fp8",
}


def _software_rejections(plan: dict[str, Any]) -> dict[str, str]:
    return {
        gpu["gpu"]: reason["detail"]
        for gpu in plan["rejected"]
        for reason in gpu["reasons"]
        if reason["reason"] == "software"
    }


def test_a_software_need_with_owned_slices_is_a_plan_told_under_the_parent(
    client: Client, store: Store
) -> None:
    response = client.post("/v1/plans", json=FP8_BATCH)
    assert response.status_code == 201, response.text
    rejected = _software_rejections(response.json())
    assert rejected and not set(rejected) & set(store.snapshot.mig_slices)
    assert set(rejected) <= set(store.snapshot.gpus)


def test_serving_with_software_requires_and_either_is_a_plan(client: Client, store: Store) -> None:
    body = {**SMALL_AT_LOW_RATE, "acquisition": "either", "software": {"requires": ["flash_attention_3"]}}
    del body["constraints"]
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    rejected = _software_rejections(response.json())
    assert "a100-80gb-sxm" in rejected and not set(rejected) & set(store.snapshot.mig_slices)


def test_the_plan_page_with_a_software_need_and_slices_answers(client: Client) -> None:
    query = {k: v for k, v in FP8_BATCH.items() if k != "model"} | {"model": "Llama-2-7b"}
    response = client.get("/plan", params=query)
    assert response.status_code == 200, response.text
    assert "Save this plan" in response.text  # a plan, not an error (the page stores it on Save)


def test_a_rented_slice_with_a_software_need_is_a_plan(sliced: Client) -> None:
    body = {
        **SMALL_AT_LOW_RATE,
        "acquisition": "rent",
        "constraints": {"providers": ["sliceco"]},
        "software": {"requires": ["flash_attention_3"]},
    }
    response = sliced.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    (replica,) = response.json()["choice"]["replicas"]
    assert replica["gpu"] == "h100-sxm-mig-1g-20gb"
