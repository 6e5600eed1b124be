"""Response bodies of the read API (msgspec Structs; the OpenAPI schema is generated from them)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "DbHealth",
    "GpuOut",
    "GpuPage",
    "Health",
    "OfferOut",
    "OfferPage",
    "ProfileOut",
    "ProfilePage",
    "SchedulerHealth",
]


class GpuOut(msgspec.Struct, kw_only=True):
    """A canonical GPU with its specs, the other names it goes by, and where the numbers come from."""

    gpu_id: str
    name: str
    vendor: str
    memory_gib: float
    memory_type: str | None
    memory_bandwidth_tbps: float | None
    bf16_tflops: float | None
    tdp_w: float | None
    nvlink: bool | None
    nvlink_bandwidth_gbps: float | None
    ecc: bool | None
    mig_max_instances: int | None
    form_factor: str | None
    launch_msrp_usd: float | None
    aliases: list[str]
    source: str


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
    price_per_hour_usd: float | None
    price_per_gpu_hour_usd: float | None
    spot_price_per_hour_usd: float | None
    billing_increment_s: int
    source: str
    sheet_source: str
    sheet_version: int


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


class DbHealth(msgspec.Struct, kw_only=True):
    ok: bool
    path: str
    schema_version: int
    gpus: int
    current_offers: int
    price_sheet_versions: int
    error: str | None = None


class SchedulerHealth(msgspec.Struct, kw_only=True):
    running: bool
    jobs: list[str]


class Health(msgspec.Struct, kw_only=True):
    status: Literal["ok", "unavailable"]
    version: str
    db: DbHealth
    scheduler: SchedulerHealth


class FieldError(msgspec.Struct, kw_only=True):
    field: str
    message: str
    source: str | None = None


class RejectionReason(msgspec.Struct, kw_only=True):
    reason: str
    detail: str


class GpuRejection(msgspec.Struct, kw_only=True):
    gpu: str
    reasons: list[RejectionReason]


class Problem(msgspec.Struct, kw_only=True):
    """An RFC 9457 problem: ``field``/``errors`` name the offending input on a 400."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = None
    errors: list[FieldError] | None = None
    suggestions: list[str] | None = None
    candidates: list[str] | None = None
    rejected: list[GpuRejection] | None = None
