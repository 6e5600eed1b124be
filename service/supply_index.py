"""Current rental offers grouped for the planner, built once per catalog snapshot.

Offers that differ only in price (same GPU, GPUs per instance, interconnect, pricing and billing
increment) are interchangeable for the planner, so each group keeps its offers sorted by price and a
request takes the cheapest one that passes its filters. A plan's cost therefore grows with the number
of distinct groups, not with the number of offers: a catalog ten or a hundred times larger, made of
the same kinds of instances, plans in about the same time.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.db.snapshot import CatalogSnapshot, CurrentOffer, Derived

__all__ = ["SUPPLY_INDEX", "OfferGroup", "SupplyIndex", "build_supply_index"]


class OfferGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Interchangeable offers, cheapest first."""

    pricing: str
    gpu_id: str
    gpus_per_instance: int
    interconnect: str
    billing_increment_s: int
    offers: tuple[tuple[float, CurrentOffer], ...]


class SupplyIndex(msgspec.Struct, frozen=True, kw_only=True):
    groups: tuple[OfferGroup, ...]
    spot_only_gpus: frozenset[str]


def build_supply_index(snapshot: CatalogSnapshot) -> SupplyIndex:
    """Group the snapshot's offers by everything but price (on-demand and spot prices apart)."""
    grouped: dict[tuple[str, str, int, str, int], list[tuple[float, CurrentOffer]]] = {}
    spot_only: set[str] = set()
    has_on_demand: set[str] = set()
    for current in snapshot.offers:
        offer = current.offer
        prices: Sequence[tuple[str, float | None]] = (
            ("on_demand", offer.price_per_hour_usd),
            ("spot", offer.spot_price_per_hour_usd),
        )
        for pricing, price in prices:
            if price is None:
                continue
            key = (
                pricing,
                offer.gpu_id,
                offer.gpus_per_instance,
                offer.interconnect,
                offer.billing_increment_s,
            )
            grouped.setdefault(key, []).append((price, current))
        if offer.price_per_hour_usd is None:
            spot_only.add(offer.gpu_id)
        else:
            has_on_demand.add(offer.gpu_id)
    groups = tuple(
        OfferGroup(
            pricing=key[0],
            gpu_id=key[1],
            gpus_per_instance=key[2],
            interconnect=key[3],
            billing_increment_s=key[4],
            offers=tuple(sorted(members, key=lambda m: (m[0], m[1].offer.offer_id))),
        )
        for key, members in sorted(grouped.items())
    )
    return SupplyIndex(groups=groups, spot_only_gpus=frozenset(spot_only - has_on_demand))


SUPPLY_INDEX: Derived[SupplyIndex] = Derived("supply index", build_supply_index)
