"""Work per unit of throughput: the FLOPs or bytes one token, sequence or sample costs a GPU.

The throughput model divides a calibrated effective rate (FLOP/s or byte/s actually achieved on a GPU)
by the work one unit needs, so only **ratios** of these numbers matter: a model twice as expensive per
token runs at half the tokens/s on the same GPU. With ``P`` active parameters, ``L`` layers, attention
width ``d = heads × head_dim`` and ``T`` tokens per sequence:

- forward FLOPs of one sequence: ``2·P·T + 2·c·L·d·T²``, ``c = 1`` for causal attention (half of the
  score matrix) and ``2`` for bidirectional encoders (Kaplan et al. 2020, §2.1; Chowdhery et al. 2022,
  appendix B);
- training: 3 × forward (``6·P`` per token: weight and activation gradients); LoRA/QLoRA 2 × forward
  (``≈ 4·P``: the frozen base needs no weight gradients); full recomputation adds one forward
  (``8·P``), selective half of one (:data:`RECOMPUTE_PASSES`); QLoRA divides the rate by
  ``QLORA_DEQUANT_EFFICIENCY`` for the NF4 dequantisation in every matmul;
- prefill: forward FLOPs per prompt token; offline batch inference: forward FLOPs of prompt + output
  per **output** token;
- decode at batch ``B``: the weights are read once per step (``min(P_total, P_active·B)`` parameters,
  as a mixture of experts touches more experts as the batch grows) plus each sequence's KV cache at
  the mean context, divided by the ``B`` tokens the step produces.
"""

from __future__ import annotations

import functools
from typing import Final

from solver.catalog.models import ModelArch, active_params
from solver.catalog.precisions import PrecisionClass, kv_element_bytes
from solver.spec.workload import ResolvedWorkload

__all__ = [
    "BYTES_PER_PARAM",
    "QLORA_DEQUANT_EFFICIENCY",
    "RECOMPUTE_PASSES",
    "WORKLOAD_PRECISION_CLASS",
    "decode_bytes_per_token",
    "forward_flops",
    "offline_flops_per_output_token",
    "prefill_flops_per_token",
    "setting_numbers",
    "train_flops_per_token",
    "work_at_setting",
]

BYTES_PER_PARAM: Final[dict[str, float]] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 4.5 / 8,  # 4-bit codes + block scales (Q4_K_M ≈ 4.5–4.9 bits, NF4 4.5, NVFP4 4.5)
    "fp4": 4.5 / 8,
}

WORKLOAD_PRECISION_CLASS: Final[dict[str, PrecisionClass]] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "int8": "int8",
    "int4": "int4",
    "nf4": "int4",
}
"""A workload's precision → speed class."""

QLORA_DEQUANT_EFFICIENCY: Final = 0.75
"""Share of 16-bit LoRA speed QLoRA keeps (bitsandbytes NF4 dequantisation; reports range 0.6–0.85)."""

_TRAIN_PASSES: Final[dict[str, float]] = {"full": 3.0, "lora": 2.0, "qlora": 2.0}
RECOMPUTE_PASSES: Final[dict[str, float]] = {"none": 0.0, "selective": 0.5, "full": 1.0}
"""Forward passes recomputation adds: full repeats the forward; selective (every other matmul output
saved) recomputes about half of it."""


def _attention_width(arch: ModelArch) -> int:
    return arch.attention_heads * arch.effective_head_dim


def forward_flops(arch: ModelArch, tokens: int) -> float:
    """Forward FLOPs of one sequence of ``tokens`` tokens (matmuls and the attention core)."""
    causal = 1 if arch.family == "decoder" else 2
    dense = 2.0 * active_params(arch) * 1e9 * tokens
    attention = 2.0 * causal * arch.layers * _attention_width(arch) * float(tokens) ** 2
    return dense + attention


def train_flops_per_token(arch: ModelArch, seq_len: int, method: str, recompute: str) -> float:
    """Training FLOPs per token: ``6·P`` full, ``4·P`` LoRA/QLoRA, one forward more with full recompute."""
    passes = _TRAIN_PASSES[method] + RECOMPUTE_PASSES.get(recompute, 0.0)
    flops = passes * forward_flops(arch, seq_len) / seq_len
    return flops / QLORA_DEQUANT_EFFICIENCY if method == "qlora" else flops


def prefill_flops_per_token(arch: ModelArch, prompt_len: int) -> float:
    """Forward FLOPs per prompt token when a ``prompt_len``-token prompt is processed at once."""
    return forward_flops(arch, prompt_len) / prompt_len


def offline_flops_per_output_token(arch: ModelArch, prompt_len: int, output_len: int) -> float:
    """Forward FLOPs of a whole request (prompt + output) per generated token."""
    return forward_flops(arch, prompt_len + output_len) / output_len


def decode_bytes_per_token(
    arch: ModelArch, precision: PrecisionClass, batch: int, context: float, kv_bytes: float = 2.0
) -> float:
    """Bytes read from GPU memory per generated token at ``batch`` sequences of mean ``context`` tokens
    (``kv_bytes`` per cached element: :func:`~solver.catalog.precisions.kv_element_bytes`)."""
    params = min(arch.params_b, active_params(arch) * batch) * 1e9
    weights = params * BYTES_PER_PARAM[precision]
    kv_per_token = arch.layers * arch.kv_elements_per_token_layer * kv_bytes
    return (weights + batch * kv_per_token * context) / batch


@functools.lru_cache(maxsize=4096)
def setting_numbers(setting: str) -> tuple[int, ...] | None:
    """The lengths in a setting text (``"2048"`` → ``(2048,)``, ``"0/1024"`` → ``(0, 1024)``), if numeric."""
    parts = setting.split("/")
    return tuple(int(part) for part in parts) if all(part.isdigit() for part in parts) else None


def work_at_setting(workload: ResolvedWorkload, mode: str, metric: str, setting: str) -> float | None:
    """Work per unit of ``workload`` in ``mode`` (``train``, ``decode`` or ``offline``) at a setting text
    (``"2048"``, ``"1000/1000"``, ``"0/1024"``); ``None`` outside the formulas."""
    arch, numbers = workload.arch, setting_numbers(setting)
    if not arch.is_transformer or numbers is None:
        return None
    precision = WORKLOAD_PRECISION_CLASS[workload.precision]
    if mode == "train" and len(numbers) == 1:
        per_token = train_flops_per_token(arch, numbers[0], workload.method, workload.recompute)
        return per_token * numbers[0] if metric == "sequences_per_s" else per_token
    if mode == "decode" and len(numbers) == 2 and numbers[1] > 0:
        kv_bytes = kv_element_bytes(workload.precision, workload.kv_cache)
        return decode_bytes_per_token(
            arch, precision, workload.batch_size, numbers[0] + numbers[1] / 2, kv_bytes
        )
    if mode == "offline" and len(numbers) == 2 and numbers[1] > 0:
        return offline_flops_per_output_token(arch, numbers[0], numbers[1])
    if mode == "offline" and len(numbers) == 1:
        return forward_flops(arch, numbers[0])
    return None
