"""The current rental offers a request can pick, read one sheet version at a time and merged.

A version's offers never change once stored, so what a snapshot needs of one version (a
:class:`RentalPart`: its offers' counts by kind and the first offer of each kind each consumer takes)
is read once and handed on to every later snapshot while the version stays current. A write then costs
a replica the rows of the versions it added, not every current offer: a 1-row upload beside a
300,000-row source reads one row (issue 28 D6; before, each replica re-read all 300,000 on every write).
The merge gives what one query over all current offers gives (``tests/service/db/test_rental_parts.py``
compares them): the first offer of a kind across versions is the first of the versions' firsts, and a
kind's counts are the sum of its counts in each version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec

from pricing import RentalOffer
from service.db.backend import Cursor

__all__ = [
    "KIND_FIELDS",
    "PICKS",
    "CurrentOffer",
    "First",
    "RentalPart",
    "RentalSupply",
    "merge_parts",
    "read_parts",
]

KIND_FIELDS: Final = (
    "provider",
    "region",
    "gpu_id",
    "mig_profile",
    "gpus_per_instance",
    "interconnect",
    "billing_increment_s",
    "network_class",
    "network_gbps",
    "vcpus",
    "host_memory_gib",
    "storage_read_gbps",
)
"""What a request can tell offers apart by, besides their prices: who sells them where, what they rent,
how the instances are linked and billed, and the host numbers a request may ask for."""
_KIND: Final = ", ".join(KIND_FIELDS)

PICKS: Final = {
    "on_demand": ("price_per_hour_usd", "price_per_hour_usd NULLS LAST, offer_id"),  # what a plan takes
    "spot": ("spot_price_per_hour_usd", "spot_price_per_hour_usd NULLS LAST, offer_id"),
    "reserved_1y": ("reserved_1y_price_per_hour_usd", "reserved_1y_price_per_hour_usd NULLS LAST, offer_id"),
    "reserved_3y": ("reserved_3y_price_per_hour_usd", "reserved_3y_price_per_hour_usd NULLS LAST, offer_id"),
    # what buy vs rent cites
    "rent": ("price_per_hour_usd", "price_per_hour_usd NULLS LAST, instance_type, offer_id"),
}
"""The offer of each kind each consumer takes first: the price it orders by, and its order in SQL
(across versions, ties go to the lower version)."""
_PICK_ONLY: Final = {
    "reserved_1y": "AND reserved_1y_price_per_hour_usd IS NOT NULL ",
    "reserved_3y": "AND reserved_3y_price_per_hour_usd IS NOT NULL ",
}
"""Reserved picks only where a reserved price is stated (most sheets state none: no extra candidates)."""

_OFFER_FIELDS: Final = RentalOffer.__struct_fields__
_FIRSTS: Final = " UNION ALL ".join(
    f"SELECT '{pick}', * FROM (SELECT DISTINCT ON ({_KIND}) {', '.join(_OFFER_FIELDS)} FROM offers "
    f"WHERE version = ? {_PICK_ONLY.get(pick, '')}ORDER BY {_KIND}, {order}) AS {pick}"
    for pick, (_, order) in PICKS.items()
)
_KIND_COUNTS: Final = (
    f"SELECT {_KIND}, count(price_per_hour_usd), count(spot_price_per_hour_usd), "
    "count(reserved_1y_price_per_hour_usd), count(reserved_3y_price_per_hour_usd), count(*) "
    f"FROM offers WHERE version = ? GROUP BY {_KIND}"
)

type Kind = tuple[Any, ...]
"""An offer's values of :data:`KIND_FIELDS`, in order."""


class CurrentOffer(msgspec.Struct, frozen=True, kw_only=True):
    """An offer of a current rental sheet, with the sheet version it belongs to."""

    offer: RentalOffer
    sheet_version: int
    on_demand_alike: int = 1
    """Current offers with an on-demand price that this one stands for, itself included (0 when it is
    not the cheapest on demand of its kind): a plan reports how many it passed over."""
    spot_alike: int = 1
    """The same for spot prices."""
    reserved_1y_alike: int = 0
    """The same for 1-year reserved prices (0 where the offer states none or is not the cheapest)."""
    reserved_3y_alike: int = 0
    """The same for 3-year reserved prices."""


class First(msgspec.Struct, frozen=True, kw_only=True):
    """The first offer of a kind for one pick in one version, with its place in the pick's order."""

    order: tuple[Any, ...]
    """Its sort key across versions: as the pick's SQL orders (strings by code point), then version."""
    version: int
    offer: RentalOffer


class RentalPart(msgspec.Struct, frozen=True, kw_only=True):
    """What the snapshot needs of one rental sheet version's offers."""

    version: int
    counts: dict[Kind, tuple[int, int, int, int, int]]
    """By kind: its offers with an on-demand, a spot, a 1-year and a 3-year reserved price, and all."""
    firsts: dict[str, dict[Kind, First]]
    """By pick (:data:`PICKS`) and kind: the first offer."""


class KindSupply(msgspec.Struct, frozen=True, kw_only=True):
    """One kind's offers across the current versions: its counts and its candidates."""

    counts: tuple[int, ...]
    """Its offers with an on-demand, a spot, a 1-year and a 3-year reserved price, and all."""
    candidates: tuple[CurrentOffer, ...]


class RentalSupply(msgspec.Struct, frozen=True, kw_only=True):
    """The current offers merged: the candidates, and the counts the snapshot reports."""

    parts: dict[int, RentalPart]
    """The current rental versions' parts, by version."""
    kinds: dict[Kind, KindSupply]
    candidates: tuple[CurrentOffer, ...]
    """The current offers a request can pick, by offer id, then version."""
    offer_counts: dict[str, int]
    """Current offers per provider."""
    regions: frozenset[str]
    count: int


def _order(pick: str, values: dict[str, Any], version: int) -> tuple[Any, ...]:
    """An offer's place in the order ``pick`` takes offers in, as its SQL orders them."""
    cost = values[PICKS[pick][0]]
    tie = (values["instance_type"],) if pick == "rent" else ()
    return (cost is None, 0.0 if cost is None else cost, *tie, values["offer_id"], version)


def _read_part(cur: Cursor, version: int) -> RentalPart:
    width = len(KIND_FIELDS)
    counts: dict[Kind, tuple[int, int, int, int, int]] = {}
    for row in cur.execute(_KIND_COUNTS, [version]).fetchall():
        on_demand, spot, reserved_1y, reserved_3y, count = (int(n) for n in row[width:])
        counts[tuple(row[:width])] = (on_demand, spot, reserved_1y, reserved_3y, count)
    firsts: dict[str, dict[Kind, First]] = {pick: {} for pick in PICKS}
    offers: dict[str, RentalOffer] = {}  # one object for an offer several picks take
    for row in cur.execute(_FIRSTS, [version] * len(PICKS)).fetchall():
        values = dict(zip(_OFFER_FIELDS, row[1:], strict=True))
        offer = offers.get(values["offer_id"]) or msgspec.convert(values, RentalOffer)
        offers[offer.offer_id] = offer
        first = First(order=_order(row[0], values, version), version=version, offer=offer)
        firsts[row[0]][tuple(values[f] for f in KIND_FIELDS)] = first
    return RentalPart(version=version, counts=counts, firsts=firsts)


def read_parts(
    cur: Cursor, versions: Iterable[int], known: Mapping[int, RentalPart]
) -> dict[int, RentalPart]:
    """The parts of the rental ``versions``: those in ``known`` as they are, the others read with ``cur``."""
    return {v: known[v] if v in known else _read_part(cur, v) for v in versions}


def _kind_supply(kind: Kind, holders: Sequence[RentalPart]) -> KindSupply:
    """``kind`` across the parts that hold it (at least one): the first offer each pick takes of all
    of theirs, with how many offers of the kind it stands for."""
    counts: tuple[int, ...] = holders[0].counts[kind]
    for part in holders[1:]:
        counts = tuple(a + b for a, b in zip(counts, part.counts[kind], strict=True))
    picked: dict[tuple[int, str], tuple[First, set[str]]] = {}
    for pick in PICKS:
        firsts = [f for part in holders if (f := part.firsts[pick].get(kind)) is not None]
        if firsts:
            first = min(firsts, key=lambda f: f.order)
            picked.setdefault((first.version, first.offer.offer_id), (first, set()))[1].add(pick)
    on_demand, spot, reserved_1y, reserved_3y, _ = counts
    candidates = tuple(
        CurrentOffer(
            offer=first.offer,
            sheet_version=first.version,
            on_demand_alike=on_demand if "on_demand" in picks else 0,
            spot_alike=spot if "spot" in picks else 0,
            reserved_1y_alike=reserved_1y if "reserved_1y" in picks else 0,
            reserved_3y_alike=reserved_3y if "reserved_3y" in picks else 0,
        )
        for first, picks in picked.values()
    )
    return KindSupply(counts=counts, candidates=candidates)


def merge_parts(parts: Mapping[int, RentalPart], previous: RentalSupply | None = None) -> RentalSupply:
    """The current offers a request can pick: of the offers of one kind (:data:`KIND_FIELDS`), which
    every filter keeps or drops together, the first each consumer takes (:data:`PICKS`), with how many
    offers of its kind the plan's picks stand for. Each offer was checked once, as its version was read
    (``msgspec.convert``: an interconnect is one of the four).

    Of ``previous`` (the merge of the snapshot before), the kinds no added or dropped version holds are
    taken as they are: a 1-row upload merges one kind again, not every kind of a 300,000-row source."""
    ordered = [parts[v] for v in sorted(parts)]
    known = previous.parts if previous is not None else {}
    changed = [p for v, p in known.items() if v not in parts] + [p for p in ordered if p.version not in known]
    kinds = dict(previous.kinds) if previous is not None else {}
    for kind in {kind for part in changed for kind in part.counts}:
        holders = [part for part in ordered if kind in part.counts]
        if holders:
            kinds[kind] = _kind_supply(kind, holders)
        else:
            kinds.pop(kind, None)
    offer_counts: dict[str, int] = {}
    for kind, supply in kinds.items():
        offer_counts[kind[0]] = offer_counts.get(kind[0], 0) + supply.counts[4]
    candidates = sorted(
        (c for supply in kinds.values() for c in supply.candidates),
        key=lambda c: (c.offer.offer_id, c.sheet_version),
    )
    return RentalSupply(
        parts=dict(parts),
        kinds=kinds,
        candidates=tuple(candidates),
        offer_counts=offer_counts,
        regions=frozenset(str(kind[1]) for kind in kinds),
        count=sum(offer_counts.values()),
    )
