"""Price-sheet formats: one table (:data:`SHEET_FORMATS`) says, per format, what it holds (rental
offers or ownership prices), whether it is JSON, its required columns, whether it needs the provider
given with the sheet, and its parser; an upload or a refresh looks its format up once.

Bounds: prices are at most :data:`~pricing.cells.MAX_PRICE_PER_HOUR_USD` (10,000 USD per
instance-hour), other numbers at most :data:`~pricing.cells.MAX_NUMBER`, ``gpus_per_instance`` at most
:data:`MAX_GPUS_PER_INSTANCE`, text cells free of control characters; a cell beyond them is a problem
naming its line and column. A column the format does not read is a problem naming it (a misspelt
``spot_price_per_hr_usd`` would otherwise drop the price silently); only a SkyPilot catalog, which has
columns of its own, may carry others, which the report lists as a warning.

Formats (``format=``):

``rental_csv`` / ``rental_json``
    This project's rental sheet. Columns (JSON: a list of objects, or ``{"offers": [...]}``):
    ``provider`` (or the ``provider`` given with the sheet), ``instance_type``, ``gpu`` (any name the
    alias table knows), ``gpus_per_instance``, ``interconnect`` (``none|pcie|nvlink|nvswitch``; empty:
    derived by the documented rule), ``region``, ``price_per_hour_usd``, ``spot_price_per_hour_usd``,
    ``reserved_1y_price_per_hour_usd``, ``reserved_3y_price_per_hour_usd`` (USD per instance-hour; at
    least an on-demand or a spot price), ``billing_increment_s`` (default 60), and optionally
    ``gpu_memory_gib``, ``vcpus``, ``memory_gib``, ``network_class``
    (``none|ethernet|roce|infiniband|efa|gpudirect_tcpx``), ``network_gbps`` (the instance's
    bandwidth to other instances; empty: derived by the rules of :mod:`pricing.rules.network`),
    ``storage_read_gbps`` (how fast the instance reads its local or attached storage, Gbit/s; empty:
    not stated, and plans asking for a storage rate warn instead of rejecting the offer) and
    ``mig_profile`` (``1g.10gb``: the row rents ``gpus_per_instance`` MIG slices of that profile of
    ``gpu``, never linked to each other; a profile the GPU lacks is a row problem) and
    ``available_instances`` (how many instances the seller says can be had at once, where it publishes
    it: plans then use at most that many, and portfolios cap the offer there; empty: not published).
``cloud_catalog_csv``
    A SkyPilot catalog ``vms.csv``: ``InstanceType, AcceleratorName, AcceleratorCount, vCPUs,
    MemoryGiB, GpuInfo, Price, SpotPrice, Region, AvailabilityZone``; the provider is the one given
    with the sheet. Rows without an accelerator are skipped (CPU instances); the cheapest row per
    (instance type, accelerator, count, region) is kept, as zones repeat a region's offer.
``provider_costs_csv``
    Provider-level costs (:mod:`pricing.sheets.provider_costs`): ``provider`` (``*`` for a class default),
    ``provider_class`` (``hyperscaler|neocloud|marketplace|owned``), ``storage_usd_per_gb_month``,
    ``egress_usd_per_gb``, ``ingress_usd_per_gb``, ``startup_minutes``, ``download_gbps``,
    ``checkpoint_write_gbps``, ``preemptions_per_hour`` (empty: the class default), ``source``,
    ``notes`` (the shipped ``provider_costs.csv``).
``ownership_csv``
    Purchase prices: ``gpu, vendor, purchase_price_usd, price_basis, price_date,
    server_overhead_factor, system_power_w_per_gpu, gpu_tdp_w, source, source_url_or_path,
    confidence, notes`` (the shipped ``ownership_prices.csv``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import msgspec

from pricing.cells import MAX_PRICE_PER_HOUR_USD, cell_count, cell_float, cell_text
from pricing.errors import SheetRowError
from pricing.rules.aliases import NameContext
from pricing.sheets.context import SheetContext
from pricing.sheets.offer_build import StatedOffer, build_offer, resolve_gpu
from pricing.sheets.offers import (
    DEFAULT_BILLING_INCREMENT_S,
    ParsedOffers,
    RentalOffer,
    SheetProblem,
    collect_offers,
    collect_rows,
)
from pricing.sheets.ownership_rows import OwnershipPrice
from pricing.sheets.provider_costs import COST_FIELDS, ParsedProviderCosts, parse_provider_costs
from pricing.sheets.rental import MAX_GPUS_PER_INSTANCE, RENTAL_COLUMNS, parse_rental
from pricing.sheets.sheet_rows import SheetRows, SheetTable, read_columns

__all__ = [
    "FORMATS",
    "MAX_GPUS_PER_INSTANCE",
    "SHEET_FORMATS",
    "ParsedPrices",
    "ParsedProviderCosts",
    "ParsedSheet",
    "SheetContext",
    "SheetFormat",
    "SheetFormatSpec",
    "SheetKind",
    "SheetRows",
    "SheetTable",
]

SheetFormat = Literal["rental_csv", "rental_json", "cloud_catalog_csv", "ownership_csv", "provider_costs_csv"]
SheetKind = Literal["rental", "ownership", "provider_costs"]
"""What a sheet prices: rental offers, owned GPUs (purchase prices), or providers' costs beyond the hour."""


class ParsedPrices(msgspec.Struct, frozen=True, kw_only=True):
    """The purchase prices an ownership sheet yields and every row it could not use."""

    prices: list[OwnershipPrice]
    problems: list[SheetProblem]


ParsedSheet = ParsedOffers | ParsedPrices | ParsedProviderCosts
"""A parsed sheet: rental offers, ownership prices or provider costs, as its format's ``kind`` says."""


_MEMORY_MIB = re.compile(r"['\"]SizeInMiB['\"]\s*:\s*([0-9.]+)")


def _gpu_memory_gib(gpu_info: str) -> float | None:
    """Per-GPU memory from SkyPilot's ``GpuInfo`` (a Python/JSON dict; ``SizeInMiB`` per GPU)."""
    match = _MEMORY_MIB.search(gpu_info)
    if match is None:
        return None
    return round(float(match.group(1)) / 1024, 2) or None


_SkyKey = tuple[str, str, str, str]


def _skypilot_cheapest(
    rows: SheetRows, sheet: SheetContext
) -> tuple[dict[_SkyKey, tuple[int, dict[str, Any], float]], list[SheetProblem]]:
    """The cheapest GPU row per (instance type, accelerator, count, region), with the rows whose prices
    do not read (CPU rows are skipped: they are not GPU offers)."""
    cheapest: dict[_SkyKey, tuple[int, dict[str, Any], float]] = {}
    problems: list[SheetProblem] = []
    for line, row in rows:
        accelerator = cell_text(row, "AcceleratorName")
        if not accelerator:
            continue
        try:
            price = cell_float(row, "Price", positive=True, maximum=MAX_PRICE_PER_HOUR_USD)
            spot = cell_float(row, "SpotPrice", maximum=MAX_PRICE_PER_HOUR_USD)
        except SheetRowError as exc:
            value = str(row.get(exc.column or ""))
            problems.append(
                SheetProblem(file=sheet.file, line=line, column=exc.column, value=value, reason=exc.reason)
            )
            continue
        rank = price if price is not None else (spot or 0.0) + 1e12  # spot-only rows only when nothing else
        key = (
            cell_text(row, "InstanceType"),
            accelerator,
            cell_text(row, "AcceleratorCount"),
            cell_text(row, "Region"),
        )
        held = cheapest.get(key)
        if held is None or rank < held[2]:
            cheapest[key] = (line, row, rank)
    return cheapest, problems


def _skypilot_offer(row: Mapping[str, Any], sheet: SheetContext, provider: str) -> RentalOffer:
    accelerator = cell_text(row, "AcceleratorName", required=True)
    count = cell_count(row, "AcceleratorCount", maximum=MAX_GPUS_PER_INSTANCE)
    instance_type = cell_text(row, "InstanceType")
    memory = _gpu_memory_gib(cell_text(row, "GpuInfo"))
    context = NameContext(
        file=sheet.file, provider=provider, instance_type=instance_type, gpu_memory_gib=memory
    )
    gpu = resolve_gpu(sheet.aliases, sheet.gpus, accelerator, context, "AcceleratorName")
    spot = cell_float(row, "SpotPrice", maximum=MAX_PRICE_PER_HOUR_USD)
    stated = StatedOffer(
        provider=provider,
        instance_type=instance_type,
        region=cell_text(row, "Region", required=True),
        gpu_name=accelerator,
        count=count,
        memory=memory,
        vcpus=cell_float(row, "vCPUs"),
        host_memory=cell_float(row, "MemoryGiB"),
        price=cell_float(row, "Price", positive=True, maximum=MAX_PRICE_PER_HOUR_USD),
        spot=spot if spot else None,  # SkyPilot writes 0 for "no spot price"
        increment=DEFAULT_BILLING_INCREMENT_S,
        source=sheet.source,
    )
    return build_offer(stated, gpu)


def _parse_skypilot(rows: SheetRows, sheet: SheetContext) -> ParsedOffers:
    """A SkyPilot ``vms.csv`` → offers (GPU rows only; the cheapest row per region kept)."""
    provider = sheet.provider
    if not provider:
        raise ValueError("the cloud-catalog format needs the provider given with the sheet")
    cheapest, problems = _skypilot_cheapest(rows, sheet)
    kept = ((line, row) for line, row, _ in sorted(cheapest.values(), key=lambda v: v[0]))
    parsed = collect_offers(kept, sheet.file, lambda row: _skypilot_offer(row, sheet, provider))
    return ParsedOffers(offers=parsed.offers, problems=problems + parsed.problems)


_PRICE_DATE: Final = re.compile(r"([0-9]{4})(?:-([0-9]{1,2}))?")
_PRICE_YEARS: Final = range(1970, 2101)


def _price_date(row: Mapping[str, Any]) -> str:
    """``YYYY`` or ``YYYY-MM`` (or empty): a real month of a year from 1970 to 2100."""
    text = cell_text(row, "price_date")
    found = _PRICE_DATE.fullmatch(text)
    if text and (
        found is None
        or int(found.group(1)) not in _PRICE_YEARS
        or (found.group(2) is not None and not 1 <= int(found.group(2)) <= 12)
    ):
        raise SheetRowError("price_date", f"must be YYYY or YYYY-MM (a year 1970-2100): {text!r}")
    return text


def _parse_ownership(rows: SheetRows, sheet: SheetContext) -> ParsedPrices:
    """Purchase-price rows → ownership prices; duplicates of (gpu, price, date, source) are problems."""

    def parse(row: Mapping[str, Any]) -> OwnershipPrice:
        name = cell_text(row, "gpu", required=True)
        gpu = resolve_gpu(sheet.aliases, sheet.gpus, name, NameContext(file=sheet.file), "gpu")
        price = cell_float(row, "purchase_price_usd", positive=True, required=True)
        assert price is not None
        return OwnershipPrice(
            gpu_id=gpu.gpu_id,
            gpu_name=name,
            vendor=cell_text(row, "vendor") or gpu.vendor,
            purchase_price_usd=price,
            price_basis=cell_text(row, "price_basis"),
            price_date=_price_date(row),
            server_overhead_factor=cell_float(row, "server_overhead_factor", positive=True),
            system_power_w_per_gpu=cell_float(row, "system_power_w_per_gpu", positive=True),
            gpu_tdp_w=cell_float(row, "gpu_tdp_w", positive=True),
            source=cell_text(row, "source", required=True),
            source_url=cell_text(row, "source_url_or_path"),
            confidence=cell_text(row, "confidence"),
            notes=cell_text(row, "notes"),
        )

    prices, problems = collect_rows(
        rows,
        sheet.file,
        parse,
        lambda p: (p.gpu_id, p.purchase_price_usd, p.price_date, p.source),
        "duplicate (same GPU, price, date and source)",
    )
    return ParsedPrices(prices=prices, problems=problems)


class SheetFormatSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that depends on a sheet's format, in one place."""

    name: SheetFormat
    kind: SheetKind
    json: bool
    required: tuple[str, ...]
    needs_provider: bool
    parse: Callable[[SheetTable, SheetContext], ParsedSheet]
    columns: tuple[str, ...]
    """Every column the format reads."""
    extras_allowed: bool = False
    """Whether other columns are a warning (a SkyPilot catalog has columns of its own) or a problem."""

    @property
    def extension(self) -> str:
        return "json" if self.json else "csv"

    def read(self, body: bytes, file: str) -> tuple[SheetTable, list[SheetProblem]]:
        """Decode a sheet into a table; a sheet that cannot be read at all, or has a column the format
        does not read (a misspelt one would be dropped silently), is one problem."""
        table, problems = read_columns(
            body, json_format=self.json, list_key="offers", required=self.required, file=file
        )
        unknown = self.unknown_columns(table)
        if problems or not unknown or self.extras_allowed:
            return table, problems
        reason = (
            f"unknown column(s): {', '.join(map(repr, unknown))}; {self.name} reads {', '.join(self.columns)}"
        )
        return table, [SheetProblem(file=file, line=0, column=unknown[0], value=None, reason=reason)]

    def unknown_columns(self, table: SheetTable) -> list[str]:
        return sorted(table.names - set(self.columns))

    def warnings(self, table: SheetTable) -> list[str]:
        """What the report says of the sheet besides its problems: the columns left unread."""
        unknown = self.unknown_columns(table) if self.extras_allowed else []
        return [f"columns not read: {', '.join(map(repr, unknown))}"] if unknown else []


_RENTAL_COLUMNS: Final = ("instance_type", "gpu", "gpus_per_instance", "region")
_SKYPILOT_COLUMNS: Final = (
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo", "Price",
    "SpotPrice", "Region", "AvailabilityZone",
)  # fmt: skip
_PROVIDER_COST_COLUMNS: Final = ("provider", "provider_class", *COST_FIELDS, "source", "notes")
_OWNERSHIP_COLUMNS: Final = (
    "gpu", "vendor", "purchase_price_usd", "price_basis", "price_date", "server_overhead_factor",
    "system_power_w_per_gpu", "gpu_tdp_w", "source", "source_url_or_path", "confidence", "notes",
)  # fmt: skip

SHEET_FORMATS: Final[dict[SheetFormat, SheetFormatSpec]] = {
    spec.name: spec
    for spec in (
        SheetFormatSpec(
            name="rental_csv",
            kind="rental",
            json=False,
            required=_RENTAL_COLUMNS,
            needs_provider=False,
            parse=parse_rental,
            columns=RENTAL_COLUMNS,
        ),
        SheetFormatSpec(
            name="rental_json",
            kind="rental",
            json=True,
            required=_RENTAL_COLUMNS,
            needs_provider=False,
            parse=parse_rental,
            columns=RENTAL_COLUMNS,
        ),
        SheetFormatSpec(
            name="cloud_catalog_csv",
            kind="rental",
            json=False,
            required=("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"),
            needs_provider=True,
            parse=lambda table, sheet: _parse_skypilot(table.rows(), sheet),
            columns=_SKYPILOT_COLUMNS,
            extras_allowed=True,
        ),
        SheetFormatSpec(
            name="provider_costs_csv",
            kind="provider_costs",
            json=False,
            required=("provider", "provider_class", "source"),
            needs_provider=False,
            parse=lambda table, sheet: parse_provider_costs(table.rows(), sheet.file),
            columns=_PROVIDER_COST_COLUMNS,
        ),
        SheetFormatSpec(
            name="ownership_csv",
            kind="ownership",
            json=False,
            required=("gpu", "purchase_price_usd", "source"),
            needs_provider=False,
            parse=lambda table, sheet: _parse_ownership(table.rows(), sheet),
            columns=_OWNERSHIP_COLUMNS,
        ),
    )
}
"""Every sheet format by name (the ``format=`` of uploads, refresh sources and ``gpuplan prices import``)."""

FORMATS: Final[tuple[SheetFormat, ...]] = tuple(SHEET_FORMATS)
