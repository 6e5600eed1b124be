"""This project's rental sheet (``rental_csv`` / ``rental_json``) → offers, every unusable row a problem.

A row is read by :func:`parse_row`. A sheet of hundreds of thousands of rows is read a column at a
time first (:func:`parse_rental`): each distinct cell value goes through its column's reader once, each
GPU name is resolved once (or once per row where an alias rule reads the row), and each row that
passes is built into its offer by the same :func:`~pricing.sheets.offer_build.build_offer`. A row where any
step fails is then parsed again by :func:`parse_row`, which names every problem it has, so a large
sheet gets exactly the offers and problems a row-by-row reading gives, in a fraction of the time.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, Final

from pricing.cells import (
    MAX_PRICE_PER_HOUR_USD,
    JsonRow,
    cell_choice,
    cell_count,
    cell_float,
    cell_text,
    cell_texts,
)
from pricing.errors import SheetRowError
from pricing.rules.aliases import NameContext
from pricing.rules.interconnect import INTERCONNECTS, interconnect_named
from pricing.sheets.context import SheetContext
from pricing.sheets.offer_build import StatedOffer, build_offer, mig_profile_of, resolve_gpu
from pricing.sheets.offers import DEFAULT_BILLING_INCREMENT_S, ParsedOffers, RentalOffer, offer_collector
from pricing.sheets.sheet_rows import SheetTable
from solver import GpuSpec

__all__ = ["MAX_GPUS_PER_INSTANCE", "RENTAL_COLUMNS", "parse_rental", "parse_row"]

MAX_GPUS_PER_INSTANCE: Final = 1024
"""The most GPUs one rented instance may have (the largest single systems, racks of 72, fit well below)."""

_PRICE_COLUMNS: Final = (
    "price_per_hour_usd",
    "spot_price_per_hour_usd",
    "reserved_1y_price_per_hour_usd",
    "reserved_3y_price_per_hour_usd",
)

CellReader = Callable[[Mapping[str, Any], str], Any]


def _optional_count(row: Mapping[str, Any], column: str) -> int | None:
    """A whole number of at least 0, or ``None`` for an empty cell (the seller publishes none)."""
    if cell_float(row, column) is None:
        return None
    return cell_count(row, column, default=0)


_PLAIN: Final[dict[str, CellReader]] = {
    "instance_type": partial(cell_text, required=True),
    "gpu": partial(cell_text, required=True),
    "gpus_per_instance": partial(cell_count, maximum=MAX_GPUS_PER_INSTANCE),
    "gpu_memory_gib": partial(cell_float, positive=True),
    "interconnect": partial(cell_choice, choices=INTERCONNECTS),
    "region": partial(cell_text, required=True),
    "vcpus": cell_float,
    "memory_gib": cell_float,
    "storage_read_gbps": partial(cell_float, positive=True),
    "network_class": cell_text,
    "network_gbps": cell_float,
    **{
        column: partial(cell_float, positive=True, maximum=MAX_PRICE_PER_HOUR_USD)
        for column in _PRICE_COLUMNS
    },
    "billing_increment_s": partial(cell_count, default=DEFAULT_BILLING_INCREMENT_S),
    "available_instances": lambda row, column: _optional_count(row, column),
}
"""How each plain cell is read, in the order a row reads them: all before the GPU name is resolved, so
a row reports all its problems. The arguments of :func:`_offer` after the GPU are these, in order."""

_READERS: Final[dict[str, CellReader]] = {"provider": cell_text, **_PLAIN, "mig_profile": cell_text}
"""Every cell's reader, in the order a row reads them. Both readings of a sheet use this one table."""
RENTAL_COLUMNS: Final = tuple(_READERS)
"""Every column a rental sheet may have (any other is a sheet problem)."""

_TEXT_COLUMNS: Final = {
    column: isinstance(reader, partial) and bool(reader.keywords.get("required"))
    for column, reader in _READERS.items()
    if reader is cell_text or (isinstance(reader, partial) and reader.func is cell_text)
}
"""The text cells, and whether each is required (:func:`~pricing.cells.cell_texts` reads them)."""


def _read(row: Mapping[str, Any], column: str) -> Any:
    return _READERS[column](row, column)


def _provider(cell: str, sheet: SheetContext) -> str:
    """The row's provider: its cell, else the sheet's; a row naming another provider than the sheet's
    is a problem."""
    provider = cell or (sheet.provider or "")
    if not provider:
        raise SheetRowError("provider", "empty, and no provider was given with the sheet")
    if sheet.provider and provider != sheet.provider:
        raise SheetRowError("provider", f"{provider!r} differs from the sheet's provider {sheet.provider!r}")
    return provider


def _offer(
    sheet: SheetContext,
    provider: str,
    gpu: GpuSpec,
    mig_profile: str | None,
    instance_type: str,
    gpu_name: str,
    count: int,
    memory: float | None,
    choice: str | None,
    region: str,
    vcpus: float | None,
    host_memory: float | None,
    storage: float | None,
    network_class: str,
    network_gbps: float | None,
    price: float | None,
    spot: float | None,
    reserved_1y: float | None,
    reserved_3y: float | None,
    increment: int,
    available: int | None,
) -> RentalOffer:
    """The offer of a row whose provider, GPU, MIG profile and plain cells (:data:`_PLAIN`, in order)
    are read."""
    stated = StatedOffer(
        provider=provider,
        instance_type=instance_type,
        region=region,
        gpu_name=gpu_name,
        count=count,
        memory=memory,
        vcpus=vcpus,
        host_memory=host_memory,
        storage_read_gbps=storage,
        interconnect=None if choice is None else interconnect_named(choice),
        network_class=network_class or None,
        network_gbps=network_gbps,
        price=price,
        spot=spot,
        reserved_1y=reserved_1y,
        reserved_3y=reserved_3y,
        increment=increment,
        source=sheet.source,
        mig_profile=mig_profile,
        available_instances=available,
    )
    return build_offer(stated, gpu)


def parse_row(row: Mapping[str, Any], sheet: SheetContext) -> RentalOffer:
    """One row → its offer (``SheetRowError`` naming the first column at fault)."""
    provider = _provider(_read(row, "provider"), sheet)
    cells = [read(row, column) for column, read in _PLAIN.items()]
    instance_type, gpu_name, memory = cells[0], cells[1], cells[3]
    context = NameContext(
        file=sheet.file, provider=provider, instance_type=instance_type, gpu_memory_gib=memory
    )
    gpu = resolve_gpu(sheet.aliases, sheet.gpus, gpu_name, context, "gpu")
    mig_profile = mig_profile_of(gpu, _read(row, "mig_profile"), sheet.mig_slices)
    return _offer(sheet, provider, gpu, mig_profile, *cells)


class _Failed:
    """What a cell, name or row that failed maps to: its row is parsed again row by row."""


_FAILED: Final = _Failed()


def _json_key(value: Any) -> Any:
    """A JSON cell as a key of the values read once: 1, 1.0 and true (equal in Python) stay apart, as
    do 0.0 and -0.0; a list or object is never read in bulk."""
    if value is None or type(value) is str:
        return value
    if type(value) is float:
        return (float, value, math.copysign(1.0, value))
    if type(value) in (int, bool):
        return (type(value), value)
    return _FAILED


def _cells(table: SheetTable, column: str, failed: bytearray) -> Iterable[Any]:
    """Column ``column`` read: every distinct cell once; rows whose cell fails are marked in ``failed``."""
    reader = _READERS[column]
    row_type: Callable[[dict[str, Any]], Mapping[str, Any]] = JsonRow if table.json else dict
    if not table.has(column):  # every row reads as if the cell were empty
        try:
            return itertools.repeat(reader(row_type({}), column), len(table))
        except SheetRowError:
            failed[:] = b"\x01" * len(table)
            return itertools.repeat(_FAILED, len(table))
    values = table.column(column)
    required = _TEXT_COLUMNS.get(column)
    if required is not None and not table.json:  # CSV text: the whole column in a few passes
        texts = cell_texts(values, required=required)
        if texts is not None:
            return texts
    keys = [_json_key(value) for value in values] if table.json else values
    read: dict[Any, Any] = {}
    for key, value in dict(zip(keys, values, strict=True)).items():
        try:
            read[key] = _FAILED if key is _FAILED else reader(row_type({column: value}), column)
        except SheetRowError:
            read[key] = _FAILED
    cells = list(map(read.__getitem__, keys))
    if any(cell is _FAILED for cell in read.values()):
        for index, cell in enumerate(cells):
            if cell is _FAILED:
                failed[index] = 1
    return cells


class _Names:
    """GPU names resolved once per sheet: once per name, or once per row context where a rule of the
    name reads the row (provider, instance type, memory)."""

    def __init__(self, sheet: SheetContext) -> None:
        self.sheet = sheet
        self.found: dict[Any, GpuSpec | _Failed] = {}
        self.reads_context: dict[str, bool] = {}

    def gpu(self, name: str, provider: str, instance_type: str, memory: float | None) -> GpuSpec | _Failed:
        reads = self.reads_context.get(name)
        if reads is None:
            reads = self.reads_context[name] = self.sheet.aliases.reads_context(name)
        key = (name, provider, instance_type, memory) if reads else name
        found = self.found.get(key)
        if found is None:
            context = NameContext(
                file=self.sheet.file, provider=provider, instance_type=instance_type, gpu_memory_gib=memory
            )
            try:
                found = resolve_gpu(self.sheet.aliases, self.sheet.gpus, name, context, "gpu")
            except SheetRowError:
                found = _FAILED
            self.found[key] = found
        return found


def _bulk_offers(table: SheetTable, sheet: SheetContext) -> list[RentalOffer | None]:
    """Each row's offer where every step of the row passes; ``None`` where one fails."""
    failed = bytearray(len(table))
    cells = {column: _cells(table, column, failed) for column in _READERS}
    resolved = _Names(sheet).gpu
    profiles: dict[tuple[str, str], str | _Failed | None] = {}
    offers: list[RentalOffer | None] = [None] * len(table)
    for index, row in enumerate(zip(*(cells[column] for column in _READERS), strict=True)):
        if failed[index]:
            continue
        provider = row[0] or (sheet.provider or "")
        if not provider or (sheet.provider and provider != sheet.provider):
            continue
        gpu = resolved(row[2], provider, row[1], row[4])  # name, instance type, memory
        if isinstance(gpu, _Failed):
            continue
        profile: str | None = None
        if profile_text := row[-1]:  # an empty cell is no profile, whatever the GPU
            profile_key = (gpu.gpu_id, profile_text)
            found = profiles.get(profile_key, _FAILED)
            if profile_key not in profiles:
                try:
                    found = mig_profile_of(gpu, profile_text, sheet.mig_slices)
                except SheetRowError:
                    found = _FAILED
                profiles[profile_key] = found
            if isinstance(found, _Failed):
                continue
            profile = found
        try:
            offers[index] = _offer(sheet, provider, gpu, profile, *row[1:-1])
        except SheetRowError:
            continue
    return offers


def parse_rental(table: SheetTable, sheet: SheetContext) -> ParsedOffers:
    """Every row's offer, or its problems; a repeated offer is a problem naming the first line."""
    collector = offer_collector(sheet.file, partial(parse_row, sheet=sheet))
    for index, offer in enumerate(_bulk_offers(table, sheet)):
        line = table.first_line + index
        if offer is None:
            collector.add(line, table.row(index))
        else:
            collector.add_parsed(line, offer)
    return ParsedOffers(offers=collector.items, problems=collector.problems)
