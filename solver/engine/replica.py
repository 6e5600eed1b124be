"""One serving replica as the simulation sees it: its step costs, KV-cache size and scheduler limits.

The KV cache gets what the engine leaves of its memory share: ``memory_fraction`` (vLLM's
``gpu_memory_utilization``, 0.9) of the replica's ``tp`` GPUs, less the weights and
:data:`RUNTIME_RESERVE_GIB` per GPU (CUDA context, CUDA graphs and the activation workspace of a
token-budget step, which vLLM profiles before it sizes the cache). One KV element takes
:func:`kv_element_bytes` — the one width the memory model and the throughput estimates share: 2
bytes (4 at fp32) unless the cache is stored in fp8 (``kv_cache: "fp8"``), whatever the weights'
precision.
"""

from __future__ import annotations

from typing import Final

from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.models import ModelArch
from solver.catalog.precisions import KvCache, PrecisionClass, kv_element_bytes, weight_bytes_per_param
from solver.engine.profiles import Engine, EngineProfile, engine_profile
from solver.engine.simulate import Replica
from solver.engine.step_cost import StepCost
from solver.errors import ThroughputUnavailable
from solver.throughput.hardware import Hardware
from solver.throughput.links import instance_links

__all__ = ["RUNTIME_RESERVE_GIB", "KvCache", "build_replica", "kv_element_bytes", "weight_bytes_per_param"]

RUNTIME_RESERVE_GIB: Final = 1.5
_GIB: Final = 1024**3
_SPEED: Final[dict[str, PrecisionClass]] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "int8": "int8",
    "int4": "bf16",  # weight-only: dequantised to 16-bit for the matmul
    "nf4": "bf16",
    "fp4": "fp4",
}


def _speed(hardware: Hardware, precision: str) -> PrecisionClass:
    """The matmul class ``precision`` runs at: its own, else 16-bit, else fp32 (a GPU without tensor
    cores for it dequantises or upcasts; :func:`~solver.catalog.precisions.precision_refusal` is the
    caller's check that it can run the format at all)."""
    for option in (_SPEED[precision], "bf16", "fp32"):
        if hardware.supports(option):
            return option
    raise ThroughputUnavailable(f"{hardware.gpu_id} has no matmul rate for {precision}")


def _attention_speed(speed: PrecisionClass) -> PrecisionClass:
    """The class attention's matmuls run at: the weights' class, but fp8 for fp4 weights (the fused
    attention kernels — FlashAttention, TensorRT-LLM's FMHA/XQA — have fp8 and 16-bit paths, no fp4)."""
    return "fp8" if speed == "fp4" else speed


def _fp4_share(profile: EngineProfile, speed: PrecisionClass) -> float:
    return profile.fp4_compute_efficiency if speed == "fp4" else 1.0


def build_replica(
    arch: ModelArch,
    gpu: GpuSpec,
    hardware: Hardware,
    *,
    tp: int,
    precision: str,
    kv_cache: KvCache = "auto",
    engine: Engine = "vllm",
    interconnect: Interconnect = "nvswitch",
) -> Replica:
    """The replica of ``tp`` × ``gpu`` serving ``arch`` at ``precision`` on ``engine``; its KV cache
    may be 0 tokens (the weights do not leave room), which the caller refuses."""
    profile = engine_profile(engine)
    links = instance_links(gpu, interconnect if tp > 1 else "none", tp, network_gbps=0.0,
                           network_efficiency=0.0, network_latency_s=0.0, network_label="none")  # fmt: skip
    kv_bytes = kv_element_bytes(precision, kv_cache)
    speed = _speed(hardware, precision)
    cost = StepCost(
        arch,
        profile,
        tp=tp,
        matmul_flops_per_s=hardware.achievable_tflops(speed) * 1e12 * _fp4_share(profile, speed),
        attention_flops_per_s=hardware.achievable_tflops(_attention_speed(speed)) * 1e12,
        bandwidth_bytes_per_s=hardware.bandwidth_tbps * 1e12,
        weight_bytes_per_param=weight_bytes_per_param(precision),
        kv_bytes_per_element=kv_bytes,
        bus_bytes_per_s=links.intra_bytes_per_s,
        bus_latency_s=links.intra_latency_s,
    )
    usable = tp * (gpu.memory_gib * profile.memory_fraction - RUNTIME_RESERVE_GIB) * _GIB
    free = usable - cost.dense_bytes - cost.expert_bytes
    per_token = cost.kv_bytes_per_token * cost.kv_read_scale
    return Replica(
        cost=cost,
        kv_capacity_tokens=max(int(free / per_token), 0) if per_token > 0 else 0,
        token_budget=profile.token_budget(gpu.memory_gib, gpu.name),
        max_seqs=profile.max_seqs(gpu.memory_gib, gpu.name),
        block_tokens=profile.block_tokens,
        request_overhead_s=profile.request_overhead_s,
        reserve_output=profile.reserve_output,
    )
