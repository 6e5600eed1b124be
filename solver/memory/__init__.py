"""Per-GPU memory: model state (weights, gradients, optimizer), activations, the peak and its band.

The face of ``solver.memory``: every public name of its modules."""

from solver.memory.activations import (
    LOGIT_BYTES,
    ActivationParts,
    activation_parts,
    inference_workspace_bytes,
    layer_activation_bytes,
    logits_bytes,
    saved_activation_bytes,
)
from solver.memory.model_state import ModelState, largest_weight_params, model_state, weight_bytes
from solver.memory.peak import (
    FIT_COUNTER,
    GIB,
    GpuFit,
    MemoryBand,
    MemoryBreakdown,
    MemoryEstimate,
    PeakPhase,
    estimate_memory,
    fit_on,
    lora_params,
    rank_high_gib,
    rank_point_gib,
)
from solver.memory.stages import Stage, pipeline_stages

__all__ = [
    "FIT_COUNTER",
    "GIB",
    "LOGIT_BYTES",
    "ActivationParts",
    "GpuFit",
    "MemoryBand",
    "MemoryBreakdown",
    "MemoryEstimate",
    "ModelState",
    "PeakPhase",
    "Stage",
    "activation_parts",
    "estimate_memory",
    "fit_on",
    "inference_workspace_bytes",
    "largest_weight_params",
    "layer_activation_bytes",
    "logits_bytes",
    "lora_params",
    "model_state",
    "pipeline_stages",
    "rank_high_gib",
    "rank_point_gib",
    "saved_activation_bytes",
    "weight_bytes",
]
