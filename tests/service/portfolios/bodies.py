"""Portfolio request bodies on the shipped catalog (the workloads are the README's and test_api_plans')."""

from __future__ import annotations

from typing import Any

from tests.service.plans.test_api_plans import LORA_8B

__all__ = ["LORA_8B", "PRETRAIN_1B", "portfolio", "ten_jobs"]

PRETRAIN_1B: dict[str, Any] = {
    "kind": "train",
    "model": {"name": "Llama 3.2 1B"},
    "batch_size": 8,
    "seq_len": 2048,
    "tokens": 50_000_000_000,
}


def portfolio(jobs: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A 13-week portfolio from Monday 2027-01-04 of ``jobs`` with ``fields`` added."""
    return {"horizon": {"start": "2027-01-04", "buckets": 13, "bucket": "week"}, "jobs": jobs, **fields}


def ten_jobs() -> list[dict[str, Any]]:
    """Ten jobs: LoRA fine-tunes and 1B pretraining runs of several sizes, staggered over the quarter."""
    jobs = []
    for i in range(10):
        base = LORA_8B if i % 2 == 0 else PRETRAIN_1B
        tokens = base["tokens"] * (1 + i % 3)
        window = {"earliest_start": float(168 * (i % 4)), "deadline": float(168 * (i % 4) + 600)}
        jobs.append({"name": f"job-{i}", "plan": {**base, "tokens": tokens}, **window})
    return jobs
