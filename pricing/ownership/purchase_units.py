"""What an owned GPU is bought in: the unit a vendor sells, so a plan never buys part of one.

A plan that owns GPUs buys whole purchase units and uses (and pays for) every GPU in them:

* **NVLink racks.** A GPU whose NVLink domain spans a rack (``nvlink_domain`` above one server's 8) is
  sold as that rack: NVIDIA sells GB200 as the GB200 NVL72, "a rack-scale design" that "connects 36
  Grace CPUs and 72 Blackwell GPUs" (https://www.nvidia.com/en-us/data-center/gb200-nvl72/), and
  GB300 as the GB300 NVL72, a "rack-scale architecture that integrates 72 NVIDIA Blackwell Ultra GPUs
  and 36 Arm-based NVIDIA Grace CPUs" (https://www.nvidia.com/en-us/data-center/gb300-nvl72/). Sixteen
  GB200 are one 72-GPU rack or none.
* **8-GPU boards.** Socketed parts (SXM, OAM) are soldered to a baseboard, never sold one by one: the
  8-GPU HGX/DGX board (NVIDIA DGX H100/H200 and DGX B200 user guides: 8 GPUs per system; HGX
  H100/B200 8-GPU baseboards in OEM servers) and AMD's Instinct platform of 8 OAM modules on one
  universal baseboard (AMD Instinct MI300X/MI325X/MI355X platform data sheets). Some generations also
  had 4-GPU HGX boards (HGX A100/H100 4-GPU); the planner buys the 8-GPU board, the training server
  DGX systems and most OEM builds ship.
* **PCIe cards** are sold one by one and go into servers of 1, 2, 4 or 8 cards.
"""

from __future__ import annotations

from typing import Final

import msgspec

from solver import NODE_GPUS, GpuSpec

__all__ = ["PCIE_SERVER_SIZES", "PurchaseUnit", "purchase_unit"]

PCIE_SERVER_SIZES: Final = (1, 2, 4, 8)
"""Cards per server a buyer of PCIe cards may choose (a workstation of one up to an 8-slot server)."""

_SOCKETED: Final = ("sxm", "oam", "superchip", "hgx", "dgx")
"""Form-factor words of parts soldered to a baseboard (the remark in parentheses is not read)."""


class PurchaseUnit(msgspec.Struct, frozen=True, kw_only=True):
    """The GPU counts one purchase unit may hold (one for boards and racks) and the rule that says so."""

    sizes: tuple[int, ...]
    rule: str


def purchase_unit(gpu: GpuSpec) -> PurchaseUnit:
    """The unit ``gpu`` is bought in (see the module docstring for the rules and their sources)."""
    if gpu.nvlink_domain > NODE_GPUS:
        return PurchaseUnit(
            sizes=(gpu.nvlink_domain,),
            rule=(
                f"bought as whole {gpu.nvlink_domain}-GPU NVLink racks: a {gpu.name} is sold only as a "
                f"rack-scale NVL{gpu.nvlink_domain} system (NVIDIA GB200/GB300 NVL72 product pages)"
            ),
        )
    head = (gpu.form_factor or "").casefold().split("(")[0]
    if any(word in head for word in _SOCKETED) and "pcie" not in head:
        return PurchaseUnit(
            sizes=(NODE_GPUS,),
            rule=(
                f"bought as whole {NODE_GPUS}-GPU servers: {gpu.form_factor} modules are soldered to an "
                f"{NODE_GPUS}-GPU baseboard (NVIDIA HGX/DGX, AMD Instinct OAM platform)"
            ),
        )
    return PurchaseUnit(
        sizes=PCIE_SERVER_SIZES,
        rule="PCIe cards are sold one by one and fill servers of 1, 2, 4 or 8 cards",
    )
