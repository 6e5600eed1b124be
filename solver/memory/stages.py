"""Pipeline stages: what one rank of a pipeline-parallel job holds (Narayanan et al. 2021; Korthikanti et al. 2022).

A job split into ``pp`` stages gives each rank ``ceil(L / pp)`` transformer layers; the first stage
also holds the input embedding, the last the output head (a tied embedding is kept on both, as
Megatron-LM does). The model state of a rank is its stage's share of the parameters.

Activations under the 1F1B schedule (PipeDream-Flush, Narayanan et al. 2021 §2.2.1): the first stage
starts ``p`` micro-batches before its first backward pass, so it holds the saved activations of
``min(p, m)`` micro-batches (``m`` = micro-batches per step); the last stage holds one. With ``v``
interleaved (virtual) stages per rank the first stage holds ``(1 + (p - 1) / (p·v))`` times that
(Korthikanti et al. 2022 §4.2.3). The one layer recomputed in backward under checkpointing is
transient and counted once. The vocabulary logits and their loss tensors live on the last stage only.

Context parallelism (``cp``) splits every sequence into ``cp`` chunks, one per rank: activations and
logits are divided by ``cp``, the weights are not (ZeRO stages shard over ``dp x cp``, as Megatron's
distributed optimizer does).

The peak of a job is the larger of its first and last stage (every counter).
"""

from __future__ import annotations

import math

import msgspec

from solver.spec.workload import ResolvedWorkload

__all__ = ["Stage", "pipeline_stages"]


class Stage(msgspec.Struct, frozen=True, kw_only=True):
    """One pipeline rank's share of the model: parameters, layers, in-flight micro-batches, logits."""

    name: str
    param_share: float
    """Share of the model's parameters (and so of its model state) the rank holds."""
    layers: int
    in_flight: float
    """Micro-batches whose saved activations the rank holds at its peak."""
    embedding_output: bool
    logits: bool


def _in_flight(rw: ResolvedWorkload) -> float:
    p, v = rw.pp, rw.vpp
    m = max(1, rw.gradient_accumulation_steps)
    held = float(min(p, m))
    if v > 1:
        held *= 1.0 + (p - 1) / (p * v)
    return held


def pipeline_stages(rw: ResolvedWorkload) -> list[Stage]:
    """The stages whose memory bounds the job's peak: the whole model when ``pp`` is 1, else the
    first stage (embedding, most micro-batches in flight) and the last (head, logits)."""
    arch = rw.arch
    if rw.pp <= 1 or not arch.is_transformer or arch.layers < 2:
        return [Stage(name="all", param_share=1.0, layers=arch.layers, in_flight=1.0,
                      embedding_output=True, logits=True)]  # fmt: skip
    params = arch.params_b * 1e9
    embedding = min(float(arch.vocab_size * arch.hidden_size), params / 2)
    per_layer = max(params - arch.embedding_params, 0.0) / arch.layers
    layers = math.ceil(arch.layers / rw.pp)
    share = min(1.0, (layers * per_layer + embedding) / params)
    first = Stage(name="first stage", param_share=share, layers=layers, in_flight=_in_flight(rw),
                  embedding_output=True, logits=False)  # fmt: skip
    last = Stage(name="last stage", param_share=share, layers=layers, in_flight=1.0,
                 embedding_output=False, logits=True)  # fmt: skip
    return [first, last]
