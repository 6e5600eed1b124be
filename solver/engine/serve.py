"""A load on ``gpu_count`` GPUs of one type: replicas of ``tp`` GPUs, the load split evenly, simulated.

Without a stated ``tp`` the least tensor parallelism whose replica holds the weights and a KV cache of
at least :data:`MIN_KV_REQUESTS` of the largest requests is taken (powers of two dividing the GPU
count and the attention heads, inside one instance: over NVLink where the GPUs have it, else over PCIe,
as vLLM and SGLang run it, its all-reduces priced on that interconnect). ``gpu_count / tp``
replicas then share the load: an offline batch and a request rate split evenly, a closed loop's
clients spread as evenly as they go; their throughputs add up and the latencies are one replica's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

import msgspec

from solver.catalog.gpus import GpuSpec, Interconnect, node_gpus
from solver.catalog.models import ModelArch
from solver.engine.load import run_load
from solver.engine.profiles import Engine
from solver.engine.replica import KvCache, build_replica
from solver.engine.result import EngineResult
from solver.engine.simulate import Replica
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.spec.serving import ServingLoad
from solver.throughput.hardware import Hardware

__all__ = [
    "MIN_KV_REQUESTS",
    "ServedLoad",
    "ServingSetup",
    "choose_tp",
    "decoder_refusal",
    "serve_at_load",
    "share_of_load",
]

MIN_KV_REQUESTS: Final = 4


def decoder_refusal(arch: ModelArch) -> str | None:
    """Why the engine model cannot serve ``arch`` (``None`` when it can): it simulates a decoder-only
    language model generating token by token, which an encoder (BERT, ViT), an encoder-decoder (T5:
    its encoder pass and cross-attention are not modelled) or a CNN is not."""
    if arch.is_decoder_llm:
        return None
    return (
        f"{arch.name} is not a decoder-only language model (family {arch.family}): the serving engine "
        "model simulates decoder LLMs generating token by token"
    )


class ServingSetup(NamedTuple):
    """What serves: the model, the GPU and its hardware view, and how the engine is configured."""

    arch: ModelArch
    gpu: GpuSpec
    hardware: Hardware
    precision: str
    kv_cache: KvCache = "auto"
    engine: Engine = "vllm"
    interconnect: Interconnect = "nvswitch"

    def replica(self, tp: int) -> Replica:
        return build_replica(self.arch, self.gpu, self.hardware, tp=tp, precision=self.precision,
                             kv_cache=self.kv_cache, engine=self.engine, interconnect=self.interconnect)  # fmt: skip


class ServedLoad(NamedTuple):
    """The replicas and what they did: throughputs for all of them, latencies of one."""

    tp: int
    replicas: int
    replica: Replica
    result: EngineResult


_TP_OPTIONS: Final = (1, 2, 4, 8, 16, 32, 64, 72)


def choose_tp(
    setup: ServingSetup,
    gpu_count: int,
    largest_request: int,
    stated: int | None = None,
    gpus_per_instance: int | None = None,
) -> int:
    """``stated``, or the least tensor parallelism inside one instance whose replica's KV cache holds
    the largest request :data:`MIN_KV_REQUESTS` times (module docstring); raises ThroughputUnavailable
    when none does, naming the tensor parallelism that would."""
    heads = max(setup.arch.attention_heads, 1)
    limit = min(gpu_count, gpus_per_instance or gpu_count)
    options = [stated] if stated is not None else [
        t for t in _TP_OPTIONS if t <= limit and gpu_count % t == 0 and heads % t == 0
    ]  # fmt: skip
    need = MIN_KV_REQUESTS * largest_request
    for tp in options:
        if gpu_count % tp:
            raise InvalidWorkload("tp", f"{tp} does not divide gpu_count {gpu_count}")
        if setup.replica(tp).kv_capacity_tokens >= need:
            return tp
    wider = [t for t in _TP_OPTIONS if t > max(options) and heads % t == 0 and t <= node_gpus(setup.gpu)]
    holds = next((t for t in wider if setup.replica(t).kv_capacity_tokens >= need), None)
    raise ThroughputUnavailable(
        f"{setup.arch.name} at {setup.precision} leaves no KV cache for {MIN_KV_REQUESTS} requests of "
        f"{largest_request:,} tokens on {gpu_count} x {setup.gpu.name} (tensor parallel {options})"
        + (
            f"; a replica of tensor parallel {holds} holds them (gpu_count a multiple of {holds})"
            if holds
            else ""
        )
    )


def share_of_load(load: ServingLoad, replicas: int) -> ServingLoad:
    """One replica's share of ``load``."""
    if replicas <= 1:
        return load
    if load.concurrency is not None:
        return msgspec.structs.replace(load, concurrency=max(1, math.ceil(load.concurrency / replicas)))
    if load.requests_per_s is not None:
        return msgspec.structs.replace(load, requests_per_s=load.requests_per_s / replicas)
    return load


def serve_at_load(
    setup: ServingSetup,
    classes: Sequence[tuple[int, int, float]],
    load: ServingLoad,
    *,
    gpu_count: int,
    tp: int | None = None,
    gpus_per_instance: int | None = None,
) -> ServedLoad:
    """Simulate ``load`` of the mix ``classes`` on ``gpu_count`` GPUs in instances of
    ``gpus_per_instance`` (default: one instance holds them all; module docstring)."""
    largest = max(prompt + output for prompt, output, _ in classes)
    chosen = choose_tp(setup, gpu_count, largest, tp, gpus_per_instance)
    replicas = gpu_count // chosen
    replica = setup.replica(chosen)
    one = run_load(replica, classes, share_of_load(load, replicas))
    total = msgspec.structs.replace(
        one,
        output_tokens_per_s=one.output_tokens_per_s * replicas,
        total_tokens_per_s=one.total_tokens_per_s * replicas,
        requests_per_s=one.requests_per_s * replicas,
    )
    return ServedLoad(tp=chosen, replicas=replicas, replica=replica, result=total)
