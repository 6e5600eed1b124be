"""GPU hardware facts the models need, and the interconnect classes GPUs talk over.

Every fact a model reads of a GPU is a field of its catalog row (``service/data/gpu_specs.csv``, cited
in ``service/data/README.md``), never a pattern of its id: a row without its architecture, family,
NVLink domain or formats is refused when the catalog is read.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec

from solver.catalog.precisions import ARCHITECTURES, FORMATS, Format

__all__ = ["INTERCONNECT_RANK", "NODE_GPUS", "GpuSpec", "Interconnect", "gpu_id_for", "node_gpus"]

Interconnect = Literal["none", "pcie", "nvlink", "nvswitch"]
"""How the GPUs inside one instance reach each other, weakest first.

``none`` is a single-GPU instance; ``pcie`` goes through the host's PCIe fabric; ``nvlink`` is point
to point NVLink (bridges or a hybrid cube mesh); ``nvswitch`` is an all-to-all switched fabric (HGX/DGX
NVSwitch boards, AMD Infinity Fabric on 8-GPU OAM platforms)."""

INTERCONNECT_RANK: Final[dict[str, int]] = {"none": 0, "pcie": 1, "nvlink": 2, "nvswitch": 3}

NODE_GPUS: Final = 8
"""GPUs in one server when nothing says otherwise: the 8-GPU HGX/DGX board (NVIDIA DGX A100/H100/B200
user guides: 8 GPUs per system) and AMD's 8-OAM platforms."""


class GpuSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One canonical GPU of the catalog (one row of ``gpu_specs.csv``); unknown numbers are ``None``."""

    gpu_id: str
    name: str
    vendor: str
    architecture: str
    """The architecture generation (``volta``, ``ampere``, ``hopper``, ``cdna3`` …)."""
    family: str
    """The catalog parts that share a chip and its tuning (``ga100``: A100 PCIe/SXM, A800; ``gh100``:
    H100, H200, GH200 …); a part sharing its chip with no other is a family of its own (its id). The
    throughput model pools its GPU effects and compares power limits within a family."""
    nvlink_domain: int
    """GPUs that share one NVLink/NVSwitch domain: 8 on HGX boards, 72 on GB200/GB300 NVL72, 2 (or 4)
    for bridged PCIe cards, 1 without NVLink."""
    precisions: tuple[Format, ...]
    """The formats the GPU computes in (fp32 always; fp16/bf16/fp8/int8/fp4 where it has tensor or
    matrix cores for them)."""
    memory_gib: float
    memory_type: str | None = None
    memory_bandwidth_tbps: float | None = None
    bf16_tflops: float | None = None
    """Dense BF16 tensor peak with FP32 accumulate; None where the GPU has no bf16 or it is unknown."""
    fp16_tflops: float | None = None
    """Dense FP16 tensor peak with FP32 accumulate (the same rate as bf16 where a GPU has both)."""
    tdp_w: float | None = None
    nvlink: bool | None = None
    nvlink_bandwidth_gbps: float | None = None
    ecc: bool | None = None
    mig_max_instances: int | None = None
    form_factor: str | None = None
    launch_msrp_usd: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.architecture not in ARCHITECTURES:
            raise ValueError(
                f"GPU {self.name!r}: architecture {self.architecture!r} is not one of {sorted(ARCHITECTURES)}"
            )
        if not self.family:
            raise ValueError(f"GPU {self.name!r}: family is empty")
        if self.nvlink_domain < 1:
            raise ValueError(f"GPU {self.name!r}: nvlink_domain must be at least 1, got {self.nvlink_domain}")
        unknown = [f for f in self.precisions if f not in FORMATS]
        if unknown or "fp32" not in self.precisions:
            raise ValueError(f"GPU {self.name!r}: precisions must name fp32 and only {', '.join(FORMATS)}")
        if self.bf16_tflops is not None and "bf16" not in self.precisions:
            raise ValueError(f"GPU {self.name!r}: a bf16 peak for a GPU without bf16 in its precisions")

    @property
    def tensor16_tflops(self) -> float | None:
        """The 16-bit tensor peak: bf16's, or fp16's on a GPU without bf16 (Volta, Turing)."""
        return self.bf16_tflops or self.fp16_tflops


def node_gpus(gpu: GpuSpec) -> int:
    """GPUs one node of ``gpu`` holds: :data:`NODE_GPUS`, or the NVLink domain where it is larger (a
    GB200/GB300 NVL72 rack is one 72-GPU domain)."""
    return max(gpu.nvlink_domain, NODE_GPUS)


_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def gpu_id_for(name: str) -> str:
    """The URL-safe canonical id of a GPU name: ``"H100 SXM"`` → ``"h100-sxm"``."""
    return _NON_ALNUM.sub("-", name.lower()).strip("-")
