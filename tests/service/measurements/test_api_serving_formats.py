"""POST /v1/measurements?format=sglang_bench|aiperf|guidellm end to end on the shipped catalog: the real
fixtures of tests/pricing/measurements (attributed in their README) stored as measured serving rows, a
plan re-made on one, and the uploads refused (:data:`REFUSED_UPLOADS`, run by
``test_api_measurements.test_a_file_that_cannot_be_used_is_a_422_naming_the_field_and_stores_nothing``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]
FIXTURES = Path(__file__).parents[2] / "pricing" / "measurements" / "fixtures"
VLLM = (FIXTURES / "vllm_bench_llama32_3b_4xl40s_inf.json").read_bytes()
TITAN = (FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log").read_bytes()
SGLANG = (FIXTURES / "sglang_bench_llama33_70b_4xh200.jsonl").read_bytes()
SGLANG_PARAMS = {"gpu": "H200 SXM", "tp": 4, "model": "Llama 3.3 70B"}
AIPERF_EXAMPLE = (FIXTURES / "aiperf_gpt_oss_20b_concurrency100.json").read_bytes()
AIPERF = (FIXTURES / "aiperf_0_13_mock_server_concurrency8.json").read_bytes()
GUIDELLM = (FIXTURES / "guidellm_0_8_1_mock_server_constant_2_4.json").read_bytes()
MOCK_PARAMS = {"gpu": "L40S", "tp": 1, "model": "Llama 3.1 8B", "engine": "vllm"}
SERVING_70B = {
    "kind": "serving",
    "model": {"name": "Llama 3.3 70B"},
    "requests_per_s": 20,
    "request_mix": [{"input_tokens": 510, "output_tokens": 510, "share": 1}],
    "constraints": {"gpus": ["h200-sxm"]},
    "hours": 10,
}


def upload(client: Client, fmt: str, body: bytes, **params: Any) -> Any:
    return client.post("/v1/measurements", params={"format": fmt, **params}, content=body, headers=AUTH)


def _replica_class(plan: dict[str, Any], tp: int) -> dict[str, Any] | None:
    for replica in plan["choice"]["replicas"]:
        if replica["gpu"] == "h200-sxm" and replica["tp"] == tp:
            return dict(replica["classes"][0])
    return None


def test_every_line_of_an_sglang_file_is_stored_as_a_serving_row(admin: Client) -> None:
    answer = upload(admin, "sglang_bench", SGLANG, source="sgl-h200", **SGLANG_PARAMS)
    assert answer.status_code == 201, answer.text
    report = answer.json()
    assert (report["rows"], report["format"]) == (7, "sglang_bench")
    first = report["measurements"][0]
    assert (first["kind"], first["engine"], first["gpu"], first["tp"], first["request_rate"]) == (
        "serving",
        "sglang",
        "H200 SXM",
        4,
        1.0,
    )
    assert first["requests_per_s"] == pytest.approx(300 / 298.3675805060193)
    assert first["row"] == (
        f"serving row {first['row_id']}: Llama 3.3 70B on h200-sxm (tp 4), input (406, 636] x output "
        "(427, 669] tokens: 1.005 req/s per replica, measured at request rate 1 req/s"
    )
    listed = admin.get("/v1/measurements", params={"source": "sgl-h200"}).json()
    assert [m["request_rate"] for m in listed["items"]] == [1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]


def test_a_saturated_sglang_run_makes_the_serving_plan_measured(admin: Client) -> None:
    before = admin.post("/v1/plans", json=SERVING_70B)
    assert before.status_code == 201, before.text
    derived = _replica_class(before.json(), 4)
    assert derived is not None
    assert (derived["capacity_provenance"], derived["capacity_source"]) == ("derived", None)
    saturated = SGLANG.splitlines(keepends=True)[4]  # the 16 req/s run: 8.35 req/s served
    imported = upload(admin, "sglang_bench", saturated, source="sgl-16rps", **SGLANG_PARAMS)
    assert imported.status_code == 201, imported.text
    served = imported.json()["measurements"][0]["requests_per_s"]
    assert served == pytest.approx(3200 / 383.073250005953)
    after = _replica_class(admin.post("/v1/plans", json=SERVING_70B).json(), 4)
    assert after is not None
    assert (after["capacity_provenance"], after["capacity_source"]) == ("measured", "sgl-16rps")
    assert after["capacity_requests_per_s"] == pytest.approx(served)


def test_a_rate_sweep_gives_the_capacity_of_its_saturated_run(admin: Client) -> None:
    """Every run of the sweep lands in the plan's bucket; the one that served the most (the 16 req/s
    run) is the replica's capacity, not the first stored (1 req/s)."""
    imported = upload(admin, "sglang_bench", SGLANG, source="sgl-sweep", **SGLANG_PARAMS)
    assert imported.status_code == 201, imported.text
    served = max(m["requests_per_s"] for m in imported.json()["measurements"])
    assert served == pytest.approx(3200 / 383.073250005953)
    replica = _replica_class(admin.post("/v1/plans", json=SERVING_70B).json(), 4)
    assert replica is not None
    assert (replica["capacity_provenance"], replica["capacity_source"]) == ("measured", "sgl-sweep")
    assert replica["capacity_requests_per_s"] == pytest.approx(served)


def test_an_aiperf_export_is_one_serving_row_with_the_stated_engine(admin: Client) -> None:
    answer = upload(admin, "aiperf", AIPERF, source="aiperf-mock", **MOCK_PARAMS)
    assert answer.status_code == 201, answer.text
    (run,) = answer.json()["measurements"]
    assert (run["model"], run["gpu"], run["engine"], run["max_concurrency"]) == (
        "Llama 3.1 8B",
        "L40S",
        "vllm",
        8,
    )
    assert run["requests_per_s"] == pytest.approx(4.038079747534193)
    assert run["row"].endswith(
        "4.038 req/s per replica, measured p99 ttft<=167ms tpot<=15.0ms at concurrency 8"
    )


def test_each_guidellm_benchmark_is_a_serving_row(admin: Client) -> None:
    answer = upload(admin, "guidellm", GUIDELLM, source="guidellm-mock", **MOCK_PARAMS)
    assert answer.status_code == 201, answer.text
    runs = answer.json()["measurements"]
    assert [(r["request_rate"], r["engine"], r["model"]) for r in runs] == [
        (2.0, "vllm", "Llama 3.1 8B"),
        (4.0, "vllm", "Llama 3.1 8B"),
    ]
    assert runs[0]["requests_per_s"] == pytest.approx(37 / 20)
    history = admin.get("/v1/measurements", params={"history": True}).json()
    assert {m["format"] for m in history["items"]} == {"guidellm"}


def test_the_openapi_document_offers_the_new_formats(admin: Client) -> None:
    spec = admin.get("/schema/openapi.json").json()
    (param,) = [p for p in spec["paths"]["/v1/measurements"]["post"]["parameters"] if p["name"] == "format"]
    assert {"sglang_bench", "aiperf", "guidellm"} <= set(param["schema"]["enum"])


REFUSED_UPLOADS = [
    ("sglang_bench", SGLANG[: len(SGLANG) // 2], SGLANG_PARAMS, "file"),  # truncated
    ("sglang_bench", VLLM, SGLANG_PARAMS, "file"),  # vLLM's result, not SGLang's
    ("sglang_bench", SGLANG, {k: v for k, v in SGLANG_PARAMS.items() if k != "gpu"}, "gpu"),
    ("aiperf", AIPERF[:5000], MOCK_PARAMS, "file"),
    ("aiperf", GUIDELLM, MOCK_PARAMS, "file"),
    ("aiperf", AIPERF, {k: v for k, v in MOCK_PARAMS.items() if k != "gpu"}, "gpu"),
    # The upload's model wins over the file's (openai/gpt-oss-20b, now in the catalog): one it does not know.
    ("aiperf", AIPERF_EXAMPLE, {"gpu": "H100 SXM", "tp": 1, "model": "NoSuchModel-13B"}, "model"),
    ("guidellm", GUIDELLM[:100_000], MOCK_PARAMS, "file"),
    ("guidellm", TITAN, MOCK_PARAMS, "file"),
    ("guidellm", GUIDELLM, {k: v for k, v in MOCK_PARAMS.items() if k != "gpu"}, "gpu"),
]
"""Uploads answered 422 naming ``field``: ``(format, body, params, field)``."""


def test_the_upload_page_offers_the_new_formats_and_the_engine(admin: Client) -> None:
    html = admin.get("/measurements").text
    for fmt in ("sglang_bench", "aiperf", "guidellm"):
        assert f'<option value="{fmt}">{fmt}</option>' in html
    assert 'id="upload-engine"' in html
