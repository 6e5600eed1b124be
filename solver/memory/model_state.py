"""Bytes of model state for training and inference: weights, master copy, gradients, optimizer state.

Everything here is the whole model's worth (before tensor parallelism, ZeRO sharding or offload,
which :mod:`solver.memory.peak` applies). The rules, each with its source:

* Mixed precision (``master_weights: fp32``) keeps an fp32 copy of every trainable weight, fp32
  gradients and fp32 optimizer state, and computes with a 16-bit working copy of the weights: 2 B
  working + 4 B master + 4 B gradient + 8 B AdamW = 18 B/param, the Hugging Face "model memory anatomy"
  count. (ZeRO, Rajbhandari et al. 2020, counts 16 B with 16-bit gradients: the low end of the band.)
  With the PyTorch autocast (HF Trainer) or FSDP mixed-precision stacks the 16-bit copy only lives
  through forward and backward (autocast's cast cache, FSDP's per-layer unsharded parameters), so it
  is not live during the optimizer step; Megatron/DeepSpeed keep it (high end of the band).
* Pure 16-bit training (``master_weights: none``): 2 B weights, 2 B gradients, and optimizer state in
  the parameter dtype, because ``torch.optim`` creates its state with ``torch.zeros_like(param)``:
  AdamW 4 B/param in bf16 (LitGPT ``bf16-true``, ``torch_dtype=bfloat16`` models in HF).
* bitsandbytes 8-bit optimizers: two 8-bit states plus one fp32 absmax per 256-value block
  (``Optimizer2State.init_state``), 2.03 B/param whatever the parameter dtype. bitsandbytes 32-bit
  optimizers (``paged_adamw`` = ``PagedAdamW32bit``) keep fp32 state even for bf16 parameters.
* Paged optimizers allocate their state with ``cudaMallocManaged`` (bitsandbytes ``get_paged``), outside
  PyTorch's caching allocator: it is not in ``max_memory_allocated``/``reserved`` and the driver evicts it
  to host memory under pressure, so it never has to fit; it is reported as ``paged``.
* Lion keeps one momentum tensor, SGD one momentum buffer, Adafactor factored second moments (a row and
  a column per matrix, ≈ 8/h B per parameter; Shazeer & Stern 2018).
* Optimizer-step temporaries: the fused and per-parameter implementations need at most one
  parameter's worth (point); ``torch.optim`` with ``foreach=True`` allocates a state-sized temporary
  list ("the foreach implementation uses ~ sizeof(params) more peak memory", torch.optim.AdamW docs;
  high end). bitsandbytes steps are fused kernels.
* LoRA/QLoRA: the base stays frozen at its stored precision; the adapters, their gradients and their
  optimizer state are fp32 under mixed precision (PEFT casts adapters to fp32 by default) or 16-bit
  when training is pure 16-bit.
* Quantised weights: NF4 4.5 bits/param (4-bit codes + one fp32 absmax per 64 weights; Dettmers et al.
  2023), int8 1 byte + one fp32 scale per output row (LLM.int8), int4 4.25 bits (GPTQ/AWQ groups of 128);
  the embedding and output head stay 16-bit.
"""

from __future__ import annotations

from typing import Final

import msgspec

from solver.catalog.models import ModelArch
from solver.catalog.precisions import WEIGHT_BYTES
from solver.spec.lora_targets import lora_adapter_params
from solver.spec.workload import ResolvedWorkload

__all__ = ["ModelState", "largest_weight_params", "model_state", "weight_bytes"]

_QUANTISED: Final = frozenset({"fp8", "int8", "int4", "nf4"})
_BNB_8BIT: Final = frozenset({"adamw_8bit", "paged_adamw_8bit"})
_PAGED: Final = frozenset({"paged_adamw", "paged_adamw_8bit"})
_BNB_BLOCK: Final = 256  # values per fp32 absmax in bitsandbytes' blockwise 8-bit optimizer state


class ModelState(msgspec.Struct, frozen=True, kw_only=True):
    """Whole-model bytes of each kind of state (before any parallel division or offload).

    ``weights`` is what the forward pass reads (frozen base plus trainable working copy); ``trainable``
    the parameters that get gradients; ``working_copy_transient`` says the 16-bit weights are not live
    during the optimizer step (mixed precision); ``largest_gradient`` and the ``step_temp_*`` figures
    feed the per-phase peaks.
    """

    weights: float = 0.0
    master: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    paged: float = 0.0
    trainable: float = 0.0
    grad_bytes: float = 0.0
    largest_gradient: float = 0.0
    step_temp_point: float = 0.0
    step_temp_high: float = 0.0
    working_copy_transient: bool = False
    gradients_low: float = 0.0


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def weight_bytes(rw: ResolvedWorkload) -> float:
    """Bytes of the model weights at their stored precision (quantised layers keep 16-bit embeddings)."""
    arch = rw.arch
    params = arch.params_b * 1e9
    if rw.precision not in _QUANTISED or not arch.is_transformer:
        return params * WEIGHT_BYTES[rw.precision]
    embeddings = min(float(arch.embedding_params), params)
    return (params - embeddings) * WEIGHT_BYTES[rw.precision] + embeddings * 2.0


def largest_weight_params(arch: ModelArch) -> float:
    """Elements of the largest single weight tensor (usually the embedding or the output head)."""
    if not arch.is_transformer:
        return arch.params_b * 1e9 / 50  # a CNN's largest layer is a small fraction of the model
    h = arch.hidden_size
    return float(
        max(
            arch.vocab_size * h,
            h * arch.intermediate_size,
            h * arch.attention_heads * arch.effective_head_dim,
        )
    )


def _state_dtype_bytes(rw: ResolvedWorkload) -> float:
    """Bytes of one optimizer-state element for torch optimizers: fp32 beside an fp32 master, else 16-bit."""
    return 4.0 if rw.precision == "fp32" or rw.master_weights == "fp32" else 2.0


def _optimizer_bytes(rw: ResolvedWorkload) -> float:
    """Optimizer state bytes per trainable parameter."""
    state = _state_dtype_bytes(rw)
    if rw.optimizer in _BNB_8BIT:
        return 2.0 * (1.0 + 4.0 / _BNB_BLOCK)
    if rw.optimizer == "paged_adamw":
        return 8.0
    if rw.optimizer == "adamw":
        return 2.0 * state
    if rw.optimizer in ("lion", "sgd"):
        return state
    return 8.0 / rw.arch.hidden_size if rw.arch.hidden_size else 0.1  # adafactor: factored moments


def _step_temporaries(rw: ResolvedWorkload, trainable: float, largest: float) -> tuple[float, float]:
    """(point, high) bytes of the optimizer step's temporaries."""
    if rw.optimizer in _BNB_8BIT or rw.optimizer == "paged_adamw":
        return 0.0, 0.0
    state = _state_dtype_bytes(rw)
    if rw.optimizer == "adafactor":
        return 2 * 4.0 * largest, 2 * 4.0 * largest
    return state * largest, state * trainable


def _full_training(rw: ResolvedWorkload, notes: list[str] | None) -> ModelState:
    params = rw.arch.params_b * 1e9
    largest = min(largest_weight_params(rw.arch), params)
    optimizer = _optimizer_bytes(rw)
    if rw.precision == "fp32":
        weights, master, grads, grads_low = 4.0, 0.0, 4.0, 4.0
        _note(notes, "fp32 training: 4 B weights + 4 B gradients per parameter")
    elif rw.master_weights == "none":
        weights, master, grads, grads_low = 2.0 + (1.0 if rw.precision == "fp8" else 0.0), 0.0, 2.0, 2.0
        _note(
            notes,
            f"pure {rw.precision} training (no master copy): 2 B weights + 2 B gradients per parameter, "
            "optimizer state in the parameter dtype (torch.optim allocates it with zeros_like(param))",
        )
    else:
        weights, master, grads, grads_low = 2.0 + (1.0 if rw.precision == "fp8" else 0.0), 4.0, 4.0, 2.0
        _note(
            notes,
            f"mixed precision: {weights:g} B {rw.precision} working weights + 4 B fp32 master + 4 B fp32 "
            "gradients per parameter (2 B gradients at the low end); the working copy is freed before "
            "the optimizer step (autocast cache / FSDP resharding), kept at the high end (Megatron, DeepSpeed)",
        )
    temp_point, temp_high = _step_temporaries(rw, params, largest)
    in_allocator, paged = _place_optimizer(rw, optimizer * params, params, notes)
    return ModelState(
        weights=weights * params,
        master=master * params,
        gradients=grads * params,
        gradients_low=grads_low * params,
        optimizer=in_allocator,
        paged=paged,
        grad_bytes=grads,
        trainable=params,
        largest_gradient=grads * largest,
        step_temp_point=temp_point,
        step_temp_high=temp_high,
        working_copy_transient=master > 0,
    )


def _place_optimizer(
    rw: ResolvedWorkload, total: float, trainable: float, notes: list[str] | None
) -> tuple[float, float]:
    """(allocator, managed) bytes of optimizer state: paged optimizers use CUDA managed memory."""
    per_param = total / trainable if trainable else 0.0
    if rw.optimizer in _PAGED:
        _note(
            notes,
            f"{rw.optimizer}: {per_param:.3g} B/param of state in CUDA managed memory (bitsandbytes paged): "
            "outside torch's allocator, paged to host under pressure, so not counted against the GPU",
        )
        return 0.0, total
    _note(notes, f"{rw.optimizer}: {per_param:.3g} B of optimizer state per trainable parameter")
    return total, 0.0


def _adapter_training(rw: ResolvedWorkload, notes: list[str] | None) -> ModelState:
    adapters = lora_adapter_params(rw.arch, rw.lora_rank, rw.lora_targets)
    adapter_bytes = 4.0 if rw.precision == "fp32" or rw.master_weights == "fp32" else 2.0
    largest = adapters / max(rw.arch.layers * max(len(rw.lora_targets), 1), 1)
    temp_point, temp_high = _step_temporaries(rw, adapters, largest)
    _note(
        notes,
        f"{rw.method}: frozen {rw.precision} base + {adapters / 1e6:.1f}M rank-{rw.lora_rank} adapter "
        f"parameters on {', '.join(rw.lora_targets)} of every layer; adapters and their gradients "
        f"{'fp32' if adapter_bytes == 4 else '16-bit'}",
    )
    in_allocator, paged = _place_optimizer(rw, _optimizer_bytes(rw) * adapters, adapters, notes)
    return ModelState(
        weights=weight_bytes(rw) + adapter_bytes * adapters,
        gradients=adapter_bytes * adapters,
        gradients_low=adapter_bytes * adapters,
        optimizer=in_allocator,
        paged=paged,
        grad_bytes=adapter_bytes,
        trainable=adapters,
        largest_gradient=adapter_bytes * largest,
        step_temp_point=temp_point,
        step_temp_high=temp_high,
    )


def model_state(rw: ResolvedWorkload, notes: list[str] | None = None) -> ModelState:
    """Whole-model state bytes of ``rw``, with a note for each rule applied."""
    if rw.is_inference:
        _note(notes, f"inference: {rw.precision} weights only")
        return ModelState(weights=weight_bytes(rw))
    if rw.method == "full":
        return _full_training(rw, notes)
    return _adapter_training(rw, notes)
