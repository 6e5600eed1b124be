from __future__ import annotations

import pytest

from pricing.rules.interconnect import derive_interconnect
from solver.catalog.gpus import GpuSpec
from tests.gpu_facts import facts


def gpu(form_factor: str) -> GpuSpec:
    return GpuSpec(
        gpu_id="g",
        name="G",
        vendor="NVIDIA",
        memory_gib=80,
        form_factor=form_factor,
        **facts("h100-sxm", family="g"),
    )


@pytest.mark.parametrize(
    ("form_factor", "count", "instance_type", "expected"),
    [
        ("SXM5", 1, "p5.4xlarge", "none"),
        ("SXM5", 8, "p5.48xlarge", "nvswitch"),
        ("SXM4", 4, "x", "nvlink"),
        ("SXM2", 8, "p3.16xlarge", "nvlink"),
        ("OAM", 8, "BM.GPU.MI300X.8", "nvswitch"),
        ("PCIe card (NVLink via bridge)", 8, "n3-H100x8-NVLink", "nvlink"),
        ("PCIe card (NVLink via bridge)", 2, "gpu_2x_a100", "pcie"),
        ("unknown (OCI GPU2 shapes do not say PCIe or SXM2)", 2, "BM.GPU2.2", "pcie"),
    ],
)
def test_documented_rule(form_factor: str, count: int, instance_type: str, expected: str) -> None:
    interconnect, rule = derive_interconnect(gpu(form_factor), count, instance_type)
    assert interconnect == expected
    assert rule.startswith("derived:")
