"""Rental offers: one priced instance type of one provider in one region."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import msgspec

from pricing.cells import skipping_columns
from pricing.errors import SheetRowError
from solver.gpus import Interconnect
from solver.network import Network, NetworkClass

__all__ = [
    "DEFAULT_BILLING_INCREMENT_S",
    "ParsedOffers",
    "RentalOffer",
    "SheetProblem",
    "collect_offers",
    "collect_rows",
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


def collect_rows[T](
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    file: str,
    parse: Callable[[Mapping[str, Any]], T],
    key: Callable[[T], Hashable],
    duplicate: str,
) -> tuple[list[T], list[SheetProblem]]:
    """Parse every ``(line, row)``; a row that fails, or repeats the key of an earlier row, becomes a
    problem naming its line (``duplicate`` describes the key: "… as line N" is appended)."""
    items: list[T] = []
    problems: list[SheetProblem] = []
    seen: dict[Hashable, int] = {}
    for line, row in rows:
        try:
            item = parse(row)
        except SheetRowError as exc:
            for error in _row_errors(parse, row, exc):
                value = row.get(error.column) if error.column else None
                problems.append(
                    SheetProblem(
                        file=file,
                        line=line,
                        column=error.column,
                        value=None if value is None else _cut(str(value)),
                        reason=error.reason,
                    )
                )
            continue
        item_key = key(item)
        if item_key in seen:
            problems.append(
                SheetProblem(
                    file=file,
                    line=line,
                    column=None,
                    value=None,
                    reason=f"{duplicate} as line {seen[item_key]}",
                )
            )
            continue
        seen[item_key] = line
        items.append(item)
    return items, problems


def collect_offers(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    file: str,
    parse: Callable[[Mapping[str, Any]], RentalOffer],
) -> ParsedOffers:
    """Parse every ``(line, row)``; a row that fails, or repeats an offer key, becomes a problem."""
    offers, problems = collect_rows(
        rows,
        file,
        parse,
        lambda offer: offer.offer_id,
        "duplicate offer (same provider, instance type, region, GPU and count)",
    )
    return ParsedOffers(offers=offers, problems=problems)
