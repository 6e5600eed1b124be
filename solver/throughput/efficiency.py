"""One GPU's time per unit of work: a roofline whose efficiencies belong to the workload class.

Every unit (a training token or sample, a prompt token, a generated token) costs

    t = (a·(1 + w/h) / φ_p + λ · b) / E  +  κ · c  +  d / U  +  e  +  o · steps

seconds, where the parts ``a … e`` come from the work and the hardware alone and the constants ``E``,
``U``, ``φ``, ``κ`` are calibrated per class (:mod:`solver.throughput.class_fit`):

- ``a``: matmul FLOPs ÷ the GPU's achievable matmul FLOP/s at the job's precision (peak × MAMF share ×
  power factor, :mod:`solver.throughput.hardware`). Training: ``2·P`` per pass over the active parameters, 3 passes
  for all weights, 2 for LoRA (the frozen base needs no weight gradients), one more with full
  recomputation and half of one with selective; QLoRA's NF4 dequantisation divides by :data:`~solver.throughput.workcost.QLORA_DEQUANT_EFFICIENCY`.
- ``w/h``: GEMMs of a model of width ``h`` run below the large-shape MAMF (tile and wave quantisation,
  more launches per FLOP); ``w`` is calibrated on how MFU grows with model width.
- ``b``: attention-core FLOPs (``2·c·L·d·T`` per pass, ``c = 1`` causal; a training backward runs
  :data:`ATTENTION_BACKWARD_PASSES` passes of it, the score matrix recomputed) ÷ the GPU's fused-attention rate
  (:meth:`~solver.throughput.hardware.Hardware.attention_tflops`): FlashAttention-style kernels, 16-bit
  even in FP8 training; ``λ``
  (calibrated on how throughput falls with sequence length) says how far the measured stacks' attention
  kernels fall behind that.
- ``E``: the **class efficiency** (share of the achievable matmul speed a whole step keeps: launches,
  small GEMMs, bubbles, input pipeline), shared by every GPU; ``φ_p`` what FP8/FP4/int8/4-bit work keeps
  of its nominal speed-up (1 for 16-bit), calibrated within bounds so that it is never slower than
  16-bit nor faster than the peak ratio.
- ``c``: elements of the layers' widths read and written by non-matmul kernels (norms, residuals,
  activation functions, rotary embeddings: ``L·(h + i)`` per pass, 2 bytes each) ÷ streaming bandwidth
  (:data:`BANDWIDTH_EFFICIENCY`); ``κ`` how many times each is touched (calibrated per class group).
- ``d``: bytes a decoding step must read (weights once per step, each sequence's KV cache) per
  generated token ÷ bandwidth; ``U`` the share of bandwidth decoding reaches (the decode class).
- ``e``: fixed seconds no efficiency changes (tensor-parallel all-reduces of a decoding step);
  ``o``: what the serving engine spends per decoding step outside the GPU kernels (scheduling,
  sampling, launch gaps), calibrated per stack, shared by the ``steps = 1/batch`` tokens of a step;
  for training, what the stack spends per layer and micro-batch outside the kernels' work (Python
  dispatch and launches of the layer's forward and backward), shared by the micro-batch's
  ``micro-batch × seq_len`` tokens (``steps`` = layers per micro-batch token).

The memory terms make efficiency depend on hardware beyond its peak: a GPU with more bandwidth per FLOP
(A100 against H100, H200 against H100) keeps a higher MFU, small models lose more than large ones.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from solver.catalog.models import ModelArch, active_params
from solver.catalog.precisions import PrecisionClass
from solver.throughput.hardware import ATTENTION_EFFICIENCY, Hardware
from solver.throughput.workcost import BYTES_PER_PARAM, QLORA_DEQUANT_EFFICIENCY, RECOMPUTE_PASSES

__all__ = [
    "ATTENTION_BACKWARD_PASSES",
    "ATTENTION_EFFICIENCY",
    "BANDWIDTH_EFFICIENCY",
    "Parts",
    "WorkTerms",
    "compute_parts",
    "decode_parts",
    "forward_terms",
    "overhead_key",
    "seconds",
    "training_terms",
    "with_micro_batches",
]

BANDWIDTH_EFFICIENCY: Final = 0.85
"""Share of the quoted memory bandwidth streaming kernels reach (copy kernels measure 85–92 % of it on
A100/H100-class parts)."""

_TRAIN_PASSES: Final[dict[str, float]] = {"full": 3.0, "lora": 2.0, "qlora": 2.0}

ATTENTION_BACKWARD_PASSES: Final = 2.5
"""Forward passes' worth of attention-core matmuls a fused (FlashAttention-style) backward runs: five
``T×T×d`` matmuls (the score matrix recomputed, then dV, dP, dQ, dK) against the forward's two (Shah et
al. 2024, FlashAttention-3, §4.1: "we multiply the forward pass FLOPs by 2.5 (since there are 2 matmuls
in the forward pass and 5 matmuls in the backward pass, due to recomputation)"; llm-foundry's benchmark
README adds the same recompute to its HFU). The core has no weights, so a LoRA backward runs all five
too. Model FLOPs (MFU's numerator) keep the 3-pass convention (:func:`training_terms` with
``kernel=False``)."""


class WorkTerms(NamedTuple):
    """The GPU-independent terms of one unit of compute-bound work (``width``: the model's hidden size,
    0 when unknown)."""

    linear_flops: float
    attention_flops: float
    traffic_elements: float
    width: float = 0.0


class Parts(NamedTuple):
    """Seconds per unit at full efficiency (see the module docstring)."""

    a: float
    b: float
    c: float
    d: float = 0.0
    e: float = 0.0
    steps: float = 0.0
    """Decoding steps (``1 / batch``) or training micro-batches per unit; each costs the stack's
    calibrated fixed overhead ``o``."""
    narrow: float = 0.0
    """``a / h`` (h the model width): narrow layers run their GEMMs below the MAMF of large shapes, by
    ``1 + w / h`` with ``w`` calibrated (tile and wave quantisation, launch gaps)."""

    def scaled(self, factor: float) -> Parts:
        """The parts of ``factor`` units."""
        return Parts(*(value * factor for value in self))

    def plus(self, other: Parts) -> Parts:
        """The parts of a unit of this work and one of ``other`` together."""
        return Parts(*(a + b for a, b in zip(self, other, strict=True)))


def seconds(
    parts: Parts,
    *,
    efficiency: float,
    bandwidth: float,
    precision: float,
    traffic: float,
    attention: float = 1.0,
    step_overhead: float = 0.0,
    gemm_width: float = 0.0,
) -> float:
    """``(a / φ + λ · b) / E + κ · c + d / U + e + o · steps`` with E = ``efficiency``, U = ``bandwidth``,
    φ = ``precision``, κ = ``traffic``, λ = ``attention`` (the calibrated attention slowdown) and
    o = ``step_overhead`` (seconds the serving engine spends per decoding step beyond the GPU work);
    ``gemm_width`` is w of :attr:`Parts.narrow`."""
    compute = ((parts.a + gemm_width * parts.narrow) / precision + attention * parts.b) / efficiency
    return compute + traffic * parts.c + parts.d / bandwidth + parts.e + step_overhead * parts.steps


def _attention_width(arch: ModelArch) -> int:
    return arch.attention_heads * arch.effective_head_dim


def _per_pass(arch: ModelArch, tokens: int) -> WorkTerms:
    causal = 1 if arch.family == "decoder" else 2
    linear = 2.0 * active_params(arch) * 1e9
    attention = 2.0 * causal * arch.layers * _attention_width(arch) * float(tokens)
    widths = arch.hidden_size + arch.intermediate_size * arch.active_experts
    return WorkTerms(linear, attention, float(arch.layers * widths), float(arch.hidden_size))


def training_terms(
    arch: ModelArch, seq_len: int, method: str, recompute: str, *, kernel: bool = True
) -> WorkTerms:
    """Terms of one training token of a transformer (see the module docstring): the work the kernels
    run (attention's backward at :data:`ATTENTION_BACKWARD_PASSES`), or with ``kernel=False`` the model
    FLOPs of the usual convention (attention counted as the linear layers are)."""
    recomputed = RECOMPUTE_PASSES.get(recompute, 0.0)
    passes = _TRAIN_PASSES[method] + recomputed
    attention_passes = 1.0 + ATTENTION_BACKWARD_PASSES + recomputed if kernel else passes
    one = _per_pass(arch, max(seq_len, 1))
    dequant = 1.0 / QLORA_DEQUANT_EFFICIENCY if method == "qlora" else 1.0
    return WorkTerms(
        one.linear_flops * passes * dequant,
        one.attention_flops * attention_passes,
        one.traffic_elements * passes,
        one.width,
    )


def with_micro_batches(parts: Parts, micro_batch: int | None, seq_len: int, layers: int) -> Parts:
    """Training parts per token with ``steps`` = layer passes of a micro-batch per token (``layers /
    (micro_batch · seq_len)``), each paying the stack's fixed per-layer, per-micro-batch overhead
    (dispatching and launching that layer's forward and backward kernels); unchanged when the
    micro-batch is unknown."""
    if not micro_batch or micro_batch < 1 or seq_len < 1 or layers < 1:
        return parts
    return parts._replace(steps=layers / (micro_batch * seq_len))


def overhead_key(work_class: str, stack: str) -> str:
    """Whose fixed overhead applies: a decoding step's (``decode/<stack>``) or a training
    micro-batch's (``train/<stack>``)."""
    return f"decode/{stack}" if work_class in ("decode", "prefill", "offline") else f"train/{stack}"


def forward_terms(arch: ModelArch, prompt_len: int) -> WorkTerms:
    """Terms of one prompt token in a forward (prefill) pass over ``prompt_len`` tokens."""
    return _per_pass(arch, max(prompt_len, 1))


def compute_parts(terms: WorkTerms, hardware: Hardware, precision: PrecisionClass) -> Parts:
    """The :class:`Parts` of compute-bound ``terms`` on ``hardware`` at ``precision``.

    A GPU without the precision's tensor cores raises ``KeyError`` (check :meth:`Hardware.supports`).
    fp32 work runs its attention in TF32; everything else runs attention in 16 bit.
    """
    attention_precision: PrecisionClass = "fp32" if precision == "fp32" else "bf16"
    matmul = hardware.achievable_tflops(precision) * 1e12
    attention = hardware.attention_tflops(attention_precision) * 1e12
    bandwidth = hardware.bandwidth_tbps * 1e12 * BANDWIDTH_EFFICIENCY
    memory = 2.0 * terms.traffic_elements / bandwidth if bandwidth > 0 else 0.0
    a = terms.linear_flops / matmul
    return Parts(a, terms.attention_flops / attention, memory, narrow=a / terms.width if terms.width else 0.0)


def decode_parts(
    arch: ModelArch,
    hardware: Hardware,
    precision: PrecisionClass,
    *,
    batch: int,
    context: float,
    gpus: int = 1,
    step_fixed_s: float = 0.0,
    kv_bytes: float = 2.0,
) -> Parts:
    """Parts of one generated token when ``batch`` sequences of mean ``context`` tokens decode together
    on ``gpus`` GPUs (a tensor-parallel group, or pipeline stages: each holds ``1/gpus`` of the model).

    Weights are read once per step (``min(P, P_active · batch)`` parameters: a mixture of experts touches
    more experts as the batch grows), each sequence's KV cache once; ``step_fixed_s`` (the group's
    all-reduces) is paid once per step and shared by its ``batch`` tokens; ``kv_bytes`` is the KV
    width (:func:`~solver.catalog.precisions.kv_element_bytes`).
    """
    params = min(arch.params_b, active_params(arch) * batch) * 1e9
    weights = params * BYTES_PER_PARAM[precision]
    kv = arch.layers * arch.kv_elements_per_token_layer * kv_bytes * context * batch
    bandwidth = hardware.bandwidth_tbps * 1e12 * BANDWIDTH_EFFICIENCY * gpus
    compute = compute_parts(forward_terms(arch, max(int(context), 1)), hardware, precision).scaled(1.0 / gpus)
    return Parts(
        compute.a, compute.b, 0.0, (weights + kv) / bandwidth / batch, step_fixed_s / batch, 1.0 / batch
    )
