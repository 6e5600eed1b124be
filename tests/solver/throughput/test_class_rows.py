"""Measured rows in the class model's terms: what a row's notes say its run did."""

from __future__ import annotations

from service.db.seed_files import read_seed_catalog
from solver.throughput.class_rows import row_recompute


def test_llmq_block_recompute_is_full_recomputation() -> None:
    """llmq's ``--recompute-block`` repeats the whole transformer block's forward in the backward (the
    Qwen2.5-14B runs on L40S, IST-DASLab/llmq README footnotes 3-6): 8·P per token, not 6·P."""
    notes = "llmq (C++/CUDA trainer); extra flags: --offload-opt-m --offload-master --recompute-block --use-zero-copy"
    assert row_recompute(notes) == "full"
    assert (
        row_recompute("llmq; extra flags: --recompute-ffn --recompute-att") == "none"
    )  # which matmuls: unstated
    assert row_recompute("stack=optimized; recompute=selective; activation checkpointing True") == "selective"
    assert row_recompute("FSDP FULL_SHARD; activation checkpointing True; NumParams 1") == "full"


def test_the_shipped_llmq_block_recompute_rows_are_read_as_full() -> None:
    rows = [p for p in read_seed_catalog().profiles.items if "--recompute-block" in p.notes]
    assert len(rows) == 4 and {row_recompute(p.notes) for p in rows} == {"full"}
