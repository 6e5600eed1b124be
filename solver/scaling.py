"""Multi-GPU training: step time = compute + the communication that cannot be overlapped.

A data-parallel job of ``n`` GPUs in instances of ``g`` (tensor parallelism ``tp`` inside an instance,
``dp = n / tp`` data-parallel ranks, ``r = g / tp`` of them per instance, ``k`` instances) spends per
optimizer step:

- **compute**: ``a`` micro-batches of ``b·s`` tokens per rank, each ``b·s·t / tp`` seconds on every GPU
  (``t`` = one GPU's seconds per token, from the class model); ``a`` is the gradient accumulation that
  brings the global batch to :data:`GLOBAL_BATCH_TOKENS` of the workload class (never below one
  micro-batch per rank);
- **gradient synchronisation** of the trainable parameters (per tensor-parallel shard), once per step in
  the last micro-batch's backward pass: an all-reduce (``none``, ZeRO-1/2 as reduce-scatter + all-gather
  of the same volume) of ``S`` bytes costs ``2(r−1)/r · S / B_intra + 2(k−1)/k · S / W`` — the
  hierarchical ring of NCCL: a reduce-scatter inside the instance, an all-reduce of each shard between
  instances sharing the instance's network bandwidth ``W``, an all-gather back (Patarasuk & Yuan 2009;
  NCCL's ``busBW`` convention in nccl-tests' PERFORMANCE.md) — plus a latency per bucket;
- **ZeRO-3 / FSDP**: weights all-gathered in forward and backward and gradients reduce-scattered in
  every micro-batch (three half all-reduces), overlapped with that micro-batch's compute;
- **tensor parallelism** (only inside an NVLink/NVSwitch instance): four all-reduces of the ``b·s·h``
  activations per layer per micro-batch (Shoeybi et al. 2019, §3), partly hidden by the optimized stacks'
  communication overlap.

Overlap: a collective hides behind the compute it runs alongside (the backward pass for gradients, the
whole micro-batch for FSDP gathers) up to the stack's overlap quality; the last bucket never hides
(:data:`TAIL_EXPOSED`). ``efficiency = compute / (compute + exposed)``, ``communication_fraction =
exposed / step``, and the bottleneck is the link class (inside or between instances) that exposes more.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from solver.workload import ResolvedWorkload

__all__ = [
    "GLOBAL_BATCH_TOKENS",
    "OVERLAP",
    "TAIL_EXPOSED",
    "Bottleneck",
    "Links",
    "ScalingEstimate",
    "training_scaling",
]

Bottleneck = Literal["none", "intra_instance", "inter_instance"]

GLOBAL_BATCH_TOKENS: Final[dict[str, float]] = {
    "pretrain": 4 * 2**20,
    "full_finetune": 128 * 4096,
    "lora": 64 * 4096,
    "encoder_vision": 2048 * 512,
}
"""Tokens (samples × their length for encoders and vision models) per optimizer step the gradient
accumulation aims at: ~4M-token batches are typical of LLM pretraining at 1–400B (GPT-3 used 0.5–3.2M,
Chinchilla 1.5–3M, MPT 4M at 2k context), fine-tunes run 64–128 sequences per step."""

OVERLAP: Final[dict[str, tuple[float, float]]] = {"optimized": (0.90, 0.50), "standard": (0.75, 0.0)}
"""(share of a gradient/FSDP collective that hides behind compute, share of tensor-parallel traffic
hidden) per stack: Megatron/NeMo/torchtitan overlap bucketed reduce-scatter and parameter gathers with
backward and forward and split TP all-reduces behind GEMMs; DDP/FSDP in Transformers/Accelerate
overlap bucketed all-reduce with backward only."""

TAIL_EXPOSED: Final = 0.05
"""Share of a gradient synchronisation that never overlaps (the last bucket after the last layer)."""

_BUCKET_BYTES: Final = 25 * 2**20  # PyTorch DDP's default bucket (bucket_cap_mb=25)


class Links(msgspec.Struct, frozen=True, kw_only=True):
    """The bandwidths a job's collectives cross (bytes/s) and their latencies (s)."""

    gpus_per_instance: int
    intra_bytes_per_s: float
    intra_latency_s: float
    intra_label: str
    inter_bytes_per_s: float
    """The instance's whole network bandwidth achievable by collectives (0: instances cannot talk)."""
    inter_latency_s: float
    inter_label: str


class ScalingEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Share of linear scaling a multi-GPU job keeps, what bounds it, and how it was worked out."""

    efficiency: float
    communication_fraction: float
    bottleneck: Bottleneck
    method: str


def _all_reduce_s(size: float, ranks_here: int, instances: int, links: Links) -> tuple[float, float]:
    """(intra-instance, inter-instance) seconds of a hierarchical all-reduce of ``size`` bytes."""
    intra = inter = 0.0
    buckets = max(1, math.ceil(size / _BUCKET_BYTES))
    if ranks_here > 1:
        intra = 2 * (ranks_here - 1) / ranks_here * size / links.intra_bytes_per_s
        intra += buckets * 2 * links.intra_latency_s
    if instances > 1:
        if links.inter_bytes_per_s <= 0:
            return intra, math.inf
        inter = 2 * (instances - 1) / instances * size / links.inter_bytes_per_s
        inter += buckets * 2 * math.log2(instances) * links.inter_latency_s
    return intra, inter


def _trainable_params(rw: ResolvedWorkload, adapter_params: float) -> float:
    return adapter_params if rw.method != "full" else rw.arch.params_b * 1e9


def training_scaling(
    rw: ResolvedWorkload,
    links: Links,
    seconds_per_token: float,
    *,
    workload_class: str,
    stack: str,
    adapter_params: float = 0.0,
    global_batch_tokens: float | None = None,
) -> tuple[ScalingEstimate, float]:
    """Scaling of ``rw`` (``gpu_count``, ``tp``, ``sharding``) over ``links``; ``seconds_per_token`` is
    one GPU's time per token (sample for models without a sequence) at the class model's efficiency.
    ``global_batch_tokens`` overrides the class's :data:`GLOBAL_BATCH_TOKENS`. Also returns the spread
    (natural log) of the efficiency's uncertainty: half the communication share."""
    n, tp = rw.gpu_count, rw.tp
    if n <= 1:
        one = ScalingEstimate(efficiency=1.0, communication_fraction=0.0, bottleneck="none", method="one GPU")
        return one, 0.0
    per_instance = min(links.gpus_per_instance, n)
    instances = math.ceil(n / per_instance)
    dp = max(1, n // tp)
    ranks_here = max(1, per_instance // tp)
    micro_tokens = float(rw.batch_size * max(rw.seq_len, 1))
    target = global_batch_tokens or GLOBAL_BATCH_TOKENS.get(workload_class, 2**20)
    accumulation = max(1, math.ceil(target / (micro_tokens * dp)))
    micro_s = micro_tokens * seconds_per_token / tp
    compute = accumulation * micro_s
    hide, hide_tp = OVERLAP.get(stack, OVERLAP["standard"])
    backward = (0.5 if rw.method != "full" else 2.0 / 3.0) * micro_s
    grad_bytes = 2.0 if stack == "optimized" or rw.precision == "fp32" else 4.0
    grads = _trainable_params(rw, adapter_params) / tp * grad_bytes
    intra = inter = 0.0
    notes: list[str] = []
    if dp > 1:
        if rw.sharding == "zero3":
            weights = rw.arch.params_b * 1e9 / tp * 2.0
            a_intra, a_inter = _all_reduce_s(1.5 * weights, ranks_here, instances, links)
            exposed = _exposed(a_intra + a_inter, hide * micro_s) * accumulation
            g_intra, g_inter = a_intra * accumulation, a_inter * accumulation
            notes.append(f"ZeRO-3 gathers {1.5 * weights / 2**30:,.1f} GiB per micro-batch")
        else:
            g_intra, g_inter = _all_reduce_s(grads, ranks_here, instances, links)
            exposed = _exposed(g_intra + g_inter, hide * backward)
            notes.append(f"gradient all-reduce of {grads / 2**30:,.2f} GiB per step")
        intra, inter = _split(exposed, g_intra, g_inter)
    if tp > 1:
        layer_bytes = micro_tokens * rw.arch.hidden_size * 2.0
        tp_s = 4 * rw.arch.layers * 2 * (tp - 1) / tp * layer_bytes / links.intra_bytes_per_s
        tp_s += 4 * rw.arch.layers * links.intra_latency_s
        intra += (1 - hide_tp) * tp_s * accumulation
        notes.append(f"tensor parallel {tp}: {tp_s * 1e3:,.1f} ms of activations per micro-batch")
    return _result(compute, intra, inter, rw, links, instances, accumulation, notes)


def _exposed(collective_s: float, window_s: float) -> float:
    """Seconds of a collective left over after hiding behind ``window_s`` of compute."""
    if math.isinf(collective_s):
        return math.inf
    return max(0.0, collective_s - window_s) + TAIL_EXPOSED * min(collective_s, window_s)


def _split(exposed: float, intra: float, inter: float) -> tuple[float, float]:
    total = intra + inter
    if math.isinf(inter):
        return 0.0, math.inf
    if total <= 0:
        return 0.0, 0.0
    return exposed * intra / total, exposed * inter / total


def _result(
    compute: float,
    intra: float,
    inter: float,
    rw: ResolvedWorkload,
    links: Links,
    instances: int,
    accumulation: int,
    notes: list[str],
) -> tuple[ScalingEstimate, float]:
    where = (
        f"{rw.gpu_count} GPUs as {instances} instance(s) of {min(links.gpus_per_instance, rw.gpu_count)} "
        f"(tp {rw.tp}, dp {rw.gpu_count // rw.tp}, {rw.sharding}); {links.intra_label}"
        + (f"; between instances {links.inter_label}" if instances > 1 else "")
    )
    if math.isinf(inter):
        none = ScalingEstimate(
            efficiency=0.0,
            communication_fraction=1.0,
            bottleneck="inter_instance",
            method=f"{where}: the instances have no network to synchronise over",
        )
        return none, 0.0
    exposed = intra + inter
    step = compute + exposed
    efficiency = compute / step if step > 0 else 1.0
    fraction = exposed / step if step > 0 else 0.0
    bottleneck: Bottleneck = "none"
    if fraction >= 0.02:
        bottleneck = "inter_instance" if inter >= intra else "intra_instance"
    method = (
        f"{where}; step = compute {compute:,.2f} s ({accumulation} micro-batch(es) per rank) + "
        f"{exposed:,.3f} s exposed communication ({'; '.join(notes)})"
    )
    found = ScalingEstimate(
        efficiency=efficiency, communication_fraction=fraction, bottleneck=bottleneck, method=method
    )
    return found, 0.5 * fraction
