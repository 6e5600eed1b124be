"""Numeric formats: what a GPU computes in (its catalog row's ``precisions``) and what a job needs.

A GPU's formats are data (``gpu_specs.csv`` ``precisions``, cited per architecture in
``service/data/README.md``): fp16 tensor cores from Volta, int8 from Turing, bf16 from Ampere and
CDNA, fp8 from Ada, Hopper and CDNA3, fp4 from Blackwell and CDNA4. A job needs the format of its
precision; 4-bit weight-only precisions (int4, nf4) and a training job on a quantised base compute in
16 bit, so either 16-bit format serves them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from solver.catalog.gpus import GpuSpec

__all__ = [
    "ARCHITECTURES",
    "FORMATS",
    "WEIGHT_BYTES",
    "Format",
    "KvCache",
    "PrecisionClass",
    "class_formats",
    "kv_element_bytes",
    "measured_kv_cache",
    "needed_formats",
    "precision_refusal",
    "weight_bytes_per_param",
]

Format = Literal["fp32", "fp16", "bf16", "fp8", "int8", "fp4"]
"""A numeric format a GPU computes matrix products in (fp32 on CUDA/stream cores, the others on
tensor/matrix cores)."""

FORMATS: Final[tuple[Format, ...]] = get_args(Format)

ARCHITECTURES: Final = frozenset(
    {
        "kepler",
        "maxwell",
        "pascal",
        "volta",
        "turing",
        "ampere",
        "ada",
        "hopper",
        "blackwell",
        "gcn5",
        "cdna2",
        "cdna3",
        "cdna4",
    }
)
"""The architecture generations a catalog row may name (``gpu_specs.csv`` ``architecture``)."""

PrecisionClass = Literal["fp32", "bf16", "fp8", "int8", "int4", "fp4"]
"""Speed classes of numeric formats: ``bf16`` covers fp16 and AMP; ``int4`` is 4-bit weight-only
quantisation (GGUF Q4_K_M, GPTQ/AWQ, NF4) computed in 16 bit; ``fp4`` is 4-bit compute (NVFP4, MXFP4)."""

_SIXTEEN_BIT: Final[tuple[Format, ...]] = ("bf16", "fp16")
_CLASS_FORMATS: Final[dict[str, tuple[Format, ...]]] = {
    "fp32": ("fp32",),
    "bf16": _SIXTEEN_BIT,
    "int4": _SIXTEEN_BIT,
    "fp8": ("fp8",),
    "int8": ("int8",),
    "fp4": ("fp4",),
}
_QUANTISED: Final = frozenset({"int8", "int4", "nf4"})


def class_formats(precision: PrecisionClass) -> tuple[Format, ...]:
    """The formats any one of which runs a speed class (``bf16``: bf16 or fp16)."""
    return _CLASS_FORMATS[precision]


def needed_formats(precision: str, *, training: bool) -> tuple[Format, ...]:
    """The formats any one of which runs a job at the workload precision ``precision``: its own
    format; either 16-bit one for weight-only 4-bit (int4, nf4) and for training on a quantised base."""
    if precision in ("int4", "nf4") or (training and precision in _QUANTISED):
        return _SIXTEEN_BIT
    return (_format(precision),)


def _format(precision: str) -> Format:
    for known in FORMATS:
        if known == precision:
            return known
    raise ValueError(f"unknown precision {precision!r}")


def precision_refusal(gpu: GpuSpec, precision: str, *, training: bool) -> str | None:
    """Why ``gpu`` cannot run a job at ``precision`` (naming what it runs), or None when it can:
    ``"V100 16GB has no bf16 tensor cores; it runs fp32, fp16"``."""
    needed = needed_formats(precision, training=training)
    if any(f in gpu.precisions for f in needed):
        return None
    what = " or ".join(needed)
    units = "cores" if needed == ("fp32",) else "tensor cores"
    return f"{gpu.name} has no {what} {units}; it runs {', '.join(gpu.precisions)}"


KvCache = Literal["auto", "fp8"]
"""How the KV cache is stored: ``auto`` at the model's 16-bit activation dtype (vLLM's and SGLang's
default ``kv_cache_dtype``), ``fp8`` quantised (``--kv-cache-dtype fp8``; TensorRT-LLM's FP8 recipes)."""


def kv_element_bytes(precision: str, kv_cache: KvCache = "auto") -> float:
    """Bytes of one cached K or V element: 1 stored as fp8, else 2 (4 at fp32), whatever the weights'
    precision — the one width the memory model, the throughput estimates and the engine share."""
    if kv_cache == "fp8":
        return 1.0
    return 4.0 if precision == "fp32" else 2.0


def measured_kv_cache(precision: str) -> KvCache:
    """The KV storage of a published measurement at ``precision``: the FP8/FP4 runs the shipped rows
    hold (TensorRT-LLM, MLPerf) quantise the KV cache with the weights; others keep it at 16 bits."""
    return "fp8" if precision in ("fp8", "fp4") else "auto"


WEIGHT_BYTES: Final[dict[str, float]] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0 + 4.0 / 4096,  # one fp32 scale per output row (LLM.int8; W8A8 per-channel scales)
    "int4": 4.25 / 8,  # AWQ/GPTQ: 4-bit codes, an fp16 scale and a 4-bit zero point per 128 weights
    "nf4": 4.5 / 8,  # NF4: 4-bit codes, one fp32 absmax per 64 weights (Dettmers et al. 2023)
    "fp4": 4.5 / 8,  # NVFP4: 4-bit values, an fp8 scale per 16
}
"""Bytes one stored weight takes at each precision, scales included: the one table the memory model
and the serving engine share. (The class throughput model's ``BYTES_PER_PARAM`` is calibrated on
llama.cpp Q4_K_M rows for its int4, a different 4-bit format of about 4.5 bits.)"""


def weight_bytes_per_param(precision: str) -> float:
    """Bytes one weight takes at ``precision`` (quantised formats with their scales)."""
    return WEIGHT_BYTES[precision]
