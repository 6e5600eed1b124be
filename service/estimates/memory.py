"""Per-GPU memory of a workload, checked against catalog GPUs (``solver.memory.peak`` does the estimate)."""

from __future__ import annotations

from service.catalog.gpu_names import resolve_gpu_names
from service.db.snapshot import CatalogSnapshot
from service.estimates.schemas import MemoryRequest, MemoryResponse
from service.http import body_of
from solver import estimate_memory, fit_on, resolve_workload

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
    return body_of(MemoryResponse, estimate, resolved, model=resolved.arch.name, fits=fits)
