"""Ownership sheet rows: sourced purchase prices and finance defaults."""

from __future__ import annotations

import msgspec

__all__ = ["OwnershipDefault", "OwnershipPrice"]


class OwnershipPrice(msgspec.Struct, frozen=True, kw_only=True):
    """A sourced purchase price for one GPU (``notes`` carries the ``scope=`` tag: card, server/8 …)."""

    gpu_id: str
    gpu_name: str
    vendor: str
    purchase_price_usd: float
    price_basis: str
    price_date: str
    server_overhead_factor: float | None
    system_power_w_per_gpu: float | None
    gpu_tdp_w: float | None
    source: str
    source_url: str
    confidence: str
    notes: str


class OwnershipDefault(msgspec.Struct, frozen=True, kw_only=True):
    """A sourced finance default (electricity price, PUE, colocation, useful life …)."""

    parameter: str
    value: float
    unit: str
    source: str
    date: str
    confidence: str
    notes: str
