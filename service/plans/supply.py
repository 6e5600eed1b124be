"""What a plan can run on: rental supplies from the current offers, after the request's filters.

Offers that differ only in price (same GPU, GPUs per instance, interconnect, network between
instances, pricing, billing increment and the seller's costs beyond the hour) are interchangeable for the planner, so the offers are grouped once per catalog snapshot
(:data:`SUPPLY_INDEX`), each group sorted by price, and a request takes the cheapest offer of each group
that passes its filters. A plan's cost therefore grows with the number of distinct groups, not with the
number of offers: a catalog ten or a hundred times larger, made of the same kinds of instances, plans in
about the same time.

Each offer is a supply at every kind of price its sheet states: on demand, spot, and reserved for 1 or
3 years (``reserved_1y_price_per_hour_usd`` / ``reserved_3y_price_per_hour_usd``). A reservation is
billed for its whole term, so its billing increment is the term (:data:`solver.RESERVED_TERM_HOURS`);
spot needs ``constraints.spot`` and reservations ``constraints.reserved``.

Every rented supply keeps the offer it prices as a typed :class:`~service.plans.schemas.OfferRef`
(``SupplySet.offers``, by supply id), so rendering never parses an id.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Final

import msgspec

from pricing import ISO_COUNTRIES, RentalOffer, ResolvedCost, country_of, terms_of
from service.catalog.gpu_names import resolve_gpu_names, resolve_slice
from service.db.snapshot import CatalogSnapshot, CurrentOffer, Derived
from service.errors import InvalidParameter
from service.plans.schemas import OfferRef
from solver import (
    RESERVED_TERM_HOURS,
    HostSpec,
    Interconnect,
    Network,
    PlanBase,
    Rejection,
    RejectionReason,
    RentedKind,
    Supply,
    SupplyTerms,
    host_shortfall,
    host_unknown,
    slice_id,
)

__all__ = [
    "RENTAL_SUPPLIES",
    "SUPPLY_INDEX",
    "OfferGroup",
    "RentalSupplies",
    "SupplyFilter",
    "SupplyIndex",
    "SupplySet",
    "rental_supplies",
]

Pricing = RentedKind


class OfferGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Interchangeable offers, cheapest first."""

    pricing: Pricing
    gpu_id: str
    gpus_per_instance: int
    interconnect: Interconnect
    network: Network
    billing_increment_s: int
    costs: ResolvedCost | None
    """The sellers' costs beyond the hour (equal for every offer of the group)."""
    terms: SupplyTerms
    """Those costs and the interruption rate of the group's GPU, as a supply's terms."""
    offers: tuple[tuple[float, CurrentOffer], ...]
    alike: int
    """The current offers the group stands for (``offers`` holds the cheapest of each kind only)."""


class SupplyIndex(msgspec.Struct, frozen=True, kw_only=True):
    groups: tuple[OfferGroup, ...]
    spot_only_gpus: frozenset[str]


def _offered_gpu(snapshot: CatalogSnapshot, offer: RentalOffer) -> str | None:
    """What an offer rents: its GPU, or the MIG slice its ``mig_profile`` names (``None`` when the
    catalog no longer has that slice)."""
    if offer.mig_profile is None:
        return offer.gpu_id
    found = slice_id(offer.gpu_id, offer.mig_profile)
    return found if found in snapshot.mig_slices else None


def _prices(current: CurrentOffer) -> Sequence[tuple[Pricing, float | None, int]]:
    """Each kind of price of an offer, with how many current offers of its kind it stands for."""
    offer = current.offer
    return (
        ("on_demand", offer.price_per_hour_usd, current.on_demand_alike),
        ("spot", offer.spot_price_per_hour_usd, current.spot_alike),
        ("reserved_1y", offer.reserved_1y_price_per_hour_usd, current.reserved_1y_alike),
        ("reserved_3y", offer.reserved_3y_price_per_hour_usd, current.reserved_3y_alike),
    )


def _increment_s(pricing: Pricing, offer: RentalOffer) -> int:
    """What one billed increment is: the offer's own, or a reservation's whole term."""
    if pricing == "reserved_1y" or pricing == "reserved_3y":
        return RESERVED_TERM_HOURS[pricing] * 3600
    return offer.billing_increment_s


def build_supply_index(snapshot: CatalogSnapshot) -> SupplyIndex:
    """Group the snapshot's candidate offers by everything but price (on-demand and spot prices
    apart); an offer of MIG slices is an offer of the slice's own GPU entry. The candidates are the
    cheapest of each kind of offer, and a kind is finer than a group, so each group's cheapest offer
    that passes a request's filters is the one a group of every current offer would give."""
    grouped: dict[
        tuple[Pricing, str, int, Interconnect, int, str, float, tuple[float, ...]],
        list[tuple[float, CurrentOffer]],
    ] = {}
    costs: dict[tuple[float, ...], ResolvedCost | None] = {}
    alike: dict[tuple[Pricing, str, int, Interconnect, int, str, float, tuple[float, ...]], int] = {}
    spot_only: set[str] = set()
    has_on_demand: set[str] = set()
    for current in snapshot.candidates:
        offer = current.offer
        resolved = snapshot.provider_costs.resolve(offer.provider)
        signature = () if resolved is None else tuple(resolved.values.values())
        costs.setdefault(signature, resolved)
        gpu_id = _offered_gpu(snapshot, offer)
        if gpu_id is None:
            continue
        for pricing, price, stands_for in _prices(current):
            if price is None:
                continue
            key = (
                pricing,
                gpu_id,
                offer.gpus_per_instance,
                offer.interconnect,
                _increment_s(pricing, offer),
                offer.network_class,
                offer.network_gbps,
                signature,
            )
            grouped.setdefault(key, []).append((price, current))
            alike[key] = alike.get(key, 0) + stands_for
        if offer.price_per_hour_usd is not None:
            has_on_demand.add(gpu_id)
        elif offer.spot_price_per_hour_usd is not None:
            spot_only.add(gpu_id)
    groups: list[OfferGroup] = []
    for group_key, members in sorted(grouped.items()):
        pricing, gpu_id, count, interconnect, increment, _, _, signature = group_key
        ordered = tuple(sorted(members, key=lambda m: (m[0], m[1].offer.offer_id)))
        groups.append(
            OfferGroup(
                pricing=pricing,
                gpu_id=gpu_id,
                gpus_per_instance=count,
                interconnect=interconnect,
                network=ordered[0][1].offer.network,
                billing_increment_s=increment,
                costs=costs[signature],
                terms=terms_of(costs[signature], snapshot.gpu_spec(gpu_id), spot=pricing == "spot"),
                offers=ordered,
                alike=alike[group_key],
            )
        )
    return SupplyIndex(groups=tuple(groups), spot_only_gpus=frozenset(spot_only - has_on_demand))


SUPPLY_INDEX: Derived[SupplyIndex] = Derived("supply index", build_supply_index)


def _known_names(values: Sequence[str] | None, known: frozenset[str], field: str) -> frozenset[str] | None:
    if values is None:
        return None
    chosen = set()
    lowered = {k.casefold(): k for k in known}
    for i, value in enumerate(values):
        match = lowered.get(value.strip().casefold())
        if match is None:
            listed = [k for k in sorted(known) if k.strip()]  # a region name may hold commas: ';' between
            more = f" (and {len(listed) - 40} more)" if len(listed) > 40 else ""
            raise InvalidParameter(
                f"{field}[{i}]", f"unknown value {value!r}; known: {'; '.join(listed[:40])}{more}"
            )
        chosen.add(match)
    return frozenset(chosen)


def _country_codes(codes: Sequence[str] | None, field: str) -> frozenset[str] | None:
    """ISO 3166-1 alpha-2 codes, upper-cased (a 400 naming the first that is not one)."""
    if codes is None:
        return None
    for i, code in enumerate(codes):
        if code.strip().upper() not in ISO_COUNTRIES:
            raise InvalidParameter(
                f"{field}[{i}]", f"{code!r} is not an ISO 3166-1 alpha-2 country code (e.g. US, DE, FI)"
            )
    return frozenset(code.strip().upper() for code in codes)


def _gpu_ids(
    snapshot: CatalogSnapshot, names: Sequence[str] | None, field: str, *, slices: bool = True
) -> frozenset[str] | None:
    """The GPUs ``names`` denote, with the MIG slices of each when ``slices`` (a name may also be one
    slice's, always kept: naming a slice asks for it)."""
    if names is None:
        return None
    ids: set[str] = set()
    for i, name in enumerate(names):
        slice_id = resolve_slice(snapshot, name)
        if slice_id is not None:
            ids.add(slice_id)
        else:
            ids.update(resolve_gpu_names(snapshot, name, field=f"{field}[{i}]"))
    if slices:
        ids.update(s.gpu_id for s in snapshot.mig_slices.values() if s.parent_gpu_id in ids)
    return frozenset(ids)


class SupplyFilter(msgspec.Struct, frozen=True, kw_only=True):
    """The request's supply filters, resolved against the catalog (``None``: no restriction)."""

    providers: frozenset[str] | None
    regions: frozenset[str] | None
    gpus: frozenset[str] | None
    excluded: frozenset[str]
    spot: bool
    reserved: bool = False
    """Reserved (committed) prices allowed (``constraints.reserved``)."""
    host: HostSpec | None = None
    """What each GPU needs from its host (rentals only; None when nothing is asked)."""
    countries: frozenset[str] | None = None
    """Rent only in these countries (the country derived from each offer's region)."""
    decodes_images: bool = False
    """The job trains on JPEGs its hosts decode (vision training): offers of a group with more vCPUs
    are kept beside the cheapest, for the planner's data-loading rule."""
    exclude_countries: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, snapshot: CatalogSnapshot, request: PlanBase, *, decodes_images: bool = False
    ) -> SupplyFilter:
        """Resolve (a 400 naming the first unknown value): providers and regions only when renting;
        ``decodes_images`` for a vision training job."""
        limits = request.constraints
        renting = request.acquisition in ("rent", "either")
        return cls(
            providers=_known_names(limits.providers, snapshot.providers, "constraints.providers")
            if renting
            else None,
            regions=_known_names(limits.regions, snapshot.regions, "constraints.regions")
            if renting
            else None,
            gpus=_gpu_ids(snapshot, limits.gpus, "constraints.gpus", slices=limits.mig),
            excluded=_gpu_ids(snapshot, limits.exclude_gpus, "constraints.exclude_gpus") or frozenset(),
            spot=limits.spot,
            reserved=limits.reserved,
            host=request.host if renting and request.host is not None and request.host.asks() else None,
            countries=_country_codes(limits.countries, "constraints.countries") if renting else None,
            decodes_images=decodes_images and renting,
            exclude_countries=(
                _country_codes(limits.exclude_countries, "constraints.exclude_countries") or frozenset()
            )
            if renting
            else frozenset(),
        )

    def keeps_country(self, offer: RentalOffer) -> bool:
        """Whether the offer's country passes ``countries`` and ``exclude_countries``: an offer whose
        country cannot be derived passes only when ``countries`` is not given."""
        if self.countries is None and not self.exclude_countries:
            return True
        country, _ = country_of(offer.provider, offer.region)
        if country is None:
            return self.countries is None
        return (self.countries is None or country in self.countries) and country not in self.exclude_countries

    def keeps_gpu(self, gpu_id: str) -> bool:
        return (self.gpus is None or gpu_id in self.gpus) and gpu_id not in self.excluded


class SupplySet(msgspec.Struct, frozen=True, kw_only=True):
    """The supplies a plan may choose from, why GPUs were filtered out, and the offer behind each rental."""

    supplies: list[Supply]
    rejections: list[Rejection]
    passed_over: int
    """Offers passed over: a cheaper interchangeable offer was kept, or they failed a filter."""
    offers: dict[str, OfferRef]
    """The offer each rented supply prices, by supply id."""
    host_unknown: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    """Rented supplies whose offer does not state a host number the request asks about (by supply id)."""
    unknown_country: tuple[str, ...] = ()
    """With ``constraints.countries``: the offers (``provider region``) excluded because no country
    could be derived from their region."""


def _rented(group: OfferGroup, price: float, current: CurrentOffer) -> tuple[Supply, OfferRef]:
    offer = current.offer
    supply = Supply(
        supply_id=f"{offer.offer_id}:{group.pricing}",
        acquisition="rent",
        pricing=group.pricing,
        gpu_id=group.gpu_id,
        gpus_per_unit=offer.gpus_per_instance,
        interconnect=offer.interconnect,
        network=offer.network,
        usd_per_unit_hour=price,
        billing_increment_s=group.billing_increment_s,
        terms=group.terms,
        provider=offer.provider,
        instance_type=offer.instance_type,
        region=offer.region,
        country=country_of(offer.provider, offer.region)[0],
        price_source=f"price sheet version {current.sheet_version} ({offer.source})",
        sheet_version=current.sheet_version,
        host_ram_gib_per_gpu=None
        if offer.host_memory_gib is None
        else offer.host_memory_gib / offer.gpus_per_instance,
        vcpus_per_gpu=None if offer.vcpus is None else offer.vcpus / offer.gpus_per_instance,
        max_units=offer.available_instances,
    )
    ref = OfferRef(
        offer_id=offer.offer_id,
        provider=offer.provider,
        instance_type=offer.instance_type,
        region=offer.region,
        country=country_of(offer.provider, offer.region)[0],
        gpus_per_instance=offer.gpus_per_instance,
        interconnect=offer.interconnect,
        network=offer.network,  # the group's class and rate, with this offer's own rule
        price_per_hour_usd=price,
        pricing=group.pricing,
        sheet_version=current.sheet_version,
    )
    return supply, ref


def _group_rejection(index: SupplyIndex, group: OfferGroup, filters: SupplyFilter) -> str | None:
    """Why a group's GPU is filtered out ("" to pass over silently), or None when it may be used."""
    if filters.gpus is not None and group.gpu_id not in filters.gpus:
        return "not in constraints.gpus"
    if group.gpu_id in filters.excluded:
        return "in constraints.exclude_gpus"
    if group.pricing == "spot" and not filters.spot:
        return (
            "only spot offers and constraints.spot is false" if group.gpu_id in index.spot_only_gpus else ""
        )
    if group.pricing in ("reserved_1y", "reserved_3y") and not filters.reserved:
        return ""  # a commitment is opt-in: passed over silently, as dearer offers are
    return None


def _first_with_host(
    group: OfferGroup, allowed: list[tuple[float, CurrentOffer]], host: HostSpec
) -> tuple[float, CurrentOffer] | str:
    """The cheapest allowed offer whose stated host numbers meet ``host``, or why the first falls short."""
    short = ""
    for price, current in allowed:
        offer = current.offer
        why = host_shortfall(
            host, group.gpus_per_instance, offer.vcpus, offer.host_memory_gib, offer.storage_read_gbps
        )
        if why is None:
            return price, current
        short = short or f"no offer meets the host requirement: {offer.instance_type} has {why}"
    return short


def _allowed(
    group: OfferGroup, filters: SupplyFilter, no_country: set[tuple[str, str, str]]
) -> Iterator[tuple[float, CurrentOffer]]:
    """The group's offers (cheapest first) from the allowed providers, regions and countries; the
    offers excluded because ``constraints.countries`` is given and their country is unknown are
    added to ``no_country``."""
    providers, regions = filters.providers, filters.regions  # hot loop: no method calls
    by_country = filters.countries is not None or bool(filters.exclude_countries)
    for price, current in group.offers:
        offer = current.offer
        if (providers is not None and offer.provider not in providers) or (
            regions is not None and offer.region not in regions
        ):
            continue
        if by_country and not filters.keeps_country(offer):
            if country_of(offer.provider, offer.region)[0] is None:
                no_country.add((offer.offer_id, offer.provider, offer.region))
            continue
        yield price, current


def _more_vcpus(
    group: OfferGroup,
    allowed: list[tuple[float, CurrentOffer]],
    first: tuple[float, CurrentOffer],
    host: HostSpec | None,
) -> list[tuple[float, CurrentOffer]]:
    """The group's dearer offers with more vCPUs than every cheaper one kept: an image-training job
    needs vCPUs in proportion to its GPUs' rate (:mod:`solver.throughput.data_loading`), which only the
    planner knows, so it gets each step up in vCPUs and rejects the thin hosts with the reason ``host``."""
    most = first[1].offer.vcpus
    thicker: list[tuple[float, CurrentOffer]] = []
    for price, current in allowed:
        offer = current.offer
        if most is None or offer.vcpus is None or offer.vcpus <= most or price < first[0]:
            continue
        if host is not None and host_shortfall(
            host, group.gpus_per_instance, offer.vcpus, offer.host_memory_gib, offer.storage_read_gbps
        ):
            continue
        thicker.append((price, current))
        most = offer.vcpus
    return thicker


_BEHIND_CAPS: Final = 3
"""Dearer offers of a group taken after a capped one (``available_instances``), at most."""


def _behind_caps(
    first: tuple[float, CurrentOffer], allowed: Iterator[tuple[float, CurrentOffer]]
) -> list[tuple[float, CurrentOffer]]:
    """An offer whose seller publishes its available instances is not interchangeable with the next
    dearer one of its group: a plan needing more instances than it has takes that one, so the next
    offers are supplies too, up to the first without a cap (or :data:`_BEHIND_CAPS`)."""
    behind: list[tuple[float, CurrentOffer]] = []
    pick = first
    while pick[1].offer.available_instances is not None and len(behind) < _BEHIND_CAPS:
        following = next(allowed, None)
        if following is None:
            break
        behind.append(following)
        pick = following
    return behind


def rental_supplies(index: SupplyIndex, filters: SupplyFilter) -> SupplySet:
    """The cheapest offer of each group that passes the filters, as a supply."""
    rejections: dict[tuple[str, str], Rejection] = {}

    def reject(gpu_id: str, detail: str, reason: RejectionReason = "filter") -> None:
        rejections.setdefault((gpu_id, detail), Rejection(gpu_id=gpu_id, reason=reason, detail=detail))

    supplies: list[Supply] = []
    offers: dict[str, OfferRef] = {}
    unknown: dict[str, tuple[str, ...]] = {}
    no_country: set[tuple[str, str, str]] = set()
    passed_over = 0
    host = filters.host
    for group in index.groups:
        why = _group_rejection(index, group, filters)
        if why is not None:
            if why:
                reject(group.gpu_id, why)
            continue
        listed = (
            list(_allowed(group, filters, no_country))  # every offer a country excludes is counted
            if filters.countries is not None or filters.decodes_images
            else None
        )
        allowed = _allowed(group, filters, no_country) if listed is None else iter(listed)
        first = next(allowed, None) if host is None else _first_with_host(group, list(allowed), host)
        if isinstance(first, str) or first is None:
            reject(
                group.gpu_id,
                first or "no offer from the allowed providers, regions and countries",
                "host" if first else "filter",
            )
            continue
        thicker = _more_vcpus(group, listed, first, host) if filters.decodes_images and listed else []
        thicker += _behind_caps(first, allowed) if host is None else []
        passed_over += (
            group.alike - 1 - len(thicker)
        )  # interchangeable offers passed over (dearer or filtered out)
        for supply, ref in (_rented(group, *pick) for pick in (first, *thicker)):
            supplies.append(supply)
            offers[supply.supply_id] = ref
        if host is not None:
            offer = first[1].offer
            missing = host_unknown(host, offer.vcpus, offer.host_memory_gib, offer.storage_read_gbps)
            if missing:
                unknown[supply.supply_id] = missing
    return SupplySet(
        supplies=supplies,
        rejections=list(rejections.values()),
        passed_over=passed_over,
        offers=offers,
        host_unknown=unknown,
        unknown_country=tuple(f"{provider} {region!r}" for _, provider, region in sorted(no_country)),
    )


class RentalSupplies:
    """:func:`rental_supplies` of one snapshot, remembered per filter (requests repeat their filters;
    the snapshot never changes, so an answer stays right). Bounded; the sets are shared, never mutated."""

    _MAX_FILTERS = 1024

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        self._snapshot = snapshot  # the index is derived on first use: not while the snapshot builds this
        self._sets: dict[SupplyFilter, SupplySet] = {}
        self._lock = threading.Lock()

    def matching(self, filters: SupplyFilter) -> SupplySet:
        with self._lock:
            found = self._sets.get(filters)
        if found is None:
            found = rental_supplies(self._snapshot.derive(SUPPLY_INDEX), filters)
            with self._lock:
                if len(self._sets) >= self._MAX_FILTERS:
                    self._sets.clear()
                self._sets[filters] = found
        return found


RENTAL_SUPPLIES: Derived[RentalSupplies] = Derived("rental supplies by filter", RentalSupplies)
