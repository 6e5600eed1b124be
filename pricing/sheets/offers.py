"""Rental offers: one priced instance type of one provider in one region."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Final

import msgspec

from pricing.cells import skipping_columns
from pricing.errors import SheetRowError
from solver import Interconnect, Network, NetworkClass

__all__ = [
    "DEFAULT_BILLING_INCREMENT_S",
    "ParsedOffers",
    "RentalOffer",
    "RowCollector",
    "SheetProblem",
    "collect_offers",
    "collect_rows",
    "offer_collector",
    "offer_id_for",
]

DEFAULT_BILLING_INCREMENT_S = 60
"""Billing increment assumed when a source does not state one: per-minute billing, which is what the
large clouds bill at or below (per-second billing with a one-minute minimum rounds the same way for
jobs of an hour or more)."""


class RentalOffer(msgspec.Struct, frozen=True, kw_only=True):
    """One rentable instance type: GPU, count, interconnect inside and network between instances,
    prices per instance-hour and provenance."""

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
    interconnect: Interconnect
    interconnect_derived: bool
    interconnect_rule: str
    network_class: NetworkClass
    network_gbps: float
    network_derived: bool
    network_rule: str
    price_per_hour_usd: float | None
    spot_price_per_hour_usd: float | None
    billing_increment_s: int
    source: str
    reserved_1y_price_per_hour_usd: float | None = None
    reserved_3y_price_per_hour_usd: float | None = None
    mig_profile: str | None = None
    """The MIG slice an offer rents (e.g. ``1g.10gb``); ``None``: whole GPUs."""
    storage_read_gbps: float | None = None
    """How fast the instance reads its local or attached storage (Gbit/s), where the seller says."""
    available_instances: int | None = None
    """How many instances of the offer the seller says can be had at once (``None``: not published)."""

    @property
    def network(self) -> Network:
        """How this offer's instances reach each other (flat columns in the store, one value here)."""
        return Network(
            network_class=self.network_class,
            gbps=self.network_gbps,
            derived=self.network_derived,
            rule=self.network_rule,
        )


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


class ParsedOffers(msgspec.Struct, frozen=True, kw_only=True):
    """The offers a sheet yields and every row it could not use."""

    offers: list[RentalOffer]
    problems: list[SheetProblem]


def _row_errors(
    parse: Callable[[Mapping[str, Any]], object], row: Mapping[str, Any], first: SheetRowError
) -> list[SheetRowError]:
    """Every problem of one row: parse it again with each failed column skipped until no new column fails."""
    errors = [first]
    skipped = {first.column} if first.column else set()
    while skipped and len(errors) < len(row) + 1:
        try:
            with skipping_columns(skipped):
                parse(row)
        except SheetRowError as exc:
            if exc.column is None or exc.column in skipped:
                break
            errors.append(exc)
            skipped.add(exc.column)
        except Exception:  # a skipped cell's stand-in upset a later step: what was found stands
            break
        else:
            break
    return errors


def _cut(value: str) -> str:
    """A cell as a problem quotes it: at most 200 characters (a 5,000-digit number is not echoed whole)."""
    return value if len(value) <= 200 else f"{value[:200]}…"


class RowCollector[T]:
    """Rows parsed one by one, in line order: a row that fails, or repeats the key of an earlier row,
    becomes a problem naming its line (``duplicate`` describes the key: "… as line N" is appended)."""

    def __init__(
        self,
        file: str,
        parse: Callable[[Mapping[str, Any]], T],
        key: Callable[[T], Hashable],
        duplicate: str,
    ) -> None:
        self.file = file
        self.parse = parse
        self.key = key
        self.duplicate = duplicate
        self.items: list[T] = []
        self.problems: list[SheetProblem] = []
        self._seen: dict[Hashable, int] = {}

    def add(self, line: int, row: Mapping[str, Any]) -> None:
        """Parse ``row``; keep its item, or record every problem it has."""
        try:
            item = self.parse(row)
        except SheetRowError as exc:
            for error in _row_errors(self.parse, row, exc):
                value = row.get(error.column) if error.column else None
                self.problems.append(
                    SheetProblem(
                        file=self.file,
                        line=line,
                        column=error.column,
                        value=None if value is None else _cut(str(value)),
                        reason=error.reason,
                    )
                )
            return
        self.add_parsed(line, item)

    def add_parsed(self, line: int, item: T) -> None:
        """Keep ``item`` (what line ``line`` parses to, found otherwise) unless its key came earlier."""
        item_key = self.key(item)
        first = self._seen.get(item_key)
        if first is not None:
            self.problems.append(
                SheetProblem(
                    file=self.file,
                    line=line,
                    column=None,
                    value=None,
                    reason=f"{self.duplicate} as line {first}",
                )
            )
            return
        self._seen[item_key] = line
        self.items.append(item)


def collect_rows[T](
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    file: str,
    parse: Callable[[Mapping[str, Any]], T],
    key: Callable[[T], Hashable],
    duplicate: str,
) -> tuple[list[T], list[SheetProblem]]:
    """Parse every ``(line, row)`` with a :class:`RowCollector`: its items and problems."""
    collector = RowCollector(file, parse, key, duplicate)
    for line, row in rows:
        collector.add(line, row)
    return collector.items, collector.problems


_DUPLICATE_OFFER: Final = "duplicate offer (same provider, instance type, region, GPU and count)"


def offer_collector(
    file: str, parse: Callable[[Mapping[str, Any]], RentalOffer]
) -> RowCollector[RentalOffer]:
    """A collector of offers: a row that fails, or repeats an offer id, becomes a problem."""
    return RowCollector(file, parse, _offer_key, _DUPLICATE_OFFER)


def _offer_key(offer: RentalOffer) -> str:
    return offer.offer_id


def collect_offers(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    file: str,
    parse: Callable[[Mapping[str, Any]], RentalOffer],
) -> ParsedOffers:
    """Parse every ``(line, row)``; a row that fails, or repeats an offer key, becomes a problem."""
    collector = offer_collector(file, parse)
    for line, row in rows:
        collector.add(line, row)
    return ParsedOffers(offers=collector.items, problems=collector.problems)
