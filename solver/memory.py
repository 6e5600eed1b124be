"""Per-GPU peak memory of a workload: a breakdown by component, a band, and the fit on a GPU.

The number predicted is the **peak allocated memory** of one GPU (what ``torch.cuda.max_memory_allocated``
reports: weights, gradients, optimizer state, saved activations, logits, KV cache) in ``allocated_gib``,
plus a stated runtime overhead (CUDA context and kernels, caching-allocator reserve, NCCL buffers) in
``per_gpu_gib``, the figure that must fit in the GPU's memory. Every formula and constant in use is named
in ``assumptions``.

Sources of the formulas: model state per parameter from Rajbhandari et al. 2020 (ZeRO: 16 bytes for
mixed-precision Adam) and the Hugging Face "model memory anatomy" page (18 bytes with fp32 gradients);
activations from Korthikanti et al. 2022 (``s·b·h·(34 + 5·a·s/h)`` bytes per layer, whose MLP term is
generalised here to the model's real MLP width); 4-bit NF4 storage from Dettmers et al. 2023 (QLoRA).
"""

from __future__ import annotations

from typing import Final

import msgspec

from solver.gpus import GpuSpec
from solver.workload import ResolvedWorkload

__all__ = [
    "GIB",
    "GpuFit",
    "MemoryBand",
    "MemoryBreakdown",
    "MemoryEstimate",
    "estimate_memory",
    "fit_on",
    "lora_params",
]

GIB: Final = 2.0**30

# Bytes per stored weight. Quantised formats cover the transformer blocks' linear weights; embeddings and
# the output head stay 16-bit, as bitsandbytes, GPTQ/AWQ and vLLM's fp8 keep them.
_WEIGHT_BYTES: Final[dict[str, float]] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0 + 4.0 / 4096,  # int8 codes + one fp32 scale per output row (LLM.int8)
    "int4": 4.25 / 8,  # 4-bit codes + fp16 scale and zero point per 128-weight group (GPTQ/AWQ)
    "nf4": 4.5 / 8,  # 4-bit codes + one fp32 absmax per 64-weight block (bitsandbytes NF4/FP4)
}
_QUANTISED: Final = frozenset({"fp8", "int8", "int4", "nf4"})
# Optimizer state bytes per trainable parameter (not counting an fp32 master copy).
_OPTIMIZER_BYTES: Final[dict[str, float]] = {"adamw": 8.0, "adamw_8bit": 2.0, "sgd": 4.0}
_ADAPTER_BYTES: Final = 4.0  # LoRA adapters are kept in fp32 (PEFT's default), so are their gradients

_CONTEXT_GIB: Final = 1.0  # CUDA context + loaded kernels (1.3 GiB measured on a V100 by the HF docs)
_ALLOCATOR_GIB: Final = 0.25  # caching-allocator reserve beyond live tensors
_NCCL_GIB: Final = 0.75  # NCCL communicator buffers when more than one GPU takes part
_OVERHEAD_LOW_GIB: Final = 1.0
_OVERHEAD_HIGH_GIB: Final = 3.5
_FRAGMENTATION_HIGH: Final = 0.10  # allocator fragmentation on top of allocated, high end of the band
_ACTIVATION_LOW: Final = 0.85
_ACTIVATION_HIGH: Final = 1.25


class MemoryBreakdown(msgspec.Struct, frozen=True, kw_only=True):
    """Per-GPU GiB by component at the peak; ``runtime_overhead`` is not part of allocated memory."""

    weights: float
    gradients: float
    optimizer_state: float
    activations: float
    logits: float
    kv_cache: float
    runtime_overhead: float


class MemoryBand(msgspec.Struct, frozen=True, kw_only=True):
    """The range ``per_gpu_gib`` is expected in, from the stated low and high constants."""

    low_gib: float
    high_gib: float


class MemoryEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Predicted per-GPU memory: ``allocated_gib`` is the allocated peak, ``per_gpu_gib`` adds overhead."""

    per_gpu_gib: float
    allocated_gib: float
    band: MemoryBand
    breakdown: MemoryBreakdown
    assumptions: list[str]


class GpuFit(msgspec.Struct, frozen=True, kw_only=True):
    """Whether an estimate fits one GPU's memory, and by how much (negative margin: short by)."""

    gpu_id: str
    name: str
    capacity_gib: float
    fits: bool
    margin_gib: float
    margin_fraction: float


class _Parts(msgspec.Struct, kw_only=True):
    """Bytes per GPU of each component at one end of the band."""

    weights: float = 0.0
    gradients: float = 0.0
    optimizer_state: float = 0.0
    activations: float = 0.0
    logits: float = 0.0
    kv_cache: float = 0.0

    def total(self) -> float:
        return (
            self.weights
            + self.gradients
            + self.optimizer_state
            + self.activations
            + self.logits
            + self.kv_cache
        )


def _weight_bytes(rw: ResolvedWorkload) -> float:
    """Bytes of the (frozen or 16-bit) model weights on all GPUs together."""
    arch = rw.arch
    params = arch.params_b * 1e9
    if rw.precision not in _QUANTISED or not arch.is_transformer:
        return params * _WEIGHT_BYTES[rw.precision]
    embeddings = min(float(arch.embedding_params), params)
    return (params - embeddings) * _WEIGHT_BYTES[rw.precision] + embeddings * 2.0


def lora_params(rw: ResolvedWorkload) -> float:
    """LoRA adapter parameters: rank r on every attention projection and MLP matrix of every layer."""
    arch = rw.arch
    h, heads_dim = arch.hidden_size, arch.attention_heads * arch.effective_head_dim
    kv_dim = arch.kv_heads * arch.effective_head_dim
    attention = (h + heads_dim) * 2 + (h + kv_dim) * 2
    mlp = (3 if arch.gated_mlp else 2) * (h + arch.intermediate_size) * arch.experts
    return float(rw.lora_rank * arch.layers * (attention + mlp))


def _optimizer_bytes(rw: ResolvedWorkload) -> float:
    """Optimizer state per trainable parameter; Adafactor keeps one row and one column per matrix."""
    if rw.optimizer == "adafactor":
        return 8.0 / rw.arch.hidden_size if rw.arch.hidden_size else 0.1
    return _OPTIMIZER_BYTES[rw.optimizer]


def _model_state(rw: ResolvedWorkload, parts: _Parts, high: bool, notes: list[str]) -> None:
    """Weights, gradients and optimizer state per GPU (before tensor/ZeRO division)."""
    params = rw.arch.params_b * 1e9
    if rw.is_inference:
        parts.weights = _weight_bytes(rw)
        return
    if rw.method == "full":
        optimizer = _optimizer_bytes(rw)
        if rw.precision == "fp32":
            parts.weights, parts.gradients, parts.optimizer_state = 4 * params, 4 * params, optimizer * params
            notes.append(
                f"full fp32 training: 4 B weights + 4 B grads + {optimizer:g} B {rw.optimizer} state per param"
            )
        else:
            half = 2.0 + (1.0 if rw.precision == "fp8" else 0.0)
            grads = 4.0 if high else 2.0
            parts.weights, parts.gradients = half * params, grads * params
            parts.optimizer_state = (4.0 + optimizer) * params
            notes.append(
                f"mixed precision: {half:g} B {rw.precision} weights + 2 B grads (4 B fp32 grads at the high end) + "
                f"4 B fp32 master + {optimizer:g} B {rw.optimizer} state per param (16-18 B for AdamW)"
            )
        return
    adapters = lora_params(rw)
    optimizer = _optimizer_bytes(rw)
    parts.weights = _weight_bytes(rw) + _ADAPTER_BYTES * adapters
    parts.gradients = _ADAPTER_BYTES * adapters
    parts.optimizer_state = optimizer * adapters
    notes.append(
        f"{rw.method}: frozen {rw.precision} base + {adapters / 1e6:.1f}M rank-{rw.lora_rank} adapter params on all "
        f"attention and MLP projections, adapters fp32 with grads and {rw.optimizer} state"
    )


def _layer_activation_bytes(rw: ResolvedWorkload, attention_scores: bool) -> float:
    """Activation bytes one transformer layer saves for backward (Korthikanti et al. 2022).

    ``s·b·h·18`` (attention inputs, Q/K/V, projection input, layer-norm inputs, masks) plus the MLP's
    i-wide tensors (4 for a plain MLP, 8 for a gated one; a 4h plain MLP gives the paper's 34) plus
    ``5·a·s²·b`` for stored attention scores, all in 16-bit; fp32 training doubles them.
    """
    arch = rw.arch
    s, b, h = rw.seq_len, rw.batch_size, arch.hidden_size
    width = arch.intermediate_size * arch.active_experts
    per_layer = s * b * h * 18.0 + s * b * width * (8.0 if arch.gated_mlp else 4.0)
    if attention_scores:
        per_layer += 5.0 * arch.attention_heads * s * s * b
    return per_layer * (2.0 if rw.precision == "fp32" else 1.0)


def _activations(rw: ResolvedWorkload, parts: _Parts, notes: list[str]) -> None:
    """Saved activations (training) or the forward workspace (inference), and the logits."""
    arch = rw.arch
    act_bytes = 4.0 if rw.precision == "fp32" else 2.0
    if not arch.is_transformer:
        saved = (arch.saved_activations_per_sample or 0.0) * rw.batch_size * act_bytes
        parts.activations = saved / 8.0 if rw.is_inference else saved
        notes.append(
            f"{arch.name}: {arch.saved_activations_per_sample or 0:.3g} saved activation elements per "
            f"{arch.reference_input} sample"
            + ("; inference keeps ~1/8 of them live" if rw.is_inference else "")
        )
        return
    s, b = rw.seq_len, rw.batch_size
    if rw.is_inference:
        width = arch.intermediate_size * arch.active_experts
        parts.activations = s * b * (4.0 * arch.hidden_size + 2.0 * width) * act_bytes
        parts.logits = b * arch.vocab_size * 4.0
        notes.append(
            "inference: one layer's prefill workspace with memory-efficient attention; last-token logits"
        )
        return
    if rw.recompute == "full":
        checkpoints = arch.layers * s * b * arch.hidden_size * act_bytes
        parts.activations = checkpoints + _layer_activation_bytes(rw, attention_scores=True)
        notes.append("full recompute: 2·s·b·h bytes per layer + one layer's full activations")
    else:
        scores = rw.recompute == "none"
        parts.activations = arch.layers * _layer_activation_bytes(rw, attention_scores=scores)
        notes.append(
            "activations per layer s·b·h·18 + MLP i-wide tensors"
            + (" + 5·a·s²·b attention scores (no recompute)" if scores else " (attention core recomputed)")
        )
    if arch.family != "encoder":
        parts.logits = b * s * arch.vocab_size * 4.0 * 2.0
        notes.append("logits: b·s·V·4 bytes ×2 (fp32 logits and their gradient)")
    else:
        notes.append("encoder: task head outputs only, no vocabulary logits")


def _kv_cache(rw: ResolvedWorkload, parts: _Parts, notes: list[str]) -> None:
    """KV cache of an inference workload: 2·layers·kv_heads·head_dim·tokens·batch·bytes."""
    arch = rw.arch
    if not rw.is_inference or not arch.is_transformer:
        return
    kv_bytes = 4.0 if rw.precision == "fp32" else 2.0
    parts.kv_cache = arch.layers * arch.kv_elements_per_token_layer * rw.seq_len * rw.batch_size * kv_bytes
    notes.append(
        f"KV cache for {rw.seq_len} tokens × {rw.batch_size} sequences in {kv_bytes:g}-byte elements"
    )


def _shard(rw: ResolvedWorkload, parts: _Parts, notes: list[str]) -> None:
    """Divide each component over tensor parallelism and, for training, the ZeRO stage's data-parallel group."""
    tp, dp, arch = rw.tp, rw.dp, rw.arch
    parts.weights /= tp
    parts.gradients /= tp
    parts.optimizer_state /= tp
    parts.activations /= tp
    parts.logits /= tp
    if arch.kv_cache_width is None:
        parts.kv_cache /= min(tp, arch.kv_heads) if arch.kv_heads else 1
    if tp > 1:
        notes.append(f"tensor parallel over {tp} GPUs divides weights, state, activations and KV heads")
    if rw.is_inference or dp == 1 or rw.sharding == "none":
        return
    stage = {"zero1": 1, "zero2": 2, "zero3": 3}[rw.sharding]
    parts.optimizer_state /= dp
    if stage >= 2:
        parts.gradients /= dp
    if stage >= 3:
        parts.weights /= dp
    notes.append(f"{rw.sharding} shards over the {dp}-way data-parallel group")


def _allocated(rw: ResolvedWorkload, high: bool, notes: list[str]) -> _Parts:
    parts = _Parts()
    _model_state(rw, parts, high, notes)
    _activations(rw, parts, notes)
    _kv_cache(rw, parts, notes)
    _shard(rw, parts, notes)
    return parts


def estimate_memory(rw: ResolvedWorkload) -> MemoryEstimate:
    """Peak memory one GPU of the workload needs, with its breakdown, band and assumptions."""
    notes: list[str] = ["predicted number: peak allocated memory per GPU, plus runtime overhead to fit"]
    point = _allocated(rw, high=False, notes=notes)
    high = _allocated(rw, high=True, notes=[])
    multi = rw.gpu_count > 1
    overhead = _CONTEXT_GIB + _ALLOCATOR_GIB + (_NCCL_GIB if multi else 0.0)
    notes.append(
        f"runtime overhead {overhead:g} GiB: CUDA context {_CONTEXT_GIB:g} + allocator reserve {_ALLOCATOR_GIB:g}"
        + (f" + NCCL {_NCCL_GIB:g}" if multi else "")
        + f" (band {_OVERHEAD_LOW_GIB:g}-{_OVERHEAD_HIGH_GIB:g} GiB, +{_FRAGMENTATION_HIGH:.0%} fragmentation high)"
    )
    allocated = point.total() / GIB
    low_bytes = point.total() - point.activations * (1 - _ACTIVATION_LOW)
    high_bytes = high.total() + high.activations * (_ACTIVATION_HIGH - 1)
    band = MemoryBand(
        low_gib=low_bytes / GIB + _OVERHEAD_LOW_GIB,
        high_gib=high_bytes / GIB * (1 + _FRAGMENTATION_HIGH) + _OVERHEAD_HIGH_GIB,
    )
    breakdown = MemoryBreakdown(
        weights=point.weights / GIB,
        gradients=point.gradients / GIB,
        optimizer_state=point.optimizer_state / GIB,
        activations=point.activations / GIB,
        logits=point.logits / GIB,
        kv_cache=point.kv_cache / GIB,
        runtime_overhead=overhead,
    )
    return MemoryEstimate(
        per_gpu_gib=allocated + overhead,
        allocated_gib=allocated,
        band=band,
        breakdown=breakdown,
        assumptions=notes,
    )


def fit_on(estimate: MemoryEstimate, gpu: GpuSpec) -> GpuFit:
    """Whether ``estimate.per_gpu_gib`` fits ``gpu``'s memory, with the margin left (or missing)."""
    margin = gpu.memory_gib - estimate.per_gpu_gib
    return GpuFit(
        gpu_id=gpu.gpu_id,
        name=gpu.name,
        capacity_gib=gpu.memory_gib,
        fits=margin >= 0,
        margin_gib=margin,
        margin_fraction=margin / gpu.memory_gib if gpu.memory_gib > 0 else float("-inf"),
    )
