"""Rental offers: one priced instance type of one provider in one region."""

from __future__ import annotations

import hashlib

import msgspec

__all__ = ["DEFAULT_BILLING_INCREMENT_S", "RentalOffer", "SheetProblem", "offer_id_for"]

DEFAULT_BILLING_INCREMENT_S = 60
"""Billing increment assumed when a source does not state one: per-minute billing, which is what the
large clouds bill at or below (per-second billing with a one-minute minimum rounds the same way for
jobs of an hour or more)."""


class RentalOffer(msgspec.Struct, frozen=True, kw_only=True):
    """One rentable instance type: GPU, count, interconnect, prices per instance-hour and provenance."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpu_id: str
    gpu_name: str
    gpus_per_instance: int
    gpu_memory_gib: float | None
    vcpus: float | None
    host_memory_gib: float | None
    interconnect: str
    interconnect_derived: bool
    interconnect_rule: str
    price_per_hour_usd: float | None
    spot_price_per_hour_usd: float | None
    billing_increment_s: int
    source: str


class SheetProblem(msgspec.Struct, frozen=True, kw_only=True):
    """A row of a sheet that was not used, and why (``line`` counts the header as line 1)."""

    file: str
    line: int
    column: str | None
    value: str | None
    reason: str


def offer_id_for(
    provider: str, instance_type: str, region: str, gpu_name: str, gpus_per_instance: int
) -> str:
    """A stable id for an offer: the same key gets the same id in every sheet version."""
    key = "\x1f".join((provider, instance_type, region, gpu_name, str(gpus_per_instance)))
    return "of-" + hashlib.sha256(key.encode()).hexdigest()[:12]
