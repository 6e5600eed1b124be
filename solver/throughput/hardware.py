"""The hardware factors the throughput model moves a workload class by: peak, matmul efficiency, power.

Every GPU of the catalog gets a :class:`Hardware` view with

- ``peak_tflops(precision)``: the dense tensor-core peak at a precision class. ``bf16`` is the catalog's
  16-bit peak (``bf16_tflops``, or ``fp16_tflops`` on Volta and Turing, which have no bf16; both with
  FP32 accumulate); the other classes are fixed multiples of it per architecture generation
  (:data:`PRECISION_MULTIPLIER`), kept only for the formats the GPU's row lists (``precisions``), from the vendors' datasheets as tabulated in
  stas00/ml-engineering ``compute/accelerator/README.md`` (TFLOPS comparison table): TF32 is half of
  BF16 from Ampere on (Volta and Turing run fp32 on CUDA cores at 1/8); FP8 is twice BF16 on Ada,
  Hopper, Blackwell and CDNA3/4; FP4 twice FP8 on Blackwell and CDNA4; int8 twice BF16 from Ampere.
  Weight-only 4-bit (``int4``) computes in 16 bit.
- ``matmul_efficiency``: the share of that peak a large, well-shaped GEMM actually reaches, the
  *maximum achievable matmul FLOPS* (MAMF) measured by ``mamf-finder.py`` in the same handbook (table
  "Maximum Achievable Matmul FLOPS comparison table", BF16 v2 and FP8): A100 SXM 86.9 %, A100 PCIe
  81.1 %, H100 SXM 80.3 %, GH200 (900 W) 83.6 %, MI325X 60.4 %, MI300X 51.4 %; FP8 H100 70.9 %, GH200
  77.6 %. A GPU without a measurement takes its generation's value (:data:`GENERATION_MAMF`).
- a power factor for parts that share a chip and its quoted peak but run at another power limit
  (A100 PCIe 250 W against A100 SXM 400 W, B200 1000 W against B300 1100 W): sustained tensor clocks
  scale about as ``(TDP / TDP_ref) ** (1/6)``. Two measurements above fix the exponent, one on each
  side of the reference power: GH200 at 900 W reaches 1.041× H100 SXM's 700 W MAMF ((900/700)^(1/6) =
  1.043) and, below it, A100 PCIe 0.933× A100 SXM ((250/400)^(1/6) = 0.925 at 250 W, 0.94 at 300 W).
  A part whose datasheet already quotes a lower peak for its lower power (H100 NVL and H200 NVL: 835.5
  dense BF16 TFLOPS at 400 W and 600 W against the SXM parts' 989 at 700 W, a 16 % lower boost clock)
  takes that peak as quoted and no factor on top. A catalog row for a known chip at another power limit
  (a ``gpu_specs.csv`` row with the chip's ``family`` and quoted peak and its own ``tdp_w``) gets the
  factor against the highest-powered part of the chip; one at another memory size keeps its speed.
- ``bandwidth_tbps`` and ``memory_gib`` as the catalog states them.

GPUs whose 16-bit peak is unknown get one from their memory bandwidth × the median peak-per-bandwidth of
their generation (``peak_proxied``); estimates resting on it are marked low confidence. The generation
and the family are the catalog row's ``architecture`` and ``family``.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Mapping
from typing import Final

import msgspec

from solver.catalog.gpus import GpuSpec
from solver.catalog.mig import SliceSpec
from solver.catalog.precisions import PrecisionClass, class_formats

__all__ = [
    "ATTENTION_EFFICIENCY",
    "ATTENTION_MEASURED",
    "GENERATION_MAMF",
    "MAMF_MEASURED",
    "PRECISION_MULTIPLIER",
    "Hardware",
    "hardware_of",
]

PRECISION_MULTIPLIER: Final[dict[str, dict[PrecisionClass, float]]] = {
    "volta": {"fp32": 0.125, "bf16": 1.0, "int4": 1.0},
    "turing": {"fp32": 0.125, "bf16": 1.0, "int8": 2.0, "int4": 1.0},
    "ampere": {"fp32": 0.5, "bf16": 1.0, "int8": 2.0, "int4": 1.0},
    "ada": {"fp32": 0.5, "bf16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0},
    "hopper": {"fp32": 0.5, "bf16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0},
    "blackwell": {"fp32": 0.5, "bf16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0, "fp4": 4.0},
    "cdna3": {"fp32": 0.5, "bf16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0},
    "cdna4": {"fp32": 0.5, "bf16": 1.0, "fp8": 2.0, "int8": 2.0, "int4": 1.0, "fp4": 4.0},
}
"""Dense peak at each precision class relative to the 16-bit peak, per generation (absent: no tensor
cores for it); a GPU keeps the classes its row's ``precisions`` run. A generation not listed (Pascal,
Kepler, Maxwell, GCN5: no tensor cores) runs fp32 at half the 16-bit rate."""

_DEFAULT_MULTIPLIER: Final[dict[PrecisionClass, float]] = {"fp32": 0.5, "bf16": 1.0, "int4": 1.0}

MAMF_MEASURED: Final[dict[str, tuple[float, float | None]]] = {
    "a100-40gb-sxm": (0.869, None),
    "a100-80gb-sxm": (0.869, None),
    "a100-40gb-pcie": (0.811, None),
    "a100-80gb-pcie": (0.811, None),
    "h100-sxm": (0.803, 0.709),
    "gh200-144gb": (0.836, 0.776),
    "mi325x": (0.604, None),
    "mi300x": (0.514, None),
}
"""Measured MAMF share of the BF16 (and FP8) peak by catalog GPU id (ml-engineering MAMF tables; the
A100 SXM figure serves both memory sizes, the PCIe figure both PCIe cards: same chip and power class)."""

GENERATION_MAMF: Final[dict[str, float]] = {
    "volta": 0.80,
    "turing": 0.80,
    "ampere": 0.85,
    "ada": 0.80,
    "hopper": 0.80,
    "blackwell": 0.80,
    "cdna3": 0.55,
    "cdna4": 0.60,
}
"""MAMF share assumed for a GPU without a measurement: the generation's measured flagship (Ampere,
Hopper, CDNA3), Hopper's value for Blackwell and Ada (no published MAMF in the cited table), and
Volta/Turing at Hopper's level; generations without tensor cores take :data:`_OLDER_GENERATION_MAMF`."""

ATTENTION_EFFICIENCY: Final = 0.7
"""Share of a GPU's large-GEMM speed (MAMF) its fused attention kernel keeps, forward and backward, where
no measurement says otherwise: FlashAttention-2 reaches 50–73 % of A100 peak (Dao 2023, §4.1) against
87 % for large GEMMs; FlashAttention-3 75 % of H100 BF16 peak (Shah et al. 2024) against 80 %: ~0.7–0.9
of GEMM speed, 0.7 taken."""

ATTENTION_MEASURED: Final[dict[str, float]] = {"h100-sxm": 0.35}
"""Measured share of the dense 16-bit peak the attention kernel that general PyTorch stacks run reaches,
by catalog GPU id. H100 SXM: FlashAttention-2 (the kernel of ``flash_attn`` 2.x and of PyTorch SDPA's
flash backend) issues Ampere-style ``mma.sync`` without Hopper's asynchronous WGMMA and TMA and reaches
"only 35% utilization on the H100 GPU" (Shah et al. 2024, FlashAttention-3, abstract; their Fig. 5:
335 TFLOPS forward at 16k tokens, causal, head dimension 128, against 989 peak), where GEMMs reach
80 %. Other Hopper parts (same SMs) keep H100's ratio to their own MAMF; Hopper-native kernels (FA3,
cuDNN) run faster, which the calibrated attention factor λ absorbs where rows show it."""
_HOPPER_ATTENTION_TO_MAMF: Final = ATTENTION_MEASURED["h100-sxm"] / MAMF_MEASURED["h100-sxm"][0]
_OLDER_GENERATION_MAMF: Final = 0.75
_FP8_TO_BF16_MAMF: Final = 0.709 / 0.803
"""FP8 MAMF share relative to BF16 when only BF16 was measured (H100 SXM: 70.9 % against 80.3 %)."""
_POWER_EXPONENT: Final = 1.0 / 6.0
_POWER_CLAMP: Final = (0.85, 1.05)


class Hardware(msgspec.Struct, frozen=True, kw_only=True):
    """What the throughput model needs to know of one GPU, derived from its catalog row."""

    gpu_id: str
    generation: str
    family: str
    bf16_tflops: float
    peak_proxied: bool
    multipliers: dict[PrecisionClass, float]
    matmul_efficiency: float
    fp8_matmul_efficiency: float
    attention_efficiency: float
    """Share of the dense 16-bit peak the fused attention kernel reaches (:data:`ATTENTION_MEASURED`)."""
    power_factor: float
    bandwidth_tbps: float
    memory_gib: float
    basis: str

    def supports(self, precision: PrecisionClass) -> bool:
        """Whether the GPU has tensor cores (or a 16-bit path, for int4) for ``precision``."""
        return precision in self.multipliers

    def peak_tflops(self, precision: PrecisionClass) -> float:
        """Dense peak TFLOPS at ``precision`` (raises ``KeyError`` when unsupported)."""
        return self.bf16_tflops * self.multipliers[precision]

    def achievable_tflops(self, precision: PrecisionClass) -> float:
        """Peak × the MAMF share at that precision × the power factor: the realistic GEMM ceiling."""
        share = self.fp8_matmul_efficiency if precision in ("fp8", "fp4", "int8") else self.matmul_efficiency
        return self.peak_tflops(precision) * share * self.power_factor

    def attention_tflops(self, precision: PrecisionClass) -> float:
        """The fused attention kernel's rate at ``precision`` (16-bit, or TF32 for fp32 work)."""
        return self.peak_tflops(precision) * self.attention_efficiency * self.power_factor


def _peak_per_bandwidth(gpus: list[GpuSpec]) -> list[float]:
    return [
        g.tensor16_tflops / g.memory_bandwidth_tbps
        for g in gpus
        if g.tensor16_tflops and g.memory_bandwidth_tbps
    ]


def _proxy_peak(gpu: GpuSpec, catalog: Mapping[str, GpuSpec]) -> float:
    """A 16-bit peak for a GPU without one: bandwidth × the generation's median peak per TB/s."""
    ratios = _peak_per_bandwidth(
        [other for other in catalog.values() if other.architecture == gpu.architecture]
    )
    if not ratios:
        ratios = _peak_per_bandwidth(list(catalog.values()))
    return (gpu.memory_bandwidth_tbps or 0.0) * statistics.median(ratios) if ratios else 0.0


def _power_factor(gpu: GpuSpec, catalog: Mapping[str, GpuSpec]) -> tuple[float, str]:
    """Sustained-clock factor against the highest-powered part with the same chip and quoted peak (a
    part without a quoted peak has none to share)."""
    peak = gpu.tensor16_tflops
    if peak is None or not gpu.tdp_w or gpu.gpu_id in MAMF_MEASURED:
        return 1.0, ""
    peers = [
        other
        for other in catalog.values()
        if other.family == gpu.family and other.tensor16_tflops == peak and other.tdp_w
    ]
    reference = max(peers, key=lambda other: other.tdp_w or 0.0, default=None)
    if reference is None or reference.tdp_w is None or reference.gpu_id == gpu.gpu_id:
        return 1.0, ""
    low, high = _POWER_CLAMP
    factor = min(max((gpu.tdp_w / reference.tdp_w) ** _POWER_EXPONENT, low), high)
    if abs(factor - 1.0) < 1e-9:
        return 1.0, ""
    return (
        factor,
        f"; power factor {factor:.3f} ({gpu.tdp_w:g} W against {reference.name}'s {reference.tdp_w:g} W)",
    )


@functools.lru_cache(maxsize=512)
def _hardware(gpu: GpuSpec, catalog: tuple[tuple[str, GpuSpec], ...]) -> Hardware:
    generation = gpu.architecture
    others = dict(catalog)
    proxied = not gpu.tensor16_tflops
    bf16 = gpu.tensor16_tflops or _proxy_peak(gpu, others)
    multipliers = {
        precision: factor
        for precision, factor in PRECISION_MULTIPLIER.get(generation, _DEFAULT_MULTIPLIER).items()
        if any(f in gpu.precisions for f in class_formats(precision))
    }
    measured = MAMF_MEASURED.get(gpu.gpu_id)
    if measured is not None:
        mamf, fp8 = measured[0], measured[1] or measured[0] * _FP8_TO_BF16_MAMF
        basis = f"MAMF {mamf:.1%} measured"
    else:
        mamf = GENERATION_MAMF.get(generation, _OLDER_GENERATION_MAMF)
        fp8 = mamf * _FP8_TO_BF16_MAMF
        basis = f"MAMF {mamf:.1%} assumed for {generation}"
    power, power_text = _power_factor(gpu, others)
    attention = ATTENTION_MEASURED.get(gpu.gpu_id)
    if attention is None:
        attention = mamf * (_HOPPER_ATTENTION_TO_MAMF if generation == "hopper" else ATTENTION_EFFICIENCY)
    sixteen = next((f for f in ("bf16", "fp16") if f in gpu.precisions), "16-bit")
    peak_text = f"{sixteen} peak {bf16:.0f} TFLOPS" + (" (proxied from memory bandwidth)" if proxied else "")
    return Hardware(
        gpu_id=gpu.gpu_id,
        generation=generation,
        family=gpu.family,
        bf16_tflops=bf16,
        peak_proxied=proxied,
        multipliers=multipliers,
        matmul_efficiency=mamf,
        fp8_matmul_efficiency=fp8,
        attention_efficiency=attention,
        power_factor=power,
        bandwidth_tbps=gpu.memory_bandwidth_tbps or 0.0,
        memory_gib=gpu.memory_gib,
        basis=f"{peak_text}; {basis}{power_text}",
    )


def _slice_hardware(gpu: SliceSpec, parent: Hardware) -> Hardware:
    """A MIG slice runs as its parent does (generation, family, measured MAMF, power factor) on the
    compute and memory-bandwidth shares of its profile, with the profile's memory."""
    return msgspec.structs.replace(
        parent,
        gpu_id=gpu.gpu_id,
        bf16_tflops=parent.bf16_tflops * gpu.compute_fraction,
        bandwidth_tbps=parent.bandwidth_tbps * gpu.memory_fraction,
        memory_gib=gpu.memory_gib,
        basis=(
            f"MIG {gpu.mig_profile} of {parent.gpu_id}: {gpu.compute_fraction:.3f} of its SMs and "
            f"{gpu.memory_fraction:.3f} of its memory bandwidth; parent {parent.basis}"
        ),
    )


def hardware_of(gpu: GpuSpec, catalog: Mapping[str, GpuSpec]) -> Hardware:
    """The :class:`Hardware` view of ``gpu`` (``catalog`` supplies its peers for proxies and power; a
    MIG slice's parent comes from it too)."""
    peers = tuple(sorted((k, v) for k, v in catalog.items() if not isinstance(v, SliceSpec)))
    if isinstance(gpu, SliceSpec) and gpu.parent_gpu_id in catalog:
        return _slice_hardware(gpu, _hardware(catalog[gpu.parent_gpu_id], peers))
    return _hardware(gpu, peers)
