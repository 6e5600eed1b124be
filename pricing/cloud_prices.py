"""Parse the shipped cloud price sheet (``cloud_gpu_prices.csv``, an extract of the SkyPilot catalogs).

Columns: ``provider, instance_type, accelerator, accelerator_count, gpu_memory_gib, vcpus, memory_gib,
region, price_per_hour_usd, spot_price_per_hour_usd, source_file, snapshot_commit``. Prices are USD per
instance-hour. The sheet states no interconnect and no billing increment: both are derived (see
``pricing.interconnect`` and ``pricing.offers.DEFAULT_BILLING_INCREMENT_S``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec

from pricing.aliases import AliasTable, NameContext
from pricing.errors import SheetRowError, UnresolvedGpuName
from pricing.interconnect import derive_interconnect
from pricing.offers import DEFAULT_BILLING_INCREMENT_S, RentalOffer, SheetProblem, offer_id_for
from solver.gpus import GpuSpec, gpu_id_for

__all__ = ["CLOUD_PRICE_COLUMNS", "ParsedOffers", "parse_cloud_price_rows"]

CLOUD_PRICE_COLUMNS = (
    "provider",
    "instance_type",
    "accelerator",
    "accelerator_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "region",
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "source_file",
    "snapshot_commit",
)


class ParsedOffers(msgspec.Struct, frozen=True, kw_only=True):
    """The offers a sheet yields and every row it could not use."""

    offers: list[RentalOffer]
    problems: list[SheetProblem]


def _optional_float(row: Mapping[str, str], column: str, *, positive: bool = False) -> float | None:
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SheetRowError(column, f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise SheetRowError(
            column, f"must be a {'positive' if positive else 'non-negative'} number: {text!r}"
        )
    return value


def _count(row: Mapping[str, str], column: str) -> int:
    text = (row.get(column) or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise SheetRowError(column, f"not a whole number: {text!r}") from None
    if value < 1:
        raise SheetRowError(column, f"must be at least 1: {text!r}")
    return value


def _parse_row(
    row: Mapping[str, str], file: str, aliases: AliasTable, gpus: Mapping[str, GpuSpec]
) -> RentalOffer:
    provider = (row.get("provider") or "").strip()
    if not provider:
        raise SheetRowError("provider", "empty")
    accelerator = (row.get("accelerator") or "").strip()
    if not accelerator:
        raise SheetRowError("accelerator", "empty")
    instance_type = (row.get("instance_type") or "").strip()
    region = (row.get("region") or "").strip()
    count = _count(row, "accelerator_count")
    memory = _optional_float(row, "gpu_memory_gib")
    context = NameContext(file=file, provider=provider, instance_type=instance_type, gpu_memory_gib=memory)
    try:
        canonical = aliases.resolve(accelerator, context)
    except UnresolvedGpuName as exc:
        raise SheetRowError("accelerator", exc.reason) from None
    gpu = gpus.get(gpu_id_for(canonical))
    if gpu is None:
        raise SheetRowError("accelerator", f"alias points at {canonical!r}, which is not in the GPU catalog")
    price = _optional_float(row, "price_per_hour_usd", positive=True)
    spot = _optional_float(row, "spot_price_per_hour_usd", positive=True)
    if price is None and spot is None:
        raise SheetRowError("price_per_hour_usd", "neither an on-demand nor a spot price")
    interconnect, rule = derive_interconnect(gpu, count, instance_type)
    source_file = (row.get("source_file") or "").strip()
    commit = (row.get("snapshot_commit") or "").strip()
    return RentalOffer(
        offer_id=offer_id_for(provider, instance_type, region, accelerator, count),
        provider=provider,
        instance_type=instance_type,
        region=region,
        gpu_id=gpu.gpu_id,
        gpu_name=accelerator,
        gpus_per_instance=count,
        gpu_memory_gib=memory,
        vcpus=_optional_float(row, "vcpus"),
        host_memory_gib=_optional_float(row, "memory_gib"),
        interconnect=interconnect,
        interconnect_derived=True,
        interconnect_rule=rule,
        price_per_hour_usd=price,
        spot_price_per_hour_usd=spot,
        billing_increment_s=DEFAULT_BILLING_INCREMENT_S,
        source=f"skypilot-catalog:{source_file}@{commit}" if source_file else file,
    )


def parse_cloud_price_rows(
    rows: Iterable[Mapping[str, str]], *, file: str, aliases: AliasTable, gpus: Mapping[str, GpuSpec]
) -> ParsedOffers:
    """Turn sheet rows into offers; a row that cannot be used becomes a ``SheetProblem``, never vanishes.

    ``gpus`` maps canonical GPU ids to specs; ``file`` is the sheet's file name (alias rules may test it).
    """
    offers: list[RentalOffer] = []
    problems: list[SheetProblem] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=2):
        try:
            offer = _parse_row(row, file, aliases, gpus)
        except SheetRowError as exc:
            value = row.get(exc.column) if exc.column else None
            problems.append(
                SheetProblem(file=file, line=line, column=exc.column, value=value, reason=exc.reason)
            )
            continue
        if offer.offer_id in seen:
            problems.append(
                SheetProblem(
                    file=file,
                    line=line,
                    column=None,
                    value=None,
                    reason=f"duplicate offer (same provider, instance type, region, GPU, count as line "
                    f"{seen[offer.offer_id]})",
                )
            )
            continue
        seen[offer.offer_id] = line
        offers.append(offer)
    return ParsedOffers(offers=offers, problems=problems)
