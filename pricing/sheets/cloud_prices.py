"""Parse the shipped cloud price sheet (``cloud_gpu_prices.csv``, an extract of the SkyPilot catalogs).

Columns: ``provider, instance_type, accelerator, accelerator_count, gpu_memory_gib, vcpus, memory_gib,
region, price_per_hour_usd, spot_price_per_hour_usd, source_file, snapshot_commit``. Prices are USD per
instance-hour. The sheet states no interconnect and no billing increment: both are derived (see
``pricing.rules.interconnect`` and ``pricing.sheets.offers.DEFAULT_BILLING_INCREMENT_S``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pricing.cells import cell_count, cell_float
from pricing.errors import SheetRowError
from pricing.rules.aliases import AliasTable, NameContext
from pricing.sheets.offer_build import StatedOffer, build_offer, resolve_gpu
from pricing.sheets.offers import (
    DEFAULT_BILLING_INCREMENT_S,
    ParsedOffers,
    RentalOffer,
    collect_offers,
)
from solver import GpuSpec

__all__ = ["CLOUD_PRICE_COLUMNS", "parse_cloud_price_rows"]

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


def _optional_float(row: Mapping[str, str], column: str, *, positive: bool = False) -> float | None:
    return cell_float(row, column, positive=positive)


def _count(row: Mapping[str, str], column: str) -> int:
    return cell_count(row, column)


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
    gpu = resolve_gpu(aliases, gpus, accelerator, context, "accelerator")
    source_file = (row.get("source_file") or "").strip()
    commit = (row.get("snapshot_commit") or "").strip()
    stated = StatedOffer(
        provider=provider,
        instance_type=instance_type,
        region=region,
        gpu_name=accelerator,
        count=count,
        memory=memory,
        vcpus=_optional_float(row, "vcpus"),
        host_memory=_optional_float(row, "memory_gib"),
        price=_optional_float(row, "price_per_hour_usd", positive=True),
        spot=_optional_float(row, "spot_price_per_hour_usd", positive=True),
        increment=DEFAULT_BILLING_INCREMENT_S,
        source=f"skypilot-catalog:{source_file}@{commit}" if source_file else file,
    )
    return build_offer(stated, gpu)


def parse_cloud_price_rows(
    rows: Iterable[Mapping[str, str]], *, file: str, aliases: AliasTable, gpus: Mapping[str, GpuSpec]
) -> ParsedOffers:
    """Turn sheet rows into offers; a row that cannot be used becomes a ``SheetProblem``, never vanishes.

    ``gpus`` maps canonical GPU ids to specs; ``file`` is the sheet's file name (alias rules may test it).
    """
    return collect_offers(enumerate(rows, start=2), file, lambda row: _parse_row(row, file, aliases, gpus))
