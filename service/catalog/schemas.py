"""Catalog pages: GPUs, offers, measured and serving profiles (msgspec Structs; the OpenAPI schema comes from them)."""

from __future__ import annotations

from typing import Literal

import msgspec

from pricing import SheetProblem
from solver import Network, ServingProfile

__all__ = [
    "GpuOut",
    "GpuPage",
    "GpuSoftwareOut",
    "MigSliceOut",
    "OfferKey",
    "OfferOut",
    "OfferPage",
    "ProfileOut",
    "ProfilePage",
    "ProfileUploadReport",
    "ServingProfilePage",
]


class OfferKey(msgspec.Struct, kw_only=True):
    """Which offer: its id, and who rents what where (the first fields of every reference to an offer)."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpus_per_instance: int


class MigSliceOut(msgspec.Struct, kw_only=True):
    """What share of its parent GPU a MIG slice has (NVIDIA's MIG User Guide profile table)."""

    compute_fraction: float
    memory_fraction: float
    max_count: int
    """Slices of this profile one parent GPU holds at most."""


class GpuSoftwareOut(msgspec.Struct, kw_only=True):
    """What a GPU runs, from the shipped compatibility table (service/data/software_support.csv)."""

    stack: Literal["cuda", "rocm"] | None
    architecture: str | None
    supports: list[str]
    """Requirements a plan's ``software.requires`` may name that run on this GPU."""


class GpuOut(msgspec.Struct, kw_only=True):
    """A canonical GPU with its specs, the other names it goes by, and where the numbers come from.

    A MIG slice (listed with ``?mig=true``) is a GPU of its own: ``parent_gpu_id`` and ``mig_profile``
    say what it is a slice of, its peak, bandwidth and TDP are the parent's scaled by ``mig``'s
    fractions. A whole GPU lists the ids of its slices in ``mig_slices``. ``precisions`` are the formats
    it computes in (a plan at another precision is rejected for it); ``bf16_tflops`` is empty on GPUs
    without bf16 (Volta, Turing), whose 16-bit peak is ``fp16_tflops``.
    """

    gpu_id: str
    name: str
    vendor: str
    architecture: str
    family: str
    nvlink_domain: int
    precisions: list[str]
    memory_gib: float
    memory_type: str | None
    memory_bandwidth_tbps: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    tdp_w: float | None
    nvlink: bool | None
    nvlink_bandwidth_gbps: float | None
    ecc: bool | None
    mig_max_instances: int | None
    form_factor: str | None
    launch_msrp_usd: float | None
    aliases: list[str]
    source: str
    software: GpuSoftwareOut
    parent_gpu_id: str | None = None
    mig_profile: str | None = None
    mig: MigSliceOut | None = None
    mig_slices: list[str] = msgspec.field(default_factory=list)


class GpuPage(msgspec.Struct, kw_only=True):
    items: list[GpuOut]
    total: int
    limit: int
    offset: int


class OfferOut(msgspec.Struct, kw_only=True):
    """A rental offer of the current price sheets; prices are USD per instance-hour."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpu_id: str
    gpu: str
    gpu_name_in_source: str
    gpus_per_instance: int
    gpu_memory_gib: float | None
    vcpus: float | None
    host_memory_gib: float | None
    interconnect: Literal["none", "pcie", "nvlink", "nvswitch"]
    interconnect_derived: bool
    interconnect_rule: str
    network: Network
    """How the offer's instances reach each other: class, Gbit/s per instance, derived or stated."""
    price_per_hour_usd: float | None
    price_per_gpu_hour_usd: float | None
    spot_price_per_hour_usd: float | None
    billing_increment_s: int
    source: str
    sheet_source: str
    sheet_version: int
    mig_profile: str | None = None
    """Set when the offer rents MIG slices of ``gpu_id`` (``gpus_per_instance`` counts slices)."""
    storage_read_gbps: float | None = None
    """How fast the instance reads its storage (Gbit/s), where the sheet states it."""


class OfferPage(msgspec.Struct, kw_only=True):
    items: list[OfferOut]
    total: int
    limit: int
    offset: int


class ProfileOut(msgspec.Struct, kw_only=True):
    """A measured throughput row; ``value`` is the total over ``gpu_count`` GPUs, in ``metric`` units."""

    profile_id: int
    gpu_id: str
    gpu: str
    gpu_count: int
    interconnect: str
    model: str
    task: str
    precision: str
    batch_size: int | None
    seq_len_or_resolution: str | None
    metric: str
    value: float
    notes: str
    source: str
    dataset: str


class ProfilePage(msgspec.Struct, kw_only=True):
    items: list[ProfileOut]
    total: int
    limit: int
    offset: int


class ServingProfilePage(msgspec.Struct, kw_only=True):
    items: list[ServingProfile]
    total: int
    limit: int
    offset: int


class ProfileUploadReport(msgspec.Struct, kw_only=True):
    source: str
    result: Literal["ok", "rejected"]
    rows: int
    accepted_rows: int
    replaced_rows: int
    problems: list[SheetProblem]
