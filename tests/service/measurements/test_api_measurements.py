"""POST/GET /v1/measurements end to end on the shipped catalog: real tool outputs (the fixtures of
tests/pricing/measurements, attributed in their README) imported, and plans re-made on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH
from tests.service.measurements.test_api_serving_formats import REFUSED_UPLOADS

Client = TestClient[Any]
FIXTURES = Path(__file__).parents[2] / "pricing" / "measurements" / "fixtures"
VLLM = (FIXTURES / "vllm_bench_llama32_3b_4xl40s_inf.json").read_bytes()
TITAN = (FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log").read_bytes()
MEGATRON = (FIXTURES / "megatron_gpt_6b_fp8_8gpu.log").read_bytes()
MEGATRON_PARAMS = {
    "gpu": "H100 SXM",
    "gpu_count": 8,
    "model": "Llama 2 7B",
    "seq_len": 4096,
    "precision": "fp8",
}
TRAINER = (FIXTURES / "hf_trainer_state_qwen25_05b.json").read_bytes()
TRAINER_PARAMS = {"gpu": "A100 80GB SXM", "gpu_count": 1, "model": "Qwen/Qwen2.5-0.5B", "seq_len": 1024}
TITAN_PARAMS = {"gpu": "H100 SXM", "gpu_count": 8, "model": "Llama 3 8B", "seq_len": 8192, "batch_size": 1}
SERVING = {
    "kind": "serving",
    "model": {"name": "Llama 3.2 3B"},
    "requests_per_s": 20,
    "request_mix": [{"input_tokens": 1000, "output_tokens": 267, "share": 1}],
    "constraints": {"gpus": ["l40s"]},
    "hours": 10,
}
PRETRAIN_8B = {
    "kind": "train",
    "model": {"name": "Llama 3 8B"},
    "batch_size": 1,
    "seq_len": 8192,
    "tokens": 5_000_000_000,
    # at ~6,300 tokens/s per GPU, fewer than 8 GPUs miss the deadline: the plan runs the log's setup
    "constraints": {"gpus": ["H100 SXM"], "max_gpus": 8, "deadline_hours": 30},
}


def upload(client: Client, fmt: str, body: bytes, **params: Any) -> Any:
    return client.post("/v1/measurements", params={"format": fmt, **params}, content=body, headers=AUTH)


def _class(plan: dict[str, Any]) -> dict[str, Any]:
    """The request class's share on the plan's one-GPU L40S replicas (each offer is a replica type)."""
    shares = [
        {**r["classes"][0], "tp": r["tp"]}
        for r in plan["choice"]["replicas"]
        if r["gpu"] == "l40s" and r["tp"] == 1
    ]
    assert shares, plan["choice"]["replicas"]
    assert all({**s, "share_of_class": 0} == {**shares[0], "share_of_class": 0} for s in shares)
    return shares[0]


def test_a_vllm_result_turns_a_derived_serving_capacity_into_a_measured_one(admin: Client) -> None:
    before = admin.post("/v1/plans", json=SERVING)
    assert before.status_code == 201, before.text
    assert _class(before.json())["capacity_provenance"] == "derived"
    imported = upload(admin, "vllm_bench", VLLM, source="l40s-bench", replicas=4)
    assert imported.status_code == 201, imported.text
    report = imported.json()
    (run,) = report["measurements"]
    assert (report["rows"], report["replaced_rows"], run["gpu"], run["tp"], run["kind"]) == (
        1,
        0,
        "NVIDIA L40S",
        1,
        "serving",
    )
    assert run["requests_per_s"] == pytest.approx(43.024591101204344 / 4)
    after = _class(admin.post("/v1/plans", json=SERVING).json())
    assert (after["capacity_provenance"], after["tp"]) == ("measured", 1)
    assert after["capacity_requests_per_s"] == pytest.approx(43.024591101204344 / 4)
    assert "l40s-bench" in after["capacity_method"]
    assert (after["capacity_source"], _class(before.json())["capacity_source"]) == ("l40s-bench", None)


def test_re_importing_a_source_replaces_its_rows_and_keeps_the_history(admin: Client) -> None:
    first = upload(admin, "vllm_bench", VLLM, source="again", replicas=4).json()
    second = upload(admin, "vllm_bench", VLLM, source="again", replicas=2).json()
    assert (second["version"] > first["version"], second["replaced_rows"]) == (True, 1)
    current = admin.get("/v1/measurements", params={"source": "again"}).json()
    assert [m["version"] for m in current["items"]] == [second["version"]]
    assert current["items"][0]["tp"] == 2
    history = admin.get("/v1/measurements", params={"source": "again", "history": True}).json()
    assert [(m["version"], m["current"]) for m in history["items"]] == [
        (second["version"], True),
        (first["version"], False),
    ]


def test_a_torchtitan_log_makes_the_training_plan_measured_and_cites_the_upload(admin: Client) -> None:
    before = admin.post("/v1/plans", json=PRETRAIN_8B)
    assert before.status_code == 201, before.text
    assert before.json()["estimate"]["throughput"]["route"] != "measured"
    imported = upload(admin, "torchtitan_log", TITAN, source="titan-8b", **TITAN_PARAMS)
    assert imported.status_code == 201, imported.text
    plan = admin.post("/v1/plans", json=PRETRAIN_8B).json()
    assert (plan["choice"]["gpu"], plan["choice"]["gpu_count"]) == ("h100-sxm", 8)
    throughput = plan["estimate"]["throughput"]
    assert throughput["route"] == "measured"
    assert [s["source"] for s in throughput["sources"]] == ["titan-8b"]
    assert throughput["value"] == pytest.approx((6321 + 6300) / 2 * 8)
    memory = plan["estimate"]["memory"]
    assert (memory["measured_peak_gib"], memory["measured_peak_source"]) == (30.89, "titan-8b")
    assert "measured_peak_gib" not in before.json()["estimate"]["memory"] or (
        before.json()["estimate"]["memory"]["measured_peak_gib"] is None
    )


def test_a_trainer_state_is_stored_as_a_fine_tuning_throughput_row(admin: Client) -> None:
    answer = upload(
        admin, "hf_trainer", TRAINER, source="qwen-ft", max_memory_reserved_gib=21.5, **TRAINER_PARAMS
    )
    assert answer.status_code == 201, answer.text
    (run,) = answer.json()["measurements"]
    assert (run["kind"], run["task"], run["method"], run["peak_memory_gib"]) == (
        "training",
        "fine_tune",
        "full",
        21.5,
    )
    assert run["tokens_per_s"] == pytest.approx(23.917 * 1024)
    assert run["row"].startswith(
        f"throughput row {run['row_id']}: Qwen2.5-0.5B fine_tune on 1x a100-80gb-sxm"
    )


@pytest.mark.parametrize(
    ("fmt", "body", "params", "field"),
    [
        ("vllm_bench", VLLM[: len(VLLM) // 2], {"replicas": 4}, "file"),  # truncated
        ("vllm_bench", TITAN, {"replicas": 4}, "file"),  # another tool's file
        ("vllm_bench", VLLM.replace(b'"gpu": "4xNVIDIA_L40S", ', b""), {"tp": 1}, "gpu"),  # no GPU
        ("vllm_bench", VLLM.replace(b"4xNVIDIA_L40S", b"4xZ9000"), {"replicas": 4}, "gpu"),  # unknown GPU
        ("torchtitan_log", TITAN[:200], TITAN_PARAMS, "file"),  # truncated to one step line
        ("torchtitan_log", VLLM, TITAN_PARAMS, "file"),
        ("torchtitan_log", TITAN, {k: v for k, v in TITAN_PARAMS.items() if k != "gpu"}, "gpu"),
        ("torchtitan_log", TITAN, {**TITAN_PARAMS, "model": "NoSuchModel-13B"}, "model"),
        ("megatron_log", MEGATRON[:400], MEGATRON_PARAMS, "file"),  # truncated to one iteration line
        ("megatron_log", TRAINER, MEGATRON_PARAMS, "file"),
        ("megatron_log", MEGATRON, {k: v for k, v in MEGATRON_PARAMS.items() if k != "gpu"}, "gpu"),
        ("hf_trainer", TRAINER[:3000], TRAINER_PARAMS, "file"),
        ("hf_trainer", VLLM, TRAINER_PARAMS, "file"),
        ("hf_trainer", TRAINER, {k: v for k, v in TRAINER_PARAMS.items() if k != "gpu"}, "gpu"),
        *REFUSED_UPLOADS,
    ],
)
def test_a_file_that_cannot_be_used_is_a_422_naming_the_field_and_stores_nothing(
    admin: Client, fmt: str, body: bytes, params: dict[str, Any], field: str
) -> None:
    answer = upload(admin, fmt, body, source="bad", **params)
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["field"] == field
    assert problem["errors"][0]["field"] == field
    listed = admin.get("/v1/measurements", params={"history": True}).json()
    assert listed["total"] == 0


def test_importing_needs_the_admin_token(admin: Client) -> None:
    answer = admin.post("/v1/measurements", params={"format": "vllm_bench", "source": "x"}, content=VLLM)
    assert answer.status_code == 401
    assert admin.get("/v1/measurements").json()["total"] == 0
