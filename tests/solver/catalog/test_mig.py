"""MIG slices as GPUs of their own: ids, scaled specs, parent counts."""

from __future__ import annotations

import pytest

from solver.catalog.gpus import GpuSpec
from solver.catalog.mig import MigProfile, SliceSpec, parent_gpus_for, slice_id, slice_spec, slices_of
from tests.gpu_facts import facts

B200 = GpuSpec(
    gpu_id="b200",
    name="B200",
    vendor="NVIDIA",
    **facts("b200"),
    memory_gib=180,
    memory_bandwidth_tbps=8.0,
    bf16_tflops=2250,
    tdp_w=1000,
    nvlink=True,
    nvlink_bandwidth_gbps=1800,
    ecc=True,
    mig_max_instances=7,
)
ONE_G = MigProfile(
    gpu_id="b200",
    profile="1g.23gb",
    memory_gib=23,
    compute_slices=1,
    compute_slices_total=7,
    memory_slices=1,
    memory_slices_total=8,
    max_count=7,
)


def test_slice_id_is_url_safe_and_names_its_parent() -> None:
    assert slice_id("b200", "1g.23gb") == "b200-mig-1g-23gb"
    assert slice_id("h100-sxm", "3g.40gb") == "h100-sxm-mig-3g-40gb"


def test_a_slice_scales_its_parent_by_the_profile_fractions() -> None:
    spec = slice_spec(B200, ONE_G)
    assert isinstance(spec, GpuSpec) and spec.parent_gpu_id == "b200" and spec.mig_profile == "1g.23gb"
    assert spec.memory_gib == 23 and spec.slices_per_gpu == 7
    assert spec.bf16_tflops == pytest.approx(2250 / 7, abs=0.1)
    assert spec.memory_bandwidth_tbps == pytest.approx(1.0)
    assert spec.tdp_w == pytest.approx(1000 / 7, abs=0.1)
    assert spec.nvlink is False and spec.nvlink_bandwidth_gbps is None and spec.ecc is True
    assert spec.name == "B200 MIG 1g.23gb"


def test_unknown_numbers_stay_unknown() -> None:
    bare = GpuSpec(gpu_id="b200", name="B200", vendor="NVIDIA", memory_gib=180, **facts("b200"))
    spec = slice_spec(bare, ONE_G)
    assert spec.bf16_tflops is None and spec.memory_bandwidth_tbps is None and spec.tdp_w is None


def test_slices_of_skips_profiles_of_gpus_the_catalog_lacks() -> None:
    other = MigProfile(**{**{f: getattr(ONE_G, f) for f in MigProfile.__struct_fields__}, "gpu_id": "z9"})
    found = slices_of({"b200": B200}, [ONE_G, other])
    assert list(found) == ["b200-mig-1g-23gb"] and isinstance(found["b200-mig-1g-23gb"], SliceSpec)


def test_parent_gpus_round_up() -> None:
    spec = slice_spec(B200, ONE_G)
    assert [parent_gpus_for(n, spec) for n in (1, 7, 8, 14, 15)] == [1, 1, 2, 2, 3]
