"""Memory (and throughput) estimates for a workload, shared by the HTTP API and the CLI."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from pricing.interconnect import derive_interconnect
from service.catalog.gpu_names import one_gpu, resolve_gpu_names
from service.db.store import Store
from solver.gpus import Interconnect
from solver.memory import GpuFit, MemoryBand, MemoryBreakdown, estimate_memory, fit_on
from solver.throughput import ProfileSource, estimate_throughput
from solver.workload import Workload, resolve_workload

__all__ = [
    "MemoryRequest",
    "MemoryResponse",
    "ThroughputRequest",
    "ThroughputResponse",
    "estimate_memory_for",
    "estimate_throughput_for",
]


class MemoryRequest(Workload, forbid_unknown_fields=True, kw_only=True):
    """A workload, and optionally the GPU to check it against (default: every catalog GPU)."""

    gpu: str | None = msgspec.field(default=None)


class MemoryResponse(msgspec.Struct, kw_only=True):
    """Predicted per-GPU memory: ``per_gpu_gib`` = allocated peak + runtime overhead, with its band.

    ``fits`` lists every requested GPU (or the whole catalog) with the margin left, largest first.
    """

    model: str
    kind: str
    gpu_count: int
    tp: int
    seq_len: int
    per_gpu_gib: float
    allocated_gib: float
    band: MemoryBand
    breakdown: MemoryBreakdown
    assumptions: list[str]
    fits: list[GpuFit]


def estimate_memory_for(store: Store, request: MemoryRequest) -> MemoryResponse:
    """Validate the workload, estimate its per-GPU memory and check it against GPUs of the catalog."""
    resolved = resolve_workload(request)
    estimate = estimate_memory(resolved)
    snapshot = store.snapshot
    gpu_ids = resolve_gpu_names(snapshot, request.gpu) if request.gpu is not None else sorted(snapshot.gpus)
    fits = sorted(
        (fit_on(estimate, snapshot.gpus[gpu_id]) for gpu_id in gpu_ids),
        key=lambda fit: (-fit.margin_gib, fit.gpu_id),
    )
    return MemoryResponse(
        model=resolved.arch.name,
        kind=resolved.kind,
        gpu_count=resolved.gpu_count,
        tp=resolved.tp,
        seq_len=resolved.seq_len,
        per_gpu_gib=estimate.per_gpu_gib,
        allocated_gib=estimate.allocated_gib,
        band=estimate.band,
        breakdown=estimate.breakdown,
        assumptions=estimate.assumptions,
        fits=fits,
    )


class ThroughputRequest(Workload, forbid_unknown_fields=True, kw_only=True):
    """A workload on ``gpu_count`` GPUs of one type (``gpu``), linked by ``interconnect``.

    ``interconnect`` defaults to what that GPU's instances usually have (the offers' derivation rule:
    SXM/OAM boards of 8 → nvswitch, PCIe cards → pcie, one GPU → none).
    """

    gpu: Annotated[
        str, msgspec.Meta(min_length=1, max_length=200, description="GPU id, name or alias (one GPU).")
    ]
    interconnect: Interconnect | None = None
    output_len: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=10_000_000, description="batch_inference: tokens generated per request."),
        ]
        | None
    ) = None


class ThroughputResponse(msgspec.Struct, kw_only=True):
    """A throughput with its provenance: ``measured`` cites the matching rows; ``derived`` says how."""

    value: float
    unit: str
    provenance: Literal["measured", "derived"]
    route: str
    sources: list[ProfileSource]
    confidence: Literal["high", "medium", "low"]
    confidence_score: float
    method: str
    model: str
    gpu: str
    gpu_count: int
    interconnect: Interconnect
    interconnect_derived: bool


def estimate_throughput_for(store: Store, request: ThroughputRequest) -> ThroughputResponse:
    """Validate, then estimate the workload's throughput on the requested GPUs."""
    gpu = one_gpu(store.snapshot, request.gpu)
    resolved = resolve_workload(request)
    derived = request.interconnect is None
    interconnect: Interconnect = (
        derive_interconnect(gpu, request.gpu_count, "")[0]
        if request.interconnect is None
        else request.interconnect
    )
    snapshot = store.snapshot
    estimate = estimate_throughput(
        resolved,
        gpu,
        request.gpu_count,
        interconnect,
        snapshot.profiles,
        snapshot.gpus,
        output_len=request.output_len,
        index=snapshot.profile_index(),
    )
    return ThroughputResponse(
        value=estimate.value,
        unit=estimate.unit,
        provenance=estimate.provenance,
        route=estimate.route,
        sources=estimate.sources,
        confidence=estimate.confidence,
        confidence_score=estimate.confidence_score,
        method=estimate.method,
        model=resolved.arch.name,
        gpu=gpu.gpu_id,
        gpu_count=request.gpu_count,
        interconnect=interconnect,
        interconnect_derived=derived,
    )
