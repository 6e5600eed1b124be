"""GPU hardware facts the models need, and the interconnect classes GPUs talk over."""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec

__all__ = ["INTERCONNECT_RANK", "GpuSpec", "Interconnect", "gpu_id_for"]

Interconnect = Literal["none", "pcie", "nvlink", "nvswitch"]
"""How the GPUs inside one instance reach each other, weakest first.

``none`` is a single-GPU instance; ``pcie`` goes through the host's PCIe fabric; ``nvlink`` is point
to point NVLink (bridges or a hybrid cube mesh); ``nvswitch`` is an all-to-all switched fabric (HGX/DGX
NVSwitch boards, AMD Infinity Fabric on 8-GPU OAM platforms)."""

INTERCONNECT_RANK: Final[dict[str, int]] = {"none": 0, "pcie": 1, "nvlink": 2, "nvswitch": 3}


class GpuSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One canonical GPU of the catalog (one row of ``gpu_specs.csv``); unknown numbers are ``None``."""

    gpu_id: str
    name: str
    vendor: str
    memory_gib: float
    memory_type: str | None = None
    memory_bandwidth_tbps: float | None = None
    bf16_tflops: float | None = None
    tdp_w: float | None = None
    nvlink: bool | None = None
    nvlink_bandwidth_gbps: float | None = None
    ecc: bool | None = None
    mig_max_instances: int | None = None
    form_factor: str | None = None
    launch_msrp_usd: float | None = None
    source: str = ""


_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def gpu_id_for(name: str) -> str:
    """The URL-safe canonical id of a GPU name: ``"H100 SXM"`` → ``"h100-sxm"``."""
    return _NON_ALNUM.sub("-", name.lower()).strip("-")
