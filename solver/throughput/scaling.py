"""Multi-GPU training: what a parallel layout keeps of linear scaling, and why.

:func:`training_scaling` lays the workload's layout (``tp``, ``pp``, ``vpp``, ``cp``, ``sharding``, its
micro-batch ``batch_size``) out over the links, sets the gradient accumulation that brings the step to
its global batch (:mod:`solver.throughput.global_batch`; never more than it) and prices the step with
:mod:`solver.throughput.step`: ``efficiency = compute / (compute + bubble + exposed communication)``,
``communication_fraction = (bubble + exposed) / step``; the bottleneck is the link class (inside or
between instances) that exposes more, or the pipeline bubble when it is larger.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from solver.spec.workload import ResolvedWorkload
from solver.throughput.global_batch import CLASS_GLOBAL_BATCH_TOKENS, global_batch_tokens
from solver.throughput.step import OVERLAP, TAIL_EXPOSED, Layout, Links, StepTime, sizes_of, step_time

__all__ = [
    "GLOBAL_BATCH_TOKENS",
    "OVERLAP",
    "TAIL_EXPOSED",
    "Bottleneck",
    "Links",
    "ScalingEstimate",
    "layout_of",
    "training_scaling",
]

Bottleneck = Literal["none", "intra_instance", "inter_instance", "pipeline_bubble"]

GLOBAL_BATCH_TOKENS: Final = CLASS_GLOBAL_BATCH_TOKENS
"""Tokens per step of the non-pretraining classes (see :mod:`solver.throughput.global_batch`)."""


class ScalingEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Share of linear scaling a multi-GPU job keeps, what bounds it, and how it was worked out."""

    efficiency: float
    communication_fraction: float
    bottleneck: Bottleneck
    method: str
    bubble_fraction: float = 0.0
    """Share of the step the pipeline stages stand idle ((p−1)/(v·m+p−1))."""
    inter_instance_gb_per_nic: float = 0.0
    """GB each NIC sends per step for data-parallel collectives (all groups of the instance counted)."""


def layout_of(rw: ResolvedWorkload, target_tokens: float) -> Layout:
    """The layout ``rw`` states, with the accumulation that reaches ``target_tokens`` without
    exceeding it (at least one micro-batch)."""
    dp = max(1, rw.gpu_count // (rw.tp * rw.pp * rw.cp))
    seq = max(rw.seq_len, 1)
    per_pass = dp * rw.batch_size * seq
    accumulation = max(1, math.floor(target_tokens / per_pass + 1e-9))
    return Layout(
        tp=rw.tp,
        pp=rw.pp,
        vpp=rw.vpp,
        cp=rw.cp,
        dp=dp,
        zero=rw.sharding if dp * rw.cp > 1 else "none",
        micro_batch=rw.batch_size,
        gradient_accumulation=accumulation,
        recompute=rw.recompute,
        global_batch_tokens=per_pass * accumulation,
    )


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
    """Scaling of ``rw``'s layout over ``links``; ``seconds_per_token`` is one GPU's time per token
    (sample for models without a sequence) at the class model's efficiency. ``global_batch_tokens``
    (else ``rw.global_batch_tokens``, else the class's rule) sets the accumulation. Also returns the
    spread (natural log) of the efficiency's uncertainty: half the communication share."""
    stated = global_batch_tokens or rw.global_batch_tokens
    target, _ = _target(rw, workload_class, stated)
    layout = layout_of(rw, target)
    if rw.gpu_count <= 1:
        one = ScalingEstimate(efficiency=1.0, communication_fraction=0.0, bottleneck="none", method="one GPU")
        return one, 0.0
    step = step_time(layout, links, seconds_per_token, sizes_of(rw, adapter_params, stack), stack)
    return _result(step, layout, links)


def _target(rw: ResolvedWorkload, workload_class: str, stated: float | None) -> tuple[float, str]:
    return global_batch_tokens(workload_class, rw.arch.params_b * 1e9, stated)


def _result(step: StepTime, layout: Layout, links: Links) -> tuple[ScalingEstimate, float]:
    instances = math.ceil(layout.gpus / max(1, min(links.gpus_per_instance, layout.gpus)))
    where = (
        f"{layout.gpus} GPUs as {instances} instance(s) of {min(links.gpus_per_instance, layout.gpus)} "
        f"({layout.text()}); {links.intra_label}"
        + (f"; between instances {links.inter_label}" if instances > 1 else "")
    )
    if math.isinf(step.inter):
        none = ScalingEstimate(
            efficiency=0.0,
            communication_fraction=1.0,
            bottleneck="inter_instance",
            method=f"{where}: the instances have no network to synchronise over",
        )
        return none, 0.0
    total = step.total
    efficiency = step.compute / total if total > 0 else 1.0
    fraction = 1.0 - efficiency
    bottleneck: Bottleneck = "none"
    if fraction >= 0.02:
        worst = max(
            (step.inter, "inter_instance"), (step.intra, "intra_instance"), (step.bubble, "pipeline_bubble")
        )
        bottleneck = worst[1]  # type: ignore[assignment]
    method = (
        f"{where}; step = compute {step.compute:,.2f} s ({layout.gradient_accumulation} micro-batch(es) "
        f"per pipeline) + bubble {step.bubble:,.3f} s + {step.intra + step.inter:,.3f} s exposed "
        f"communication ({'; '.join(step.notes) or 'none'})"
    )
    found = ScalingEstimate(
        efficiency=efficiency,
        communication_fraction=fraction,
        bottleneck=bottleneck,
        method=method,
        bubble_fraction=step.bubble / total if total > 0 else 0.0,
        inter_instance_gb_per_nic=step.inter_bytes_per_nic / 1e9,
    )
    return found, 0.5 * (step.intra + step.inter) / total if total > 0 else 0.0
