"""The SGLang, AIPerf and GuideLLM parsers on real outputs of the tools (fixtures/README.md says where
each comes from and how the generated ones were produced), and the files they refuse (:data:`REFUSED`):
truncated, another tool's, a fact missing."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from pricing import UploadFacts, parse_measurements

FIXTURES = Path(__file__).parent / "fixtures"
SGLANG = (FIXTURES / "sglang_bench_llama33_70b_4xh200.jsonl").read_bytes()
SGLANG_FACTS = UploadFacts(gpu="H200", tp=4, model="Llama 3.3 70B")
AIPERF_EXAMPLE = (FIXTURES / "aiperf_gpt_oss_20b_concurrency100.json").read_bytes()
AIPERF = (FIXTURES / "aiperf_0_13_mock_server_concurrency8.json").read_bytes()
GUIDELLM = (FIXTURES / "guidellm_0_8_1_mock_server_constant_2_4.json").read_bytes()
MOCK_FACTS = UploadFacts(gpu="L40S", tp=1)
VLLM = (FIXTURES / "vllm_bench_llama32_3b_4xl40s_inf.json").read_bytes()
TITAN = (FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log").read_bytes()


def test_each_sglang_line_is_a_run_with_rates_from_its_duration() -> None:
    runs = parse_measurements("sglang_bench", SGLANG, SGLANG_FACTS)
    assert [r.request_rate for r in runs] == [1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]
    first = runs[0]
    assert (first.kind, first.engine, first.model, first.gpu, first.tp, first.gpu_count) == (
        "serving",
        "sglang",
        "Llama 3.3 70B",
        "H200",
        4,
        4,
    )
    # these lines predate request_throughput: bench_serving's completed / duration
    assert first.requests_per_s == pytest.approx(300 / 298.3675805060193)
    assert first.output_tokens_per_s == pytest.approx(537.4142851849319)
    assert first.total_tokens_per_s == pytest.approx((152612 + 160347) / 298.3675805060193)
    assert (first.input_tokens, first.output_tokens) == (
        pytest.approx(152612 / 300),
        pytest.approx(160347 / 300),
    )
    assert (first.ttft_p50_ms, first.ttft_p99_ms, first.tpot_p99_ms) == (
        pytest.approx(85.74514742940664),
        None,
        None,
    )


def test_sglang_lines_with_server_info_name_their_model_layout_and_version() -> None:
    line = json.loads(SGLANG.splitlines()[0])
    line |= {
        "request_throughput": 2.0,
        "p99_ttft_ms": 300.0,
        "server_info": {"model_path": "meta-llama/Llama-3.3-70B-Instruct", "tp_size": 8, "dp_size": 2},
    }
    (run,) = parse_measurements("sglang_bench", json.dumps(line).encode(), UploadFacts(gpu="H200"))
    assert (run.model, run.tp, run.requests_per_s, run.ttft_p99_ms) == (
        "meta-llama/Llama-3.3-70B-Instruct",
        8,
        1.0,  # per replica: dp_size 2
        300.0,
    )


def test_the_aiperf_example_export_reads_its_records() -> None:
    (run,) = parse_measurements("aiperf", AIPERF_EXAMPLE, UploadFacts(gpu="H100 SXM", tp=1))
    assert (run.tool, run.engine, run.model, run.max_concurrency, run.request_rate) == (
        "aiperf",
        "unknown",
        "openai/gpt-oss-20b",
        100,
        None,
    )
    assert run.requests_per_s == pytest.approx(9.551622221540914)
    assert run.output_tokens_per_s == pytest.approx(2320.7222350404572)
    assert (run.input_tokens, run.output_tokens) == (550.0, pytest.approx(242.96629213483146))
    assert (run.ttft_p50_ms, run.ttft_p99_ms) == (2369.317693, 3833.3894000399996)
    assert (run.tpot_p50_ms, run.tpot_p99_ms) == (27.615130366666666, 33.73224787406911)
    assert run.total_tokens_per_s == pytest.approx((48950.0 + 21624.0) / 9.317788951)


def test_an_aiperf_0_13_export_reads_its_top_level_metrics_and_benchmark_config() -> None:
    (run,) = parse_measurements("aiperf", AIPERF, msgspec.structs.replace(MOCK_FACTS, engine="vllm"))
    assert (run.model, run.engine, run.max_concurrency, run.gpu, run.tp) == (
        "mock-llama-3.1-8b",
        "vllm",
        8,
        "L40S",
        1,
    )
    assert run.requests_per_s == pytest.approx(4.038079747534193)
    assert run.total_tokens_per_s == pytest.approx(3923.263680045971)
    assert (run.input_tokens, run.output_tokens) == (pytest.approx(843.5666666666667), 128.0)
    assert (run.ttft_p99_ms, run.tpot_p50_ms) == (166.5118463999999, 13.542981271653543)


def test_aiperf_gpu_telemetry_names_the_gpu_and_with_the_replicas_the_layout() -> None:
    data = json.loads(AIPERF)
    gpu = {
        "gpu_index": 0,
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "gpu_uuid": "GPU-0",
        "hostname": "h",
        "metrics": {},
    }
    gpus = {f"GPU-{i}": gpu | {"gpu_index": i, "gpu_uuid": f"GPU-{i}"} for i in range(4)}
    data["telemetry_data"]["endpoints"] = {"http://localhost:9400/metrics": {"gpus": gpus}}
    (run,) = parse_measurements("aiperf", json.dumps(data).encode(), UploadFacts(replicas=2))
    assert (run.gpu, run.tp, run.requests_per_s) == (
        "NVIDIA H100 80GB HBM3",
        2,
        pytest.approx(4.038079747534193 / 2),
    )


def test_each_guidellm_benchmark_is_a_run() -> None:
    report = json.loads(GUIDELLM)
    runs = parse_measurements("guidellm", GUIDELLM, MOCK_FACTS)
    assert [(r.request_rate, r.model, r.engine) for r in runs] == [
        (2.0, "mock-llama-3.1-8b", "unknown"),
        (4.0, "mock-llama-3.1-8b", "unknown"),
    ]
    for run, benchmark in zip(runs, report["benchmarks"], strict=True):
        metrics = benchmark["metrics"]
        assert run.requests_per_s == metrics["requests_per_second"]["successful"]["mean"]
        assert run.output_tokens_per_s == metrics["output_tokens_per_second"]["successful"]["mean"]
        assert run.total_tokens_per_s == metrics["tokens_per_second"]["successful"]["mean"]
        assert run.input_tokens == pytest.approx(metrics["prompt_token_count"]["successful"]["mean"])
        assert run.output_tokens == 128.0
        ttft = metrics["time_to_first_token_ms"]["successful"]
        assert (run.ttft_p50_ms, run.ttft_p99_ms) == (ttft["median"], ttft["percentiles"]["p99"])
    assert runs[0].requests_per_s == pytest.approx(37 / 20)  # 37 successful requests in the 20 s


REFUSED = [
    ("sglang_bench", SGLANG[: len(SGLANG) // 2], SGLANG_FACTS, "file", "not JSON"),
    ("sglang_bench", VLLM, UploadFacts(gpu="L40S", tp=1), "file", "total_output_tokens_retokenized"),
    ("sglang_bench", TITAN, SGLANG_FACTS, "file", "not JSON"),
    ("sglang_bench", SGLANG, msgspec.structs.replace(SGLANG_FACTS, gpu=None), "gpu", "the GPU"),
    ("sglang_bench", SGLANG, msgspec.structs.replace(SGLANG_FACTS, tp=None), "tp", "tensor"),
    ("sglang_bench", SGLANG, msgspec.structs.replace(SGLANG_FACTS, model=None), "model", "model"),
    ("aiperf", AIPERF[: len(AIPERF) // 2], MOCK_FACTS, "file", "not JSON"),
    ("aiperf", AIPERF_EXAMPLE[:4000], MOCK_FACTS, "file", "not JSON"),
    ("aiperf", VLLM, MOCK_FACTS, "file", "not an AIPerf profile export"),
    ("aiperf", GUIDELLM, MOCK_FACTS, "file", "not an AIPerf profile export"),
    ("aiperf", AIPERF, UploadFacts(tp=1), "gpu", "the GPU"),
    ("aiperf", AIPERF_EXAMPLE, UploadFacts(gpu="H100 SXM"), "tp", "tensor"),
    ("guidellm", GUIDELLM[: len(GUIDELLM) // 2], MOCK_FACTS, "file", "not JSON"),
    ("guidellm", AIPERF, MOCK_FACTS, "file", "not a GuideLLM benchmarks report"),
    ("guidellm", SGLANG, MOCK_FACTS, "file", "not a GuideLLM benchmarks report"),
    ("guidellm", GUIDELLM, UploadFacts(tp=1), "gpu", "the GPU"),
]
"""Serving files each parser refuses: ``(format, body, facts, field, words)``, run by
``test_parsers.test_a_file_that_cannot_be_used_names_the_field``."""
