"""MIG slices: a GPU partitioned into isolated instances, each a smaller GPU of its own.

NVIDIA's Multi-Instance GPU splits a GPU into compute slices (SM groups, 1/7 of the SMs on A100 …
B200) and memory slices (1/8 of the memory and of its bandwidth); a *profile* such as ``1g.23gb``
takes some of each, and at most ``max_count`` of it fit on one GPU. A slice is planned as a GPU of
its own (:class:`SliceSpec`, a :class:`~solver.catalog.gpus.GpuSpec`): the profile's memory, the parent's
architecture, family and formats, its dense peaks × its compute fraction, the parent's bandwidth × its memory fraction, no NVLink (an NVLink domain of 1: slices
never form a tensor-parallel group), the parent's TDP × its compute fraction.

Pricing rule: one slice costs its parent's price ÷ the profile's ``max_count`` (seven ``1g.23gb``
slices cost one B200), so a slice is only cheaper when the workload needs less than its parent.
Slices serve inference (batch inference, serving), never training.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec

from solver.catalog.gpus import GpuSpec, gpu_id_for

__all__ = [
    "MigProfile",
    "SliceSpec",
    "parent_gpus_for",
    "slice_id",
    "slice_spec",
    "slices_of",
]


class MigProfile(msgspec.Struct, frozen=True, kw_only=True):
    """One MIG profile of one catalog GPU, as NVIDIA's MIG User Guide tabulates it."""

    gpu_id: str
    """The parent GPU's catalog id."""
    profile: str
    """The profile's name without ``MIG``: ``1g.23gb``."""
    memory_gib: float
    compute_slices: int
    compute_slices_total: int
    memory_slices: int
    memory_slices_total: int
    max_count: int
    """How many of this profile one GPU holds at most (NVIDIA's "Number of Instances Available")."""
    source: str = ""

    @property
    def compute_fraction(self) -> float:
        return self.compute_slices / self.compute_slices_total

    @property
    def memory_fraction(self) -> float:
        return self.memory_slices / self.memory_slices_total


class SliceSpec(GpuSpec, frozen=True, kw_only=True):
    """A MIG slice as a catalog GPU: everything a model reads from a GPU, and what it is a slice of."""

    parent_gpu_id: str
    mig_profile: str
    slices_per_gpu: int
    """The profile's ``max_count``: slices of this profile one parent GPU holds."""
    compute_fraction: float
    memory_fraction: float


def slice_id(parent_gpu_id: str, profile: str) -> str:
    """The catalog id of a slice: ``("b200", "1g.23gb")`` → ``"b200-mig-1g-23gb"``."""
    return gpu_id_for(f"{parent_gpu_id} mig {profile}")


def _scaled(value: float | None, fraction: float, digits: int) -> float | None:
    return None if value is None else round(value * fraction, digits)


def slice_spec(parent: GpuSpec, profile: MigProfile) -> SliceSpec:
    """The slice ``profile`` of ``parent`` as a GPU of its own (see the module's rules)."""
    compute, memory = profile.compute_fraction, profile.memory_fraction
    return SliceSpec(
        gpu_id=slice_id(parent.gpu_id, profile.profile),
        name=f"{parent.name} MIG {profile.profile}",
        vendor=parent.vendor,
        architecture=parent.architecture,
        family=parent.family,
        nvlink_domain=1,
        precisions=parent.precisions,
        memory_gib=profile.memory_gib,
        memory_type=parent.memory_type,
        memory_bandwidth_tbps=_scaled(parent.memory_bandwidth_tbps, memory, 4),
        bf16_tflops=_scaled(parent.bf16_tflops, compute, 1),
        fp16_tflops=_scaled(parent.fp16_tflops, compute, 1),
        tdp_w=_scaled(parent.tdp_w, compute, 1),
        nvlink=False,
        nvlink_bandwidth_gbps=None,
        ecc=parent.ecc,
        mig_max_instances=None,
        form_factor=f"MIG slice of {parent.name}",
        launch_msrp_usd=None,
        source=profile.source,
        parent_gpu_id=parent.gpu_id,
        mig_profile=profile.profile,
        slices_per_gpu=profile.max_count,
        compute_fraction=compute,
        memory_fraction=memory,
    )


def slices_of(gpus: Mapping[str, GpuSpec], profiles: Iterable[MigProfile]) -> dict[str, SliceSpec]:
    """The slices of every profile whose parent is in ``gpus``, by slice id (profiles of GPUs the
    catalog lacks are left out)."""
    found: dict[str, SliceSpec] = {}
    for profile in profiles:
        parent = gpus.get(profile.gpu_id)
        if parent is not None:
            spec = slice_spec(parent, profile)
            found[spec.gpu_id] = spec
    return found


def parent_gpus_for(slices: int, spec: SliceSpec) -> int:
    """How many parent GPUs ``slices`` slices of ``spec`` take at the least."""
    return math.ceil(slices / spec.slices_per_gpu)
