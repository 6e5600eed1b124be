"""The global batch a training step aims at: stated by the workload, or a cited rule by model size.

Pretraining (decoder LLMs): the tokens per optimizer step published runs used, by parameter count,
interpolated log-linearly between neighbours (flat beyond the ends):

| parameters | tokens per step | source |
|---:|---:|---|
| 125M, 350M, 760M | 0.5M | GPT-3, Brown et al. 2020, Table 2.1 |
| 1.3B, 2.7B | 1M | GPT-3, Table 2.1 |
| 6.7B, 13B | 2M | GPT-3, Table 2.1 |
| 175B | 3.2M | GPT-3, Table 2.1 |
| 530B | 5.2M (2,520 × 2,048) | Narayanan et al. 2021, Table 1 (529.6B) |
| 1T | 6.3M (3,072 × 2,048) | Narayanan et al. 2021, Table 1 (1,008B) |

Fine-tunes and encoder/vision training aim at the class's typical step (:data:`CLASS_GLOBAL_BATCH_TOKENS`).
A layout's global batch ``dp × micro_batch × accumulation × seq_len`` never exceeds the target and
must reach at least :data:`MIN_BATCH_SHARE` of it (a GPU count whose data-parallel ranks cannot is
rejected for the job, never given a larger batch).
"""

from __future__ import annotations

import bisect
import math
from typing import Final

__all__ = [
    "CLASS_GLOBAL_BATCH_TOKENS",
    "MIN_BATCH_SHARE",
    "PRETRAIN_BATCH_BY_SIZE",
    "global_batch_tokens",
]

PRETRAIN_BATCH_BY_SIZE: Final[tuple[tuple[float, float], ...]] = (
    (0.125e9, 0.5e6),
    (0.76e9, 0.5e6),
    (1.3e9, 1.0e6),
    (2.7e9, 1.0e6),
    (6.7e9, 2.0e6),
    (13e9, 2.0e6),
    (175e9, 3.2e6),
    (529.6e9, 2520 * 2048.0),
    (1008e9, 3072 * 2048.0),
)
"""(parameters, tokens per optimizer step) of published pretraining runs (module docstring)."""

CLASS_GLOBAL_BATCH_TOKENS: Final[dict[str, float]] = {
    "full_finetune": 128 * 4096,
    "lora": 64 * 4096,
    "encoder_vision": 2048 * 512,
}
"""Tokens (samples × their length for encoders and vision models) per step of the other training
classes: fine-tunes run 64–128 sequences per step, encoder/vision pretraining ~1M tokens."""

MIN_BATCH_SHARE: Final = 0.7
"""A layout's global batch must reach this share of the target. The rule is defined only to about a
factor √2 between its rows (GPT-3 Table 2.1 gives 6.7B and 13B the same 2M tokens, 1.3B and 2.7B the
same 1M), so a batch within 1/√2 of the target trains as the rule intends; 296 GPUs, for one, reach
296 of a 70B's 331 sequences (89 %) and train it, as they should."""


def _pretrain_rule(params: float) -> float:
    sizes = [p for p, _ in PRETRAIN_BATCH_BY_SIZE]
    if params <= sizes[0]:
        return PRETRAIN_BATCH_BY_SIZE[0][1]
    if params >= sizes[-1]:
        return PRETRAIN_BATCH_BY_SIZE[-1][1]
    i = bisect.bisect_right(sizes, params)
    (p0, t0), (p1, t1) = PRETRAIN_BATCH_BY_SIZE[i - 1], PRETRAIN_BATCH_BY_SIZE[i]
    share = math.log(params / p0) / math.log(p1 / p0)
    return math.exp(math.log(t0) + share * math.log(t1 / t0))


def global_batch_tokens(work_class: str, params: float, stated: float | None = None) -> tuple[float, str]:
    """Tokens per optimizer step and why: ``stated`` when given, else the rule of the class."""
    if stated:
        return stated, f"global batch {stated:,.0f} tokens (stated)"
    if work_class == "pretrain":
        tokens = _pretrain_rule(params)
        return tokens, (
            f"global batch {tokens / 1e6:,.2f}M tokens (rule by model size: GPT-3 Table 2.1, "
            "Narayanan et al. 2021 Table 1)"
        )
    tokens = CLASS_GLOBAL_BATCH_TOKENS.get(work_class, 2.0**20)
    return tokens, f"global batch {tokens:,.0f} tokens (typical for {work_class})"
