"""The measurement parsers on real tool outputs (fixtures/README.md says where each comes from), and the
files they refuse: truncated, another tool's, a fact missing."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pricing import MeasurementError, UploadFacts, parse_measurements
from tests.pricing.measurements.test_serving_formats import REFUSED

FIXTURES = Path(__file__).parent / "fixtures"
VLLM = (FIXTURES / "vllm_bench_llama32_3b_4xl40s_inf.json").read_bytes()
TITAN = (FIXTURES / "torchtitan_llama3_8b_bf16_8gpu.log").read_bytes()
TITAN_FACTS = UploadFacts(gpu="H100 SXM", gpu_count=8, model="Llama 3 8B", seq_len=8192, batch_size=1)
MEGATRON = (FIXTURES / "megatron_gpt_6b_fp8_8gpu.log").read_bytes()
MEGATRON_FACTS = UploadFacts(gpu="H100 SXM", gpu_count=8, model="GPT 6.4B", seq_len=4096, precision="fp8")
TRAINER = (FIXTURES / "hf_trainer_state_qwen25_05b.json").read_bytes()
TRAINER_FACTS = UploadFacts(
    gpu="A100 80GB", gpu_count=1, model="Qwen2.5-0.5B", seq_len=1024, max_memory_reserved_gib=21.5
)


def test_a_vllm_result_is_one_replica_run_with_the_gpu_from_its_metadata() -> None:
    (run,) = parse_measurements("vllm_bench", VLLM, UploadFacts(replicas=4))
    assert (run.kind, run.model, run.gpu, run.tp, run.engine) == (
        "serving",
        "meta-llama/Llama-3.2-3B-Instruct",
        "NVIDIA L40S",
        1,
        "vllm",
    )
    assert run.requests_per_s == pytest.approx(43.024591101204344 / 4)
    assert run.output_tokens_per_s == pytest.approx(11481.016525153933 / 4)
    assert run.input_tokens == pytest.approx(999.0)
    assert run.output_tokens == pytest.approx(240163 / 900)
    assert run.request_rate is None  # "inf"
    assert (run.ttft_p99_ms, run.tpot_p99_ms) == (
        pytest.approx(1353.1694669699937),
        pytest.approx(67.41057380823649),
    )


def test_upload_facts_fill_only_what_the_file_leaves_out() -> None:
    (run,) = parse_measurements("vllm_bench", VLLM, UploadFacts(gpu="H100 SXM", tp=2, replicas=2))
    assert (run.gpu, run.tp) == ("NVIDIA L40S", 2)  # the file's GPU wins; tp was not in it


def test_a_torchtitan_log_is_a_training_run_without_its_warm_up_step() -> None:
    (run,) = parse_measurements("torchtitan_log", TITAN, TITAN_FACTS)
    assert (run.kind, run.gpu, run.gpu_count, run.seq_len, run.steps) == ("training", "H100 SXM", 8, 8192, 40)
    assert run.tokens_per_s == pytest.approx((6321 + 6300) / 2 * 8)  # median of steps 10-40, 8 GPUs
    assert run.tflops_per_gpu == pytest.approx((366.06 + 364.89) / 2)
    assert run.mfu == pytest.approx((0.3701 + 0.3689) / 2)
    assert run.peak_memory_gib == pytest.approx(30.89)


def test_a_torchtitan_log_naming_its_gpu_and_mesh_needs_neither_upload_fact() -> None:
    header = (
        b"[titan] INFO - Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1\n"
        b"[titan] INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory\n"
    )
    (run,) = parse_measurements(
        "torchtitan_log", header + TITAN, UploadFacts(model="Llama 3 8B", seq_len=8192)
    )
    assert (run.gpu, run.gpu_count) == ("NVIDIA H100 80GB HBM3", 8)


def test_a_megatron_log_gives_tokens_from_the_global_batch_and_the_peak_from_report_memory() -> None:
    (run,) = parse_measurements("megatron_log", MEGATRON, MEGATRON_FACTS)
    steady_ms = [12137.8, 12068.8, 12036.3, 12056.1, 12072.4, 12090.5, 12099.3, 12099.4, 12104.3]  # 20-100
    assert run.tokens_per_s == pytest.approx(1024 * 4096 / (sorted(steady_ms)[4] / 1000))
    assert run.tflops_per_gpu == pytest.approx(876.0)  # median of iterations 20-100
    assert run.peak_memory_gib == pytest.approx(75682.0 / 1024)  # max reserved, MB = MiB
    assert (run.kind, run.task, run.precision, run.steps, run.gpu_count) == (
        "training",
        "train",
        "fp8",
        100,
        8,
    )


def test_a_trainer_state_gives_samples_per_second_times_the_stated_sequence() -> None:
    (run,) = parse_measurements("hf_trainer", TRAINER, TRAINER_FACTS)
    assert run.tokens_per_s == pytest.approx(23.917 * 1024)  # num_input_tokens_seen is 0: not counted
    assert run.tflops_per_gpu == pytest.approx(597695573409792.0 / 80.2776 / 1e12)
    assert (run.task, run.batch_size, run.steps, run.peak_memory_gib) == ("fine_tune", 8, 120, 21.5)


def test_the_trainers_all_results_summary_is_read_the_same_way() -> None:
    import json

    (summary,) = [e for e in json.loads(TRAINER)["log_history"] if "train_runtime" in e]
    (run,) = parse_measurements("hf_trainer", json.dumps(summary).encode(), TRAINER_FACTS)
    assert run.tokens_per_s == pytest.approx(23.917 * 1024)


@pytest.mark.parametrize(
    ("fmt", "body", "facts", "field", "words"),
    [
        ("vllm_bench", VLLM[: len(VLLM) // 2], UploadFacts(replicas=4), "file", "not JSON"),
        ("vllm_bench", TITAN, UploadFacts(), "file", "not JSON"),
        ("vllm_bench", b"[" * 100_000, UploadFacts(), "file", "nested deeper"),
        ("vllm_bench", b'{"completed": 3, "request_throughput": 1.0}', UploadFacts(), "file", "model_id"),
        ("vllm_bench", VLLM.replace(b'"gpu": "4xNVIDIA_L40S", ', b""), UploadFacts(tp=1), "gpu", "the GPU"),
        (
            "vllm_bench",
            VLLM.replace(b'"gpu": "4xNVIDIA_L40S", ', b""),
            UploadFacts(gpu="L40S"),
            "tp",
            "tensor",
        ),
        ("torchtitan_log", TITAN[: TITAN.index(b"\n") + 1], TITAN_FACTS, "file", "warm-up"),
        ("torchtitan_log", VLLM, TITAN_FACTS, "file", "not a torchtitan log"),
        (
            "torchtitan_log",
            TITAN,
            UploadFacts(gpu_count=8, model="Llama 3 8B", seq_len=8192),
            "gpu",
            "the GPU",
        ),
        ("torchtitan_log", TITAN, UploadFacts(gpu="H100 SXM", gpu_count=8, seq_len=8192), "model", "model"),
        (
            "torchtitan_log",
            TITAN,
            UploadFacts(gpu="H100 SXM", gpu_count=8, model="Llama 3 8B"),
            "seq_len",
            "sequence",
        ),
        ("megatron_log", MEGATRON[:400], MEGATRON_FACTS, "file", "warm-up"),
        ("megatron_log", TITAN, MEGATRON_FACTS, "file", "not a Megatron-LM log"),
        ("megatron_log", MEGATRON, msgspec.structs.replace(MEGATRON_FACTS, gpu=None), "gpu", "the GPU"),
        (
            "megatron_log",
            MEGATRON,
            msgspec.structs.replace(MEGATRON_FACTS, gpu_count=None),
            "gpu_count",
            "GPUs",
        ),
        ("hf_trainer", TRAINER[:3000], TRAINER_FACTS, "file", "not JSON"),
        ("hf_trainer", VLLM, TRAINER_FACTS, "file", "not a Hugging Face Trainer result"),
        ("hf_trainer", TRAINER, msgspec.structs.replace(TRAINER_FACTS, gpu=None), "gpu", "the GPU"),
        ("hf_trainer", TRAINER, msgspec.structs.replace(TRAINER_FACTS, seq_len=None), "seq_len", "sequence"),
        *REFUSED,
    ],
)
def test_a_file_that_cannot_be_used_names_the_field(
    fmt: str, body: bytes, facts: UploadFacts, field: str, words: str
) -> None:
    with pytest.raises(MeasurementError) as caught:
        parse_measurements(fmt, body, facts)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert words in caught.value.reason
