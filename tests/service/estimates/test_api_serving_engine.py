"""POST /v1/throughput for serving at a load: the engine model answers (issue 23)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

# the request issue 23 reports refused: seq_len was taken as twice the mean context
LLAMA2_ON_A100 = {
    "kind": "serving",
    "model": {"name": "Llama 2 7B"},
    "precision": "fp16",
    "gpu": "a100-80gb-sxm",
    "input_tokens": 2048,
    "output_tokens": 128,
}


def _post(client: Client, body: dict[str, Any]) -> Any:
    return client.post("/v1/throughput", json=body)


def test_a_serving_load_is_answered_by_the_engine_model(client: Client) -> None:
    response = _post(client, LLAMA2_ON_A100 | {"load": {"concurrency": 55}})
    assert response.status_code == 200, response.text
    answer = response.json()
    serving = answer["serving"]
    assert answer["route"] == "engine" and answer["unit"] == "output_tokens_per_s"
    assert answer["value"] == serving["output_tokens_per_s"] > 0
    assert serving["requests_per_s"] * 128 == pytest.approx(serving["output_tokens_per_s"], rel=1e-9)
    assert serving["total_tokens_per_s"] > serving["output_tokens_per_s"]
    for latency in ("ttft_ms", "tpot_ms", "e2e_ms"):
        assert 0 < serving[latency]["p50"] <= serving[latency]["p90"] <= serving[latency]["p99"]
    assert serving["tp"] == 1 and serving["replicas"] == 1 and serving["kv_cache_tokens"] > 2176
    assert answer["band"]["low"] < answer["value"] < answer["band"]["high"]


def test_ttft_grows_with_the_arrival_rate(client: Client) -> None:
    ttft = [
        _post(client, LLAMA2_ON_A100 | {"load": {"requests_per_s": rate, "requests": 300}}).json()["serving"]
        for rate in (0.5, 4.0, 50.0)
    ]
    assert ttft[0]["ttft_ms"]["p90"] < ttft[1]["ttft_ms"]["p90"] < ttft[2]["ttft_ms"]["p90"]
    assert ttft[0]["stable"] and not ttft[2]["stable"]


def test_more_gpus_are_more_replicas_sharing_the_load(client: Client) -> None:
    one = _post(client, LLAMA2_ON_A100 | {"load": {"offline": True}}).json()
    four = _post(client, LLAMA2_ON_A100 | {"gpu_count": 4, "load": {"offline": True}}).json()
    assert four["serving"]["replicas"] == 4
    assert four["value"] == pytest.approx(4 * one["value"], rel=1e-9)


def test_a_request_mix_is_served(client: Client) -> None:
    mix = [{"input_tokens": 200, "output_tokens": 100, "share": 0.7},
           {"input_tokens": 3000, "output_tokens": 300, "share": 0.3}]  # fmt: skip
    body = {k: v for k, v in LLAMA2_ON_A100.items() if not k.endswith("_tokens")} | {"request_mix": mix}
    response = _post(client, body | {"load": {"requests_per_s": 2}})
    assert response.status_code == 200, response.text


def test_bad_serving_inputs_name_their_field(client: Client) -> None:
    cases = [
        (LLAMA2_ON_A100 | {"output_tokens": 3000}, "output_tokens"),  # 2,048 + 3,000 > Llama 2's 4,096
        (LLAMA2_ON_A100 | {"load": {"offline": True, "concurrency": 4}}, "load"),
        ({k: v for k, v in LLAMA2_ON_A100.items() if k != "output_tokens"}, "output_tokens"),
    ]
    for body, field in cases:
        response = _post(client, body)
        assert response.status_code == 400, response.text
        assert response.json()["field"] == field


def test_a_model_the_gpu_cannot_hold_is_422(client: Client) -> None:
    body = LLAMA2_ON_A100 | {"model": {"name": "Llama 3.1 405B"}, "precision": "bf16", "gpu": "l4"}
    response = _post(client, body)
    assert response.status_code == 422, response.text


def test_a_model_one_gpu_cannot_hold_names_the_tensor_parallelism_that_would(client: Client) -> None:
    body = LLAMA2_ON_A100 | {"model": {"name": "Llama 3.1 70B"}, "precision": "bf16", "gpu": "h100-sxm"}
    response = _post(client, body)
    assert response.status_code == 422
    assert (
        "a replica of tensor parallel 2 holds them (gpu_count a multiple of 2)" in response.json()["detail"]
    )
    assert _post(client, body | {"gpu_count": 2}).json()["serving"]["tp"] == 2


def test_gpus_without_nvlink_run_tensor_parallel_over_pcie(client: Client) -> None:
    """vLLM and SGLang shard a model too large for one card over PCIe (8 x A10G on one AWS G5 host):
    the default takes the least tensor parallelism that holds it there too, not only in NVLink domains."""
    body = LLAMA2_ON_A100 | {"model": {"name": "Llama 3.1 70B"}, "gpu": "a10g", "gpu_count": 8}
    response = _post(client, body)
    assert response.status_code == 200, response.text
    assert response.json()["serving"]["tp"] == 8 and response.json()["serving"]["replicas"] == 1
    split = _post(client, body | {"gpus_per_instance": 4})  # a tensor-parallel group stays in one instance
    assert split.status_code == 422 and "tensor parallel [1, 2, 4]" in split.json()["detail"]


def test_tgi_is_modelled_as_vllm_and_says_so(client: Client) -> None:
    load = {"load": {"concurrency": 8}}
    vllm = _post(client, LLAMA2_ON_A100 | load).json()
    answer = _post(client, LLAMA2_ON_A100 | load | {"engine": "tgi"}).json()
    assert answer["stack"] == "tgi" and answer["value"] == vllm["value"]
    assert "as vllm (no source measures tgi apart)" in answer["method"]


def test_sglang_has_its_own_documented_scheduler_limits_and_vllm_costs(client: Client) -> None:
    """SGLang's chunked_prefill_size is 8,192 on an 80 GB A100 and it runs at least 2,048 requests
    (server_args.py, model_runner.py); vLLM's defaults there are 2,048 tokens and 256 sequences."""
    load = {"load": {"offline": True}}
    vllm = _post(client, LLAMA2_ON_A100 | load).json()
    sglang = _post(client, LLAMA2_ON_A100 | load | {"engine": "sglang"}).json()
    assert (vllm["serving"]["token_budget"], vllm["serving"]["max_batch"]) == (2048, 256)
    assert (sglang["serving"]["token_budget"], sglang["serving"]["max_batch"]) == (8192, 2048)
    assert (
        sglang["stack"] == "sglang" and "costs as vllm (no source measures sglang apart)" in sglang["method"]
    )


def test_short_requests_are_capped_by_the_vllm_front_end(client: Client) -> None:
    """128 tokens in, 4 out on one H100: the GPU finishes thousands a second, vLLM's front end (fitted
    on Mélange's short-output rows) takes each request in turn; TensorRT-LLM's offline bench has none."""
    body = {"kind": "serving", "model": {"name": "Llama 2 7B"}, "gpu": "h100-sxm", "input_tokens": 128,
            "output_tokens": 4, "load": {"offline": True}}  # fmt: skip
    vllm = _post(client, body).json()["serving"]["requests_per_s"]
    trtllm = _post(client, body | {"engine": "trtllm"}).json()["serving"]["requests_per_s"]
    assert 30 < vllm < 1 / 0.0263 < 5 * vllm < trtllm


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (LLAMA2_ON_A100 | {"seq_len": 4096}, "seq_len"),
        (LLAMA2_ON_A100 | {"micro_batch": 8}, "micro_batch"),
        (LLAMA2_ON_A100 | {"pp": 2, "gpu_count": 2}, "pp"),
        (LLAMA2_ON_A100 | {"efficiency": {"mfu": 0.5}}, "efficiency"),
        (LLAMA2_ON_A100 | {"method": "lora"}, "method"),
        ({**LLAMA2_ON_A100, "kind": "batch_inference", "seq_len": 2048}, "input_tokens"),
        (
            {"kind": "train", "model": {"name": "Llama 2 7B"}, "gpu": "h100-sxm", "engine": "sglang"},
            "engine",
        ),
    ],
)
def test_a_field_the_answer_would_not_use_is_a_400_naming_it(
    client: Client, body: dict[str, Any], field: str
) -> None:
    response = _post(client, body)
    assert response.status_code == 400, response.text
    assert field in response.text


@pytest.mark.parametrize("model", ["BERT-Large", "ViT-L/16", "ResNet-50", "mT5-XXL"])
def test_a_model_that_is_not_a_decoder_llm_is_a_400_naming_the_model(client: Client, model: str) -> None:
    """The engine simulates decoder LLMs generating token by token: it answered for BERT and ViT."""
    response = _post(client, LLAMA2_ON_A100 | {"model": {"name": model}, "precision": "bf16"})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "model" and "decoder" in response.json()["detail"]
