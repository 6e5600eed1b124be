"""Derive an offer's interconnect class when its source does not state one.

The rule, in order (the first that applies wins; its text is stored with the offer):

1. one GPU per instance → ``none`` (no peer to talk to);
2. SXM2 modules (V100) → ``nvlink`` (DGX-1 style hybrid cube mesh, no switch);
3. socketed modules (SXM4/SXM5/HGX SXM, OAM, Grace superchips) with 8 or more GPUs per instance →
   ``nvswitch`` (HGX/DGX boards carry NVSwitch; AMD 8-GPU OAM platforms a full Infinity Fabric mesh);
4. socketed modules with 2–7 GPUs → ``nvlink`` (a slice of a board: NVLink is there, a full switch
   is not promised);
5. an instance type that says ``nvlink`` → ``nvlink`` (PCIe cards sold with NVLink bridges);
6. everything else (PCIe cards, unknown form factors) → ``pcie``: whether a bridge is fitted is
   unknown, so the weaker class is assumed.
"""

from __future__ import annotations

import functools
import typing
from typing import Final

from solver import GpuSpec, Interconnect

__all__ = ["INTERCONNECTS", "derive_interconnect", "interconnect_named"]

INTERCONNECTS: Final[tuple[Interconnect, ...]] = typing.get_args(Interconnect)
"""The classes, weakest first."""

_SOCKETED_MARKERS = ("sxm", "oam", "superchip", "hgx", "dgx")


def _is_socketed(form_factor: str) -> bool:
    head = form_factor.casefold().split("(")[0]  # the remark in parentheses is not the form factor
    return any(marker in head for marker in _SOCKETED_MARKERS) and "pcie" not in head


def derive_interconnect(gpu: GpuSpec, gpus_per_instance: int, instance_type: str) -> tuple[Interconnect, str]:
    """The interconnect class of an instance and the rule that gave it."""
    return _derived(gpu.form_factor or "", gpus_per_instance, "nvlink" in instance_type.casefold())


@functools.lru_cache(maxsize=4096)
def _derived(form_factor: str, gpus_per_instance: int, names_nvlink: bool) -> tuple[Interconnect, str]:
    """Rules 1-6: of the GPU only its form factor and of the instance type only whether it names NVLink
    matter, so a sheet of 300,000 instance types derives each (form factor, count) once."""
    if gpus_per_instance <= 1:
        return "none", "derived: 1 GPU per instance"
    if "sxm2" in form_factor.casefold().split("(")[0]:
        return "nvlink", "derived: SXM2 modules (NVLink hybrid cube mesh, no NVSwitch)"
    if _is_socketed(form_factor):
        if gpus_per_instance >= 8:
            return (
                "nvswitch",
                f"derived: {gpus_per_instance}x {form_factor} board (switched all-to-all fabric)",
            )
        return "nvlink", f"derived: {gpus_per_instance}x {form_factor} (part of an NVLink board)"
    if names_nvlink:
        return "nvlink", "derived: instance type names NVLink (bridged PCIe cards)"
    return "pcie", f"derived: {form_factor or 'unknown form factor'} (PCIe assumed; bridges unknown)"


def interconnect_named(text: str) -> Interconnect:
    """The class ``text`` names exactly (``ValueError`` for anything else: an unknown name is never guessed)."""
    for known in INTERCONNECTS:
        if text == known:
            return known
    raise ValueError(f"not an interconnect class: {text!r}; one of {', '.join(INTERCONNECTS)}")
