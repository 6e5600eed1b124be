"""Quantised weights as replica types of a serving fleet, where the software table says they run.

A serving request may list ``quantisation`` (``fp8``, ``int8``, ``int4``): each is tried beside the
requested precision, as replica types of its own, on the GPUs whose architecture the shipped support
table (``service/data/software_support.csv``) lists for the kernel it needs:

- ``fp8``: FP8 W8A8 needs the ``fp8_inference`` row (FP8 tensor cores: Ada, Hopper, Blackwell, CDNA3+);
- ``int8``: INT8 W8A8 and ``int4``: AWQ/GPTQ 4-bit weights (16-bit compute) run in vLLM's kernels, so
  they need the ``vllm`` row of the architecture.

Whether the GPU has the tensor cores of the format (int8 from Turing) is the engine model's own check
(``solver.precision_refusal``), and the engine model sizes the weights and the matmuls at the precision.
Quantised weights are opt-in: they change the model's outputs, which a demanding user checks first.
"""

from __future__ import annotations

from typing import Final

from service.catalog.software_support import SOFTWARE_INDEX
from service.db.snapshot import CatalogSnapshot
from solver import Need, ServingPlan

__all__ = ["QUANTISED_NEEDS", "precisions_tried", "quantised_refusal"]

QUANTISED_NEEDS: Final = {"fp8": "fp8_inference", "int8": "vllm", "int4": "vllm"}
"""The support-table requirement each quantised format needs."""


def precisions_tried(request: ServingPlan) -> list[str]:
    """The requested precision, then each quantised one the request allows (each once)."""
    tried: list[str] = [request.precision]
    tried.extend(q for q in request.quantisation if q not in tried)
    return tried


def quantised_refusal(snapshot: CatalogSnapshot, gpu_id: str, precision: str, requested: str) -> str | None:
    """Why ``gpu_id`` (a GPU or a MIG slice, judged as its parent) cannot run ``precision`` weights the
    request did not ask for as such; None when it can, or when ``precision`` is the requested one."""
    if precision == requested:
        return None
    found = snapshot.mig_slices.get(gpu_id)
    gpu = snapshot.gpus[gpu_id if found is None else found.parent_gpu_id]
    need = Need(QUANTISED_NEEDS[precision], f"implied by quantisation {precision}")
    why = snapshot.derive(SOFTWARE_INDEX).missing(gpu, [need], "any")
    return None if why is None else f"{precision} weights: {why}"
