"""Owned GPUs are bought in the unit a vendor sells: NVL72 racks, 8-GPU boards, PCIe cards."""

from __future__ import annotations

from pricing import purchase_unit
from solver import GpuSpec
from tests.gpu_facts import facts


def _gpu(form_factor: str, nvlink_domain: int) -> GpuSpec:
    return GpuSpec(
        **facts("h100-sxm", family="x", nvlink_domain=nvlink_domain),
        gpu_id="x",
        name="X",
        vendor="NVIDIA",
        memory_gib=80,
        ecc=True,
        form_factor=form_factor,
    )


def test_a_rack_scale_nvlink_gpu_is_bought_as_its_rack() -> None:
    unit = purchase_unit(_gpu("Grace Blackwell superchip (NVL4/NVL72)", 72))
    assert unit.sizes == (72,) and "NVL72" in unit.rule


def test_socketed_parts_come_on_eight_gpu_boards() -> None:
    for form in ("SXM5", "OAM", "SXM (HGX/DGX B200)"):
        assert purchase_unit(_gpu(form, 8)).sizes == (8,)


def test_pcie_cards_fill_servers_of_one_to_eight() -> None:
    assert purchase_unit(_gpu("PCIe card (NVLink via bridge)", 2)).sizes == (1, 2, 4, 8)
