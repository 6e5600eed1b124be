"""Software compatibility in plans: requirements and stacks keep jobs and fleets off GPUs that cannot
run them, and the rejections name the missing piece."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.cli import main

Client = TestClient[Any]
LORA_8B = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora", "tokens": 2_000_000_000}
SERVING = {
    "kind": "serving",
    "model": {"name": "Llama-2-7b"},
    "requests_per_s": 20,
    "request_mix": [{"input_tokens": 200, "output_tokens": 200, "share": 1.0}],
    "hours": 100,
}


def _architectures(client: Client) -> dict[str, dict[str, Any]]:
    return {
        g["gpu_id"]: g["software"] for g in client.get("/v1/gpus", params={"limit": 1000}).json()["items"]
    }


def _software_reasons(plan: dict[str, Any]) -> dict[str, str]:
    return {
        gpu["gpu"]: reason["detail"]
        for gpu in plan["rejected"]
        for reason in gpu["reasons"]
        if reason["reason"] == "software"
    }


@pytest.mark.parametrize("acquisition", ["rent", "either"])
def test_flash_attention_3_never_lands_before_hopper(client: Client, acquisition: str) -> None:
    body = {**LORA_8B, "acquisition": acquisition, "software": {"requires": ["flash_attention_3"]}}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan, software = response.json(), _architectures(client)
    used = [
        plan["choice"]["gpu"],
        *(a["gpu"] for a in plan["alternatives"]),
        *(p["gpu"] for p in plan["pareto"]),
    ]
    assert {software[g]["architecture"] for g in used} == {"hopper"}
    reasons = _software_reasons(plan)
    assert "needs flash_attention_3, which runs on NVIDIA Hopper" in reasons["a100-80gb-sxm"]
    assert reasons["a100-80gb-sxm"].endswith("this is NVIDIA Ampere")
    assert "this is AMD CDNA3" in reasons["mi300x"]


def test_stack_cuda_never_lands_on_amd(client: Client) -> None:
    software = _architectures(client)
    free = client.post("/v1/plans", json={**LORA_8B, "software": {"stack": "rocm"}}).json()
    assert software[free["choice"]["gpu"]]["stack"] == "rocm"  # there are AMD offers to avoid
    plan = client.post(
        "/v1/plans", json={**LORA_8B, "objective": "time", "software": {"stack": "cuda"}}
    ).json()
    used = [plan["choice"]["gpu"], *(p["gpu"] for p in plan["pareto"])]
    assert all(software[g]["stack"] == "cuda" for g in used)
    assert _software_reasons(plan)["mi300x"] == "needs the cuda stack; this AMD GPU runs rocm"


def test_precision_fp8_implies_fp8_training_support(client: Client) -> None:
    plan = client.post("/v1/plans", json={**LORA_8B, "precision": "fp8"}).json()
    software = _architectures(client)
    assert "fp8_training" in software[plan["choice"]["gpu"]]["supports"]
    detail = _software_reasons(plan)["a100-80gb-sxm"]
    assert detail.startswith(
        "needs fp8_training (implied by precision fp8), which runs on NVIDIA Ada Lovelace"
    )


def test_no_gpu_runs_the_software_is_422_naming_it(client: Client) -> None:
    body = {**LORA_8B, "software": {"stack": "rocm", "requires": ["flash_attention_3"]}}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 422
    rejected = {g["gpu"]: g["reasons"] for g in response.json()["rejected"]}
    assert any(r["reason"] == "software" and "flash_attention_3" in r["detail"] for r in rejected["mi300x"])
    assert any(r["reason"] == "software" and "rocm stack" in r["detail"] for r in rejected["h100-sxm"])


def test_serving_fleet_needing_tensorrt_llm_stays_on_nvidia(client: Client) -> None:
    body = {**SERVING, "software": {"requires": ["tensorrt_llm"]}}
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan, software = response.json(), _architectures(client)
    assert all("tensorrt_llm" in software[r["gpu"]]["supports"] for r in plan["choice"]["replicas"])
    assert "needs tensorrt_llm" in _software_reasons(plan)["mi300x"]
    assert "this is NVIDIA Turing" in _software_reasons(plan)["t4"]


def test_unknown_requirement_is_a_400_naming_the_field(client: Client) -> None:
    response = client.post("/v1/plans", json={**LORA_8B, "software": {"requires": ["cuda_magic"]}})
    assert response.status_code == 400 and "software.requires" in response.text


def test_cli_plan_names_the_software_rejection(
    cli_db: str, body_file: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {**LORA_8B, "software": {"stack": "rocm", "requires": ["tensorrt_llm"]}}
    assert main(["plan", body_file(body), "--db", cli_db]) == 3
    err = capsys.readouterr().err
    assert "software" in err and "tensorrt_llm" in err
