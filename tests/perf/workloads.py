"""Realistic plan requests the benchmarks cycle through."""

from __future__ import annotations

from typing import Any

PLAN_BODIES: list[dict[str, Any]] = [
    {  # a 16k-GPU plan: its layouts come from the per-snapshot cache after the first
        "kind": "train",
        "model": {"name": "Llama 3 70B"},
        "seq_len": 8192,
        "tokens": 15_000_000_000_000,
        "constraints": {"max_gpus": 16_384, "gpus": ["H100 SXM"]},
    },
    {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.1 8B"},
        "method": "lora",
        "micro_batch": 4,
        "seq_len": 2048,
        "recompute": "selective",
        "tokens": 2_000_000_000,
    },
    {
        "kind": "train",
        "model": {"name": "Llama 3.2 1B"},
        "micro_batch": 8,
        "seq_len": 2048,
        "tokens": 50_000_000_000,
        "constraints": {"deadline_hours": 72},
    },
    {
        "kind": "fine_tune",
        "model": {"name": "Qwen2.5-7B"},
        "method": "qlora",
        "precision": "nf4",
        "micro_batch": 8,
        "seq_len": 1024,
        "tokens": 500_000_000,
        "constraints": {"spot": True},
    },
    {
        "kind": "train",
        "model": {"name": "Mistral 7B"},
        "recompute": "full",
        "micro_batch": 4,
        "seq_len": 4096,
        "tokens": 20_000_000_000,
        "constraints": {"max_gpus": 64, "interconnect": "nvswitch"},
    },
    {
        "kind": "batch_inference",
        "model": {"name": "Llama 3.1 70B"},
        "precision": "fp8",
        "batch_size": 32,
        "seq_len": 1536,
        "output_len": 512,
        "tokens": 1_000_000_000,
        "constraints": {"providers": ["aws", "gcp", "azure", "lambda", "nebius"]},
    },
    {
        "kind": "train",
        "model": {"name": "ResNet-50"},
        "micro_batch": 256,
        "samples": 1_281_167,
        "epochs": 90,
        "objective": "time",
        "constraints": {"budget_usd": 2_000},
    },
]


SERVING_BODIES: list[dict[str, Any]] = [
    {
        "kind": "serving",
        "model": {"name": model},
        "requests_per_s": rate,
        "hours": 730,
        "request_mix": mix,
    }
    for model in ("Llama 3.1 8B", "Mistral 7B")  # no measured serving rows: capacities are derived
    for mix in (
        [
            {"input_tokens": 20, "output_tokens": 20, "share": 0.5},
            {"input_tokens": 800, "output_tokens": 1500, "share": 0.5},
        ],
        [
            {"input_tokens": 2000, "output_tokens": 200, "share": 0.7},
            {"input_tokens": 300, "output_tokens": 300, "share": 0.2},
            {"input_tokens": 8000, "output_tokens": 500, "share": 0.1},
        ],
    )
    for rate in (2, 15, 60)
]
"""Serving fleets whose capacities all come from the throughput and memory models (issue 10 target:
p50 <= 50 ms)."""
