"""Throughput of a workload on one GPU type, with its provenance (``solver.throughput`` does the estimate)."""

from __future__ import annotations

from pricing.interconnect import derive_interconnect
from service.catalog.gpu_names import one_gpu
from service.db.snapshot import CatalogSnapshot
from service.estimates.schemas import ThroughputRequest, ThroughputResponse
from solver.gpus import Interconnect
from solver.throughput import estimate_throughput
from solver.workload import resolve_workload

__all__ = ["estimate_throughput_for"]


def estimate_throughput_for(snapshot: CatalogSnapshot, request: ThroughputRequest) -> ThroughputResponse:
    """Validate, then estimate the workload's throughput on the requested GPUs."""
    gpu = one_gpu(snapshot, request.gpu)
    resolved = resolve_workload(request)
    derived = request.interconnect is None
    interconnect: Interconnect = (
        derive_interconnect(gpu, request.gpu_count, "")[0]
        if request.interconnect is None
        else request.interconnect
    )
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
