"""Hardware factors: peaks per precision, measured matmul shares, the power factor and proxies."""

from __future__ import annotations

import functools

import msgspec
import pytest

from service.db.mig_profiles import read_mig_profiles
from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec
from solver.catalog.mig import slice_spec
from solver.throughput.hardware import MAMF_MEASURED, hardware_of
from tests.gpu_facts import facts


@functools.cache
def _gpus() -> dict[str, GpuSpec]:
    return {gpu.gpu_id: gpu for gpu in read_seed_catalog().gpus}


def test_peaks_follow_the_generation_multipliers() -> None:
    h100 = hardware_of(_gpus()["h100-sxm"], _gpus())
    assert h100.peak_tflops("bf16") == 989 and h100.peak_tflops("fp8") == 2 * 989
    assert h100.peak_tflops("fp32") == pytest.approx(494.5)
    a100 = hardware_of(_gpus()["a100-80gb-sxm"], _gpus())
    assert not a100.supports("fp8") and a100.supports("int8")
    b200 = hardware_of(_gpus()["b200"], _gpus())
    assert b200.supports("fp4") and b200.peak_tflops("fp4") == 4 * b200.peak_tflops("bf16")


def test_measured_mamf_shares_are_used_and_others_take_the_generation() -> None:
    gpus = _gpus()
    for gpu_id, (share, _) in MAMF_MEASURED.items():
        if gpu_id in gpus:
            assert hardware_of(gpus[gpu_id], gpus).matmul_efficiency == share
    h200 = hardware_of(gpus["h200-sxm"], gpus)
    assert h200.matmul_efficiency == 0.80 and "assumed for hopper" in h200.basis


def test_the_power_factor_ranks_parts_of_one_chip() -> None:
    gpus = _gpus()
    b200, b300 = hardware_of(gpus["b200"], gpus), hardware_of(gpus["b300"], gpus)
    assert b200.power_factor < 1.0 == b300.power_factor  # 1000 W against 1100 W, same peak
    assert b200.achievable_tflops("bf16") < b300.achievable_tflops("bf16")
    h100_pcie = hardware_of(gpus["h100-pcie"], gpus)
    assert h100_pcie.power_factor == 1.0  # its own (lower) peak already reflects its clocks


def test_nvl_cards_take_their_datasheet_peak_not_a_bandwidth_proxy() -> None:
    """H100 NVL and H200 NVL quote 835.5 dense BF16 TFLOPS (NVIDIA's tables, 1,671 with sparsity): a
    proxy from their larger bandwidth put them at or above the 700 W SXM part."""
    gpus = _gpus()
    sxm = hardware_of(gpus["h100-sxm"], gpus)
    for gpu_id in ("h100-nvl", "h200-nvl"):
        nvl = hardware_of(gpus[gpu_id], gpus)
        assert nvl.peak_tflops("bf16") == 835.5 and not nvl.peak_proxied
        assert nvl.achievable_tflops("bf16") < sxm.achievable_tflops("bf16")


def test_a_catalog_variant_of_one_chip_at_another_power_or_memory() -> None:
    """A gpu_specs row for a known chip at a lower power limit (same family and quoted peak) runs at
    the power curve's share of the reference part; one with other memory keeps the chip's speed."""
    gpus = _gpus()
    base = gpus["h200-sxm"]
    capped = msgspec.structs.replace(base, gpu_id="h200-sxm-500w", name="H200 SXM 500 W", tdp_w=500.0)
    bigger = msgspec.structs.replace(base, gpu_id="h200-sxm-192gb", name="H200 SXM 192 GB", memory_gib=192.0)
    catalog = {**gpus, capped.gpu_id: capped, bigger.gpu_id: bigger}
    reference = hardware_of(base, catalog)
    slow = hardware_of(capped, catalog)
    assert slow.power_factor == pytest.approx((500 / 700) ** (1 / 6))
    assert slow.achievable_tflops("bf16") == pytest.approx(
        reference.achievable_tflops("bf16") * slow.power_factor
    )
    assert "power factor" in slow.basis and "500 W" in slow.basis
    roomy = hardware_of(bigger, catalog)
    assert roomy.memory_gib == 192 and roomy.achievable_tflops("bf16") == reference.achievable_tflops("bf16")


def test_a_gpu_without_a_peak_is_proxied_from_its_bandwidth() -> None:
    gpus = _gpus()
    mystery = GpuSpec(
        gpu_id="mystery",
        name="Mystery",
        vendor="X",
        memory_gib=24,
        memory_bandwidth_tbps=1.0,
        **facts("a100-80gb-sxm", family="mystery"),
    )
    found = hardware_of(mystery, {**gpus, "mystery": mystery})
    assert found.peak_proxied and found.bf16_tflops > 0 and "proxied" in found.basis


def test_a_mig_slice_runs_as_its_parent_on_its_share() -> None:
    gpus = _gpus()
    profile = next(p for p in read_mig_profiles() if p.gpu_id == "b200" and p.profile == "1g.23gb")
    spec = slice_spec(gpus["b200"], profile)
    parent = hardware_of(gpus["b200"], gpus)
    part = hardware_of(spec, {**gpus, spec.gpu_id: spec})
    assert part.generation == parent.generation == "blackwell" and part.family == parent.family
    assert part.matmul_efficiency == parent.matmul_efficiency  # the parent's measured or assumed MAMF
    assert part.power_factor == parent.power_factor and part.multipliers == parent.multipliers
    assert part.bf16_tflops == pytest.approx(parent.bf16_tflops / 7)
    assert part.bandwidth_tbps == pytest.approx(parent.bandwidth_tbps / 8)
    assert part.memory_gib == 23 and part.gpu_id == "b200-mig-1g-23gb" and "MIG 1g.23gb" in part.basis


def test_attention_runs_at_the_measured_kernel_share_of_the_peak() -> None:
    """FlashAttention-2 reaches 35 % of H100's BF16 peak (Shah et al. 2024) where GEMMs reach 80 %:
    attention keeps a smaller share of GEMM speed on Hopper than on Ampere (FA2 at ~0.7 of MAMF), and
    every Hopper part keeps H100's ratio to its own MAMF."""
    gpus = _gpus()
    h100, h200 = hardware_of(gpus["h100-sxm"], gpus), hardware_of(gpus["h200-sxm"], gpus)
    a100 = hardware_of(gpus["a100-80gb-sxm"], gpus)
    assert h100.attention_tflops("bf16") == pytest.approx(0.35 * 989)
    assert a100.attention_tflops("bf16") == pytest.approx(0.7 * 0.869 * 312)
    hopper_ratio = h100.attention_tflops("bf16") / h100.achievable_tflops("bf16")
    assert h200.attention_tflops("bf16") / h200.achievable_tflops("bf16") == pytest.approx(hopper_ratio)
    assert hopper_ratio < a100.attention_tflops("bf16") / a100.achievable_tflops("bf16")
    assert h100.attention_tflops("bf16") > a100.attention_tflops("bf16")  # still the faster part
