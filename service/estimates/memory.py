"""Per-GPU memory of a workload, checked against catalog GPUs (``solver.memory`` does the estimate)."""

from __future__ import annotations

from service.catalog.gpu_names import resolve_gpu_names
from service.db.snapshot import CatalogSnapshot
from service.estimates.schemas import MemoryRequest, MemoryResponse
from solver.memory import estimate_memory, fit_on
from solver.workload import resolve_workload

__all__ = ["estimate_memory_for"]


def estimate_memory_for(snapshot: CatalogSnapshot, request: MemoryRequest) -> MemoryResponse:
    """Validate the workload, estimate its per-GPU memory and check it against GPUs of the catalog."""
    resolved = resolve_workload(request)
    estimate = estimate_memory(resolved)
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
        recompute=resolved.recompute,
        per_gpu_gib=estimate.per_gpu_gib,
        allocated_gib=estimate.allocated_gib,
        reserved_gib=estimate.reserved_gib,
        fit_counter=estimate.fit_counter,
        peak_phase=estimate.peak_phase,
        host_ram_gib=estimate.host_ram_gib,
        band=estimate.band,
        breakdown=estimate.breakdown,
        assumptions=estimate.assumptions,
        fits=fits,
    )
