"""Per-GPU peak memory of a workload in three counters, with a breakdown, a band and the fit on a GPU.

The counters, each what a user reads off a real run:

* ``allocated_gib``: ``torch.cuda.max_memory_allocated()``, the peak of live tensors;
* ``reserved_gib``: ``torch.cuda.max_memory_reserved()``, what PyTorch's caching allocator holds at that
  peak: allocated plus the fragmentation of its cached segments;
* ``per_gpu_gib``: what ``nvidia-smi`` shows for the process: reserved plus the CUDA context (driver,
  kernels, cuBLAS/cuDNN handles) plus NCCL's communication buffers when more than one GPU takes part.
  **This is the counter** ``fits`` **compares with a GPU's capacity** (``fit_counter``): a job runs out of
  memory when the device is full, not when live tensors reach the capacity.

Training has two candidate peaks (the larger wins, named in ``peak_phase``): the turn from forward to
backward, where every saved activation, the loss tensors and the first gradient coexist with the
weights and optimizer state, and the optimizer step, where all gradients, the optimizer state and its
temporaries coexist. Gradients are freed after each step (``zero_grad(set_to_none=True)``, PyTorch's
default since 2.0); with ``gradient_accumulation_steps`` > 1 they stay live through the next
micro-batch's forward; with ``optimizer_in_backward`` they never all exist. The model state rules are
in :mod:`solver.memory.model_state`, the activation rules in :mod:`solver.memory.activations`; every rule and
constant in use is listed in ``assumptions``.

Parallelism: tensor parallelism divides every component (sequence parallelism for activations,
vocabulary-parallel loss for logits, KV heads for the cache); ZeRO/FSDP stages divide the optimizer
state and master copy (zero1), the gradients (zero2) and the weights (zero3) over the data-parallel
group, and zero3 holds two gathered transformer blocks plus the root module (embedding and head; FSDP
keeps the root unsharded between forward and backward) at the 16-bit working precision. Plain data
parallelism (``sharding: none``) adds DDP's gradient buckets, as large as the gradients
(``gradient_as_bucket_view=False``, the DistributedDataParallel default). CPU offload moves the master
copy, optimizer state and the step to host memory (``optimizer``), and also the weights and gradients,
streamed layer by layer like zero3 (``optimizer_and_params``); ``host_ram_gib`` is the host memory each
GPU's process then needs (pinned), including paged optimizer state the driver may evict.
"""

from __future__ import annotations

import functools
from typing import Final, Literal

import msgspec

from solver.catalog.gpus import GpuSpec
from solver.catalog.precisions import kv_element_bytes
from solver.memory.activations import (
    LOGIT_BYTES,
    ActivationParts,
    activation_parts,
    inference_workspace_bytes,
    logits_bytes,
)
from solver.memory.model_state import ModelState, model_state
from solver.memory.stages import Stage, pipeline_stages
from solver.spec.lora_targets import lora_adapter_params
from solver.spec.workload import ResolvedWorkload

__all__ = [
    "FIT_COUNTER",
    "GIB",
    "GpuFit",
    "MemoryBand",
    "MemoryBreakdown",
    "MemoryEstimate",
    "PeakPhase",
    "estimate_memory",
    "fit_on",
    "lora_params",
    "rank_high_gib",
    "rank_point_gib",
]

GIB: Final = 2.0**30
FIT_COUNTER: Final = "per_gpu_gib"

PeakPhase = Literal["forward_backward", "optimizer_step", "inference"]
_End = Literal["low", "point", "high"]

# Outside PyTorch's allocator: the CUDA context with lazy module loading (the default since CUDA 11.7 /
# PyTorch 1.13) holds ~0.3-0.6 GiB; eagerly loaded kernels (older stacks) 1.0-1.4 GiB (1343 MB measured
# on a V100 by the Hugging Face "model memory anatomy" page).
_CONTEXT_GIB: Final[dict[str, float]] = {"low": 0.3, "point": 0.5, "high": 1.4}
# NCCL communicators' buffers per GPU (NCCL_BUFFSIZE 4 MiB per channel and peer; NVLS adds more on
# NVSwitch systems).
_NCCL_GIB: Final[dict[str, float]] = {"low": 0.25, "point": 0.75, "high": 2.0}
# Caching-allocator fragmentation: share of the memory that churns during a step (activations, loss
# tensors, gradients, step temporaries) the allocator holds on top of the live tensors.
_FRAGMENTATION: Final[dict[str, float]] = {"low": 0.02, "point": 0.10, "high": 0.30}
_ACTIVATION_SCALE: Final[dict[str, float]] = {"low": 0.85, "point": 1.0, "high": 1.25}


class MemoryBreakdown(msgspec.Struct, frozen=True, kw_only=True):
    """Per-GPU GiB of each component live at the peak (``peak_phase``).

    ``weights`` … ``buffers`` add up to ``allocated_gib``; ``fragmentation`` brings it to
    ``reserved_gib``; ``cuda_context`` and ``nccl`` to ``per_gpu_gib``. ``runtime_overhead`` is their
    sum (everything outside the live tensors). ``buffers`` holds DDP gradient buckets, ZeRO-3/offload
    gathered layers or the optimizer step's temporaries. ``paged_optimizer_state`` is bitsandbytes
    paged state in managed memory: not part of any counter (the driver evicts it to host when needed;
    nvidia-smi shows the resident part).
    """

    weights: float
    master_weights: float
    gradients: float
    optimizer_state: float
    activations: float
    logits: float
    kv_cache: float
    buffers: float
    fragmentation: float
    cuda_context: float
    nccl: float
    runtime_overhead: float
    paged_optimizer_state: float


class MemoryBand(msgspec.Struct, frozen=True, kw_only=True):
    """The range ``per_gpu_gib`` is expected in, from the stated low and high rules and constants."""

    low_gib: float
    high_gib: float


class MemoryEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Predicted per-GPU memory in three counters; ``fits`` compares ``per_gpu_gib`` (``fit_counter``)."""

    per_gpu_gib: float
    allocated_gib: float
    reserved_gib: float
    band: MemoryBand
    fit_counter: Literal["per_gpu_gib"]
    peak_phase: PeakPhase
    host_ram_gib: float
    breakdown: MemoryBreakdown
    assumptions: list[str]


class GpuFit(msgspec.Struct, frozen=True, kw_only=True):
    """Whether ``per_gpu_gib`` fits one GPU's memory, by how much, and whether the band's top does."""

    gpu_id: str
    name: str
    capacity_gib: float
    fits: bool
    margin_gib: float
    margin_fraction: float
    counter: Literal["per_gpu_gib"]
    high_end_fits: bool


class _Peak(msgspec.Struct, kw_only=True):
    """Bytes per GPU live at the peak of one end of the band, and what surrounds it."""

    phase: PeakPhase = "inference"
    weights: float = 0.0
    master: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    activations: float = 0.0
    logits: float = 0.0
    kv_cache: float = 0.0
    buffers: float = 0.0
    churn: float = 0.0
    paged: float = 0.0
    host: float = 0.0

    def allocated(self) -> float:
        return (
            self.weights
            + self.master
            + self.gradients
            + self.optimizer
            + self.activations
            + self.logits
            + self.kv_cache
            + self.buffers
        )


def lora_params(rw: ResolvedWorkload) -> float:
    """LoRA adapter parameters of ``rw``: rank r on each targeted matrix of every layer (0 when full)."""
    return lora_adapter_params(rw.arch, rw.lora_rank, rw.lora_targets)


class _Placed(msgspec.Struct, kw_only=True):
    """Model state per GPU after tensor/ZeRO division and offload."""

    weights: float
    master: float
    gradients: float
    optimizer: float
    paged: float
    first_gradient: float
    gathered: float = 0.0
    buckets: float = 0.0
    host: float = 0.0
    step_on_host: bool = False


def _gathered_bytes(rw: ResolvedWorkload, weights: float) -> float:
    """Weights a layer-streaming stack holds unsharded: two blocks plus the root (embedding, head)."""
    arch = rw.arch
    if not arch.is_transformer:
        return weights
    params = arch.params_b * 1e9
    root = weights * min(float(arch.embedding_params), params) / params
    per_layer = (weights - root) / arch.layers
    return min(weights, 2 * per_layer + root)


def _place(
    rw: ResolvedWorkload, st: ModelState, end: _End, notes: list[str] | None, share: float = 1.0
) -> _Placed:
    """Divide the model state over tensor parallelism, the pipeline stage (``share`` of the
    parameters) and the ZeRO stage (over ``dp x cp``), then apply offload."""
    tp, dp, training = rw.tp / share, rw.dp * rw.cp, not rw.is_inference
    gradients = (st.gradients_low if end == "low" else st.gradients) / tp
    placed = _Placed(
        weights=st.weights / tp,
        master=st.master / tp,
        gradients=gradients,
        optimizer=st.optimizer / tp,
        paged=st.paged / tp,
        first_gradient=min(st.largest_gradient / rw.tp, gradients),
    )
    stage = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}[rw.sharding] if training and dp > 1 else 0
    if stage >= 1:
        placed.master /= dp
        placed.optimizer /= dp
        placed.paged /= dp
    if stage >= 2:
        placed.gradients /= dp  # the first gradient is produced whole, before its reduce-scatter
    if stage == 3:
        placed.gathered = _gathered_bytes(rw, st.weights) / rw.tp
        placed.weights /= dp
    if training and dp > 1 and rw.sharding == "none":
        placed.buckets = placed.gradients
        if notes is not None:
            notes.append("DDP gradient buckets as large as the gradients (gradient_as_bucket_view=False)")
    if notes is not None and rw.tp > 1:
        notes.append(
            f"tensor parallel over {rw.tp} GPUs divides weights, state, activations, logits and KV heads"
        )
    if notes is not None and stage:
        notes.append(
            f"{rw.sharding} over the {dp}-way data-parallel group"
            + ("; two gathered blocks + the unsharded root module (embedding, head)" if stage == 3 else "")
        )
    if training and rw.offload != "none":
        _offload(rw, st, placed, notes)
    return placed


def _offload(rw: ResolvedWorkload, st: ModelState, placed: _Placed, notes: list[str] | None) -> None:
    """Move master copy, optimizer state, gradients and the step (and the weights) to host memory.

    ZeRO-Offload copies each gradient to the host as backward produces it (the GPU keeps them in
    16-bit, a couple of layers' worth in flight) and runs the optimizer step on the CPU; with
    ``optimizer_and_params`` the weights live on the host too and stream in layer by layer.
    """
    host_grads = placed.gradients / st.grad_bytes * 4.0 if st.grad_bytes else 0.0
    placed.host = placed.master + placed.optimizer + placed.paged + host_grads
    placed.master = placed.optimizer = placed.paged = 0.0
    placed.step_on_host = True
    if st.working_copy_transient and st.grad_bytes:
        placed.gradients *= 2.0 / st.grad_bytes  # 16-bit on the GPU; the fp32 copy lives on the host
        placed.first_gradient *= 2.0 / st.grad_bytes
    layers = max(rw.arch.layers, 1)
    placed.gradients = min(placed.gradients, 2 * placed.gradients / layers + placed.first_gradient)
    if rw.offload == "optimizer_and_params":
        placed.host += placed.weights
        if not placed.gathered:
            placed.gathered = _gathered_bytes(rw, st.weights) / rw.tp
        placed.weights = 0.0
    if notes is not None:
        notes.append(
            f"offload {rw.offload}: master copy, optimizer state and an fp32 gradient copy"
            + (" and the weights" if rw.offload == "optimizer_and_params" else "")
            + " in host memory; gradients leave the GPU as backward produces them and the optimizer step"
            " runs on the CPU (ZeRO-Offload / FSDP CPU offload)"
        )


class _Inputs(msgspec.Struct, frozen=True, kw_only=True):
    """What does not depend on the end of the band: computed once per estimate."""

    state: ModelState
    activations: ActivationParts


def _stage_activations(rw: ResolvedWorkload, inputs: _Inputs, stage: Stage) -> float:
    """Saved activation bytes one rank of ``stage`` holds at its peak (before tp, cp and the band)."""
    parts = inputs.activations
    if stage.name == "all":
        return rw.arch.layers * parts.per_layer + parts.transient + parts.outside
    return stage.layers * parts.per_layer * stage.in_flight + parts.transient + parts.outside / 2


def _training_phases(
    rw: ResolvedWorkload, inputs: _Inputs, end: _End, notes: list[str] | None
) -> list[_Peak]:
    phases: list[_Peak] = []
    for i, stage in enumerate(pipeline_stages(rw)):
        phases.extend(_stage_phases(rw, inputs, end, notes if i == 0 else None, stage))
    if notes is not None and rw.pp > 1:
        first = pipeline_stages(rw)[0]
        notes.append(
            f"pipeline of {rw.pp} stages ({first.layers} layers each"
            + (f", {rw.vpp} interleaved chunks" if rw.vpp > 1 else "")
            + f"): the first stage holds the embedding and {first.in_flight:g} micro-batches of "
            "activations in flight (1F1B), the last the head and the logits; the larger peak counts"
        )
    if notes is not None and rw.cp > 1:
        notes.append(f"context parallel over {rw.cp} GPUs divides activations and logits")
    return phases


def _stage_phases(
    rw: ResolvedWorkload, inputs: _Inputs, end: _End, notes: list[str] | None, stage: Stage
) -> list[_Peak]:
    st = inputs.state
    placed = _place(rw, st, end, notes, stage.param_share)
    tp = rw.tp * rw.cp
    activations = _stage_activations(rw, inputs, stage) * _ACTIVATION_SCALE[end] / tp
    logits = logits_bytes(rw, end) / tp if stage.logits else 0.0
    accumulating = rw.gradient_accumulation_steps > 1 and not rw.optimizer_in_backward
    fwd_grads = placed.gradients if accumulating else placed.first_gradient
    forward = _Peak(
        phase="forward_backward",
        weights=placed.weights,
        master=placed.master,
        gradients=fwd_grads,
        optimizer=placed.optimizer,
        activations=activations,
        logits=logits,
        buffers=placed.buckets + placed.gathered,
        churn=activations + logits + fwd_grads,
    )
    # with the master copy on the host the 16-bit weights are the GPU's only copy: they persist
    keep_working_copy = not st.working_copy_transient or end == "high" or rw.offload != "none"
    temp = st.step_temp_high if end == "high" else st.step_temp_point
    shards = rw.dp * rw.cp if rw.sharding != "none" else 1
    temp = 0.0 if placed.step_on_host else temp * stage.param_share / rw.tp / shards
    # stepped in backward: one parameter's gradient at a time (after its reduce-scatter when sharded)
    step_grads = (
        min(placed.first_gradient, placed.gradients) if rw.optimizer_in_backward else placed.gradients
    )
    step = _Peak(
        phase="optimizer_step",
        weights=placed.weights if keep_working_copy else 0.0,
        master=placed.master,
        gradients=step_grads,
        optimizer=placed.optimizer,
        buffers=placed.buckets + temp,
        churn=step_grads + temp,
    )
    for phase in (forward, step):
        phase.paged, phase.host = placed.paged, placed.host + placed.paged
    if notes is not None:
        notes.append(
            f"logits: b·s·V·{LOGIT_BYTES[end]:g} bytes (fp32 log-softmax, its gradient and the "
            "incoming gradient at the start of backward)"
            if logits
            else "no vocabulary logits (encoder head or CNN)"
        )
        notes.append(
            "gradients: "
            + (
                "stepped inside backward, one parameter's gradient at a time"
                if rw.optimizer_in_backward
                else f"kept through the next forward ({rw.gradient_accumulation_steps} micro-batches per step)"
                if accumulating
                else "freed after each step (zero_grad(set_to_none=True)); only the first (output-head) "
                "gradient meets the activations"
            )
        )
    return [forward, step]


def _inference_phases(
    rw: ResolvedWorkload, inputs: _Inputs, end: _End, notes: list[str] | None
) -> list[_Peak]:
    st = inputs.state
    arch, tp = rw.arch, rw.tp
    activations, logits = inference_workspace_bytes(rw)
    kv = 0.0
    if arch.is_transformer:
        kv_bytes = kv_element_bytes(rw.precision, rw.kv_cache)
        kv = arch.layers * arch.kv_elements_per_token_layer * rw.seq_len * rw.batch_size * kv_bytes
        kv /= min(tp, arch.kv_heads) if arch.kv_cache_width is None and arch.kv_heads else 1
    activations *= _ACTIVATION_SCALE[end] / tp
    logits /= tp
    if notes is not None:
        notes.append(
            "inference: one layer's prefill workspace"
            + (" with eager attention scores" if rw.attention == "eager" else " (flash attention)")
            + f"; last-token logits; KV cache for {rw.seq_len} tokens × {rw.batch_size} sequences"
        )
        if tp > 1:
            notes.append(f"tensor parallel over {tp} GPUs divides weights, workspace, logits and KV heads")
    # A server preallocates its KV cache in one block (vLLM, TGI); HF generate grows it step by step.
    churn = activations + logits + (kv if rw.kind == "batch_inference" else 0.0)
    return [
        _Peak(
            phase="inference",
            weights=st.weights / tp,
            activations=activations,
            logits=logits,
            kv_cache=kv,
            churn=churn,
        )
    ]


class _Counters(msgspec.Struct, kw_only=True):
    """The phase with the allocated peak, and the reserved peak over all phases (bytes)."""

    peak: _Peak
    reserved: float
    phases: list[_Peak]


def _counters(rw: ResolvedWorkload, inputs: _Inputs, end: _End, notes: list[str] | None = None) -> _Counters:
    """Allocated peak (and its phase) and reserved peak: the allocator keeps what any phase reserved."""
    phases = (
        _inference_phases(rw, inputs, end, notes)
        if rw.is_inference
        else _training_phases(rw, inputs, end, notes)
    )
    peak = max(phases, key=lambda phase: phase.allocated())
    reserved = max(phase.allocated() + _FRAGMENTATION[end] * phase.churn for phase in phases)
    return _Counters(peak=peak, reserved=reserved, phases=phases)


def _outside_allocator(rw: ResolvedWorkload, end: str) -> tuple[float, float]:
    """(CUDA context, NCCL) bytes for one GPU at one end of the band."""
    nccl = _NCCL_GIB[end] * GIB if rw.gpu_count > 1 else 0.0
    return _CONTEXT_GIB[end] * GIB, nccl


def _per_gpu(rw: ResolvedWorkload, counters: _Counters, end: _End) -> float:
    context, nccl = _outside_allocator(rw, end)
    return counters.reserved + context + nccl


def _layout_free_key(rw: ResolvedWorkload) -> ResolvedWorkload:
    """``rw`` with a trivial layout: what its model state and activations are computed from."""
    return msgspec.structs.replace(
        rw, gpu_count=1, tp=1, dp=1, pp=1, vpp=1, cp=1, sharding="none", gradient_accumulation_steps=1,
        stated=frozenset(), global_batch=None, global_batch_tokens=None,
    )  # fmt: skip


@functools.lru_cache(maxsize=1024)
def _layout_free(rw: ResolvedWorkload) -> tuple[_Inputs, tuple[str, ...]]:
    """Model state and activations of ``rw`` (given with a trivial layout), with their notes.

    The planner estimates one workload on many layouts; these parts do not depend on the layout, so
    they are computed once per workload.
    """
    notes: list[str] = []
    inputs = _Inputs(
        state=model_state(rw, notes),
        activations=ActivationParts(0.0, 0.0, 0.0) if rw.is_inference else activation_parts(rw, notes),
    )
    return inputs, tuple(notes)


def rank_point_gib(rw: ResolvedWorkload) -> float:
    """The busiest rank's ``per_gpu_gib``, without the breakdown and notes of :func:`estimate_memory`
    (the layout search's fast path; same number; a layout over the memory needs no band)."""
    inputs, _ = _layout_free(_layout_free_key(rw))
    return _per_gpu(rw, _counters(rw, inputs, "point"), "point") / GIB


def rank_high_gib(rw: ResolvedWorkload, point_gib: float) -> float:
    """The high end of the busiest rank's band, given its ``per_gpu_gib`` (never below it)."""
    inputs, _ = _layout_free(_layout_free_key(rw))
    return max(_per_gpu(rw, _counters(rw, inputs, "high"), "high") / GIB, point_gib)


def _summary_notes(rw: ResolvedWorkload, counters: _Counters, nccl: float) -> list[str]:
    """The notes on the runtime overhead, the band and the phase of the peak."""
    return [
        f"fragmentation {_FRAGMENTATION['point']:.0%} of the memory that churns each step "
        f"(activations, loss tensors, gradients, temporaries; band {_FRAGMENTATION['low']:.0%}-"
        f"{_FRAGMENTATION['high']:.0%}); CUDA context {_CONTEXT_GIB['point']:g} GiB "
        f"(band {_CONTEXT_GIB['low']:g}-{_CONTEXT_GIB['high']:g})"
        + (
            f"; NCCL {_NCCL_GIB['point']:g} GiB (band {_NCCL_GIB['low']:g}-{_NCCL_GIB['high']:g})"
            if nccl
            else ""
        ),
        "band: low end with 16-bit mixed-precision gradients, a chunked loss (6 B/logit), 85% activations; "
        "high end with the working copy kept through the step, foreach optimizer temporaries, 18 B/logit, "
        "125% activations",
        "allocated peak at "
        + counters.peak.phase.replace("_", " ")
        + " ("
        + "; ".join(
            f"{phase.phase.replace('_', ' ')} {phase.allocated() / GIB:.2f} GiB"
            + (
                f" with {phase.activations / GIB:.2f} GiB activations and {phase.logits / GIB:.2f} GiB logits"
                if phase.phase == "forward_backward"
                else ""
            )
            for phase in counters.phases
        )
        + ")",
    ]


def _breakdown(point: _Peak, fragmentation: float, context: float, nccl: float) -> MemoryBreakdown:
    return MemoryBreakdown(
        weights=point.weights / GIB,
        master_weights=point.master / GIB,
        gradients=point.gradients / GIB,
        optimizer_state=point.optimizer / GIB,
        activations=point.activations / GIB,
        logits=point.logits / GIB,
        kv_cache=point.kv_cache / GIB,
        buffers=point.buffers / GIB,
        fragmentation=fragmentation / GIB,
        cuda_context=context / GIB,
        nccl=nccl / GIB,
        runtime_overhead=(fragmentation + context + nccl) / GIB,
        paged_optimizer_state=point.paged / GIB,
    )


def estimate_memory(rw: ResolvedWorkload) -> MemoryEstimate:
    """Peak memory one GPU of the workload needs in three counters, with breakdown, band and assumptions.

    With pipeline stages the GPU is the busiest rank (:mod:`solver.memory.stages`)."""
    notes: list[str] = [
        "counters: allocated = torch max_memory_allocated; reserved = allocated + caching-allocator "
        "fragmentation; per_gpu = reserved + CUDA context (+ NCCL buffers on >1 GPU), what nvidia-smi "
        "shows and what fits compares with capacity"
    ]
    inputs, layout_free_notes = _layout_free(_layout_free_key(rw))
    notes.extend(layout_free_notes)
    counters = _counters(rw, inputs, "point", notes)
    point = counters.peak
    low, high = _counters(rw, inputs, "low"), _counters(rw, inputs, "high")
    allocated = point.allocated()
    fragmentation = counters.reserved - allocated
    context, nccl = _outside_allocator(rw, "point")
    notes.extend(_summary_notes(rw, counters, nccl))
    per_gpu = (allocated + fragmentation + context + nccl) / GIB
    band = MemoryBand(
        low_gib=min(_per_gpu(rw, low, "low") / GIB, per_gpu),
        high_gib=max(_per_gpu(rw, high, "high") / GIB, per_gpu),
    )
    return MemoryEstimate(
        per_gpu_gib=per_gpu,
        allocated_gib=allocated / GIB,
        reserved_gib=(allocated + fragmentation) / GIB,
        band=band,
        fit_counter="per_gpu_gib",
        peak_phase=point.phase,
        host_ram_gib=point.host / GIB,
        breakdown=_breakdown(point, fragmentation, context, nccl),
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
        counter="per_gpu_gib",
        high_end_fits=estimate.band.high_gib <= gpu.memory_gib,
    )
