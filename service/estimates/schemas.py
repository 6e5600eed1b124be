"""Bodies of POST /v1/memory and POST /v1/throughput: a workload in, an estimate with its provenance out."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from solver.gpus import Interconnect
from solver.memory import GpuFit, MemoryBand, MemoryBreakdown
from solver.throughput import ProfileSource
from solver.workload import Workload

__all__ = ["MemoryRequest", "MemoryResponse", "ThroughputRequest", "ThroughputResponse"]


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
