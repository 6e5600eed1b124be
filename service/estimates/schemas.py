"""Bodies of POST /v1/memory and POST /v1/throughput: a workload in, an estimate with its provenance out."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from solver import (
    ENGINES,
    Band,
    EfficiencyUsed,
    Engine,
    GpuFit,
    Interconnect,
    Layout,
    MemoryBand,
    MemoryBreakdown,
    Network,
    NetworkClass,
    Percentiles,
    ProfileSource,
    RequestClass,
    ScalingEstimate,
    ServingLoad,
    Workload,
)

__all__ = [
    "MemoryRequest",
    "MemoryResponse",
    "NetworkIn",
    "ServingAtLoad",
    "ThroughputRequest",
    "ThroughputResponse",
]

_Tokens = Annotated[int, msgspec.Meta(ge=1, le=10_000_000)]


class MemoryRequest(Workload, forbid_unknown_fields=True, kw_only=True):
    """A workload, and optionally the GPU to check it against (default: every catalog GPU)."""

    gpu: str | None = msgspec.field(default=None)


class MemoryResponse(msgspec.Struct, kw_only=True):
    """Predicted per-GPU memory in three counters, with the band of the one ``fits`` checks.

    ``allocated_gib`` is torch's max allocated, ``reserved_gib`` what the caching allocator holds at the
    peak (fragmentation included), ``per_gpu_gib`` what nvidia-smi shows (reserved + CUDA context +
    NCCL buffers) and what must fit (``fit_counter``). ``host_ram_gib`` is the host memory CPU offload
    (and paged optimizers) need. ``fits`` lists every requested GPU (or the whole catalog) with the
    margin left, largest first, and whether the band's high end fits too.
    """

    model: str
    kind: str
    gpu_count: int
    tp: int
    seq_len: int
    recompute: str
    per_gpu_gib: float
    allocated_gib: float
    reserved_gib: float
    fit_counter: Literal["per_gpu_gib"]
    peak_phase: str
    host_ram_gib: float
    band: MemoryBand
    breakdown: MemoryBreakdown
    assumptions: list[str]
    fits: list[GpuFit]


class NetworkIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """The network between instances: its class and each instance's bandwidth to the others."""

    network_class: NetworkClass = msgspec.field(name="class")
    gbps: Annotated[
        float, msgspec.Meta(ge=0, le=100_000, description="Gbit/s per instance to other instances.")
    ]


class ThroughputRequest(Workload, forbid_unknown_fields=True, kw_only=True):
    """A workload on ``gpu_count`` GPUs of one type (``gpu``), in instances of ``gpus_per_instance``
    linked inside by ``interconnect`` and between them by ``network``.

    ``interconnect`` defaults to what that GPU's instances usually have (the offers' derivation rule:
    SXM/OAM boards of 8 → nvswitch, PCIe cards → pcie, one GPU → none); ``gpus_per_instance`` to 8 (72
    for GB200/GB300); ``network`` to the GPU generation's reference InfiniBand cluster, one NIC per GPU
    (200 Gbit/s on A100, 400 on H100 and later).
    """

    gpu: Annotated[
        str, msgspec.Meta(min_length=1, max_length=200, description="GPU id, name or alias (one GPU).")
    ]
    interconnect: Interconnect | None = None
    gpus_per_instance: (
        Annotated[int, msgspec.Meta(ge=1, le=1024, description="GPUs in one instance (node).")] | None
    ) = None
    network: NetworkIn | None = None
    output_len: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=10_000_000, description="batch_inference: tokens generated per request."),
        ]
        | None
    ) = None
    input_tokens: (
        Annotated[_Tokens, msgspec.Meta(description="serving: prompt tokens per request (engine model).")]
        | None
    ) = None
    output_tokens: (
        Annotated[_Tokens, msgspec.Meta(description="serving: generated tokens per request (engine model).")]
        | None
    ) = None
    request_mix: (
        Annotated[
            list[RequestClass],
            msgspec.Meta(
                max_length=64, description="serving: request sizes and shares, instead of one size."
            ),
        ]
        | None
    ) = None
    load: (
        Annotated[
            ServingLoad,
            msgspec.Meta(description="serving: offline, concurrency or requests_per_s (default offline)."),
        ]
        | None
    ) = None
    engine: Annotated[
        Engine, msgspec.Meta(description=f"serving: the engine simulated, one of {', '.join(ENGINES)}.")
    ] = "vllm"


class ServingAtLoad(msgspec.Struct, kw_only=True):
    """What ``replicas`` replicas of ``tp`` GPUs do at ``load`` (split evenly between them), simulated:
    throughput, latency percentiles (milliseconds), and the engine limits that shaped them."""

    engine: Engine
    load: ServingLoad
    tp: int
    replicas: int
    output_tokens_per_s: float
    total_tokens_per_s: float
    requests_per_s: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    e2e_ms: Percentiles
    stable: bool
    """Poisson arrivals: whether the replicas keep up (else the queue grows and latencies with it)."""
    kv_cache_tokens: int
    """Tokens the KV cache of one replica holds."""
    max_batch: int
    token_budget: int
    requests_simulated: int


class ThroughputResponse(msgspec.Struct, kw_only=True):
    """A throughput with its provenance: ``measured`` cites the matching rows; ``class_model`` says
    which class, stack and efficiency it used and cites the rows that set them; ``band`` is its
    10th-90th percentile range and ``scaling`` what multi-GPU training keeps of linear scaling."""

    value: float
    unit: str
    provenance: Literal["measured", "derived"]
    route: str
    workload_class: str
    stack: str
    efficiency: EfficiencyUsed
    band: Band
    scaling: ScalingEstimate | None
    sources: list[ProfileSource]
    confidence: Literal["high", "medium", "low"]
    confidence_score: float
    method: str
    model: str
    gpu: str
    gpu_count: int
    interconnect: Interconnect
    interconnect_derived: bool
    gpus_per_instance: int
    network: Network
    layout: Layout | None = None
    """Training: the parallel layout priced (tp, pp, vpp, cp, dp, zero, micro_batch,
    gradient_accumulation, recompute, global_batch_tokens), chosen by the layout search where the
    request left it out."""
    memory_per_gpu_gib: float | None = None
    """Training: the busiest rank's memory in that layout (``per_gpu_gib`` of the memory model)."""
    serving: ServingAtLoad | None = None
    """Serving through the engine model: what the replicas do at the load."""
