"""Memory (and throughput) estimates for a workload, shared by the HTTP API and the CLI."""

from __future__ import annotations

import msgspec

from service.gpu_lookup import resolve_gpu_names
from service.store import Store
from solver.memory import GpuFit, MemoryBand, MemoryBreakdown, estimate_memory, fit_on
from solver.workload import Workload, resolve_workload

__all__ = ["MemoryRequest", "MemoryResponse", "estimate_memory_for"]


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
