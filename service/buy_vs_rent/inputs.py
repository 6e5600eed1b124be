"""Inputs of a buy-vs-rent request: the GPU, the demand, every ownership input and the rent price.

Reads what the request needs from the catalog snapshot (the GPU's current ownership price rows, the
current ownership defaults and the GPU's priced current offers), then fills each input from the
request or its sourced default, recording the source as an ``Assumption``. Cross-field rules JSON
Schema cannot express are 400s naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from pricing import (
    HOURS_PER_MONTH,
    OwnershipInputs,
    SheetDefault,
    SheetPrice,
    SourcedValue,
    choose_defaults,
    commitment_discount,
)
from service.buy_vs_rent.own_inputs import UNITS
from service.buy_vs_rent.schemas import Assumption, BuyVsRentRequest, Commitment, OfferRef
from service.catalog.gpu_names import resolve_gpu_names
from service.db.snapshot import CatalogSnapshot
from service.errors import InvalidParameter

__all__ = [
    "SheetOffer",
    "SheetRows",
    "rent_price",
    "resolve_demand",
    "resolve_gpu",
    "resolve_inputs",
    "sheet_rows",
]


class SheetOffer(msgspec.Struct, frozen=True, kw_only=True):
    """A current offer of the GPU with an on-demand price, and the rental sheet it belongs to."""

    offer_id: str
    provider: str
    instance_type: str
    region: str
    gpus_per_instance: int
    price_per_hour_usd: float
    sheet_version: int
    sheet_source: str


class SheetRows(msgspec.Struct, frozen=True, kw_only=True):
    """What the current sheets say about one GPU: its purchase prices, every finance default, and its
    offers with an on-demand price (all from the catalog snapshot)."""

    prices: list[SheetPrice]
    defaults: list[SheetDefault]
    offers: list[SheetOffer]


def sheet_rows(snapshot: CatalogSnapshot, gpu_id: str) -> SheetRows:
    """The GPU's current ownership price rows, all current defaults and the GPU's priced offers."""
    sources = {sheet.version: sheet.source for sheet in snapshot.sheets}
    offers = [
        SheetOffer(
            offer_id=o.offer_id,
            provider=o.provider,
            instance_type=o.instance_type,
            region=o.region,
            gpus_per_instance=o.gpus_per_instance,
            price_per_hour_usd=o.price_per_hour_usd,
            sheet_version=current.sheet_version,
            sheet_source=sources[current.sheet_version],
        )
        for current in snapshot.candidates  # the cheapest of each kind by price, then instance type
        if (o := current.offer).gpu_id == gpu_id
        and o.price_per_hour_usd is not None
        and o.price_per_hour_usd > 0
        and o.gpus_per_instance > 0
    ]
    ownership = snapshot.ownership
    return SheetRows(prices=ownership.prices.get(gpu_id, []), defaults=ownership.defaults, offers=offers)


def resolve_gpu(snapshot: CatalogSnapshot, text: str) -> str:
    """Exactly one GPU: buy vs rent prices one GPU type (a 400 naming the candidates otherwise)."""
    ids = resolve_gpu_names(snapshot, text, field="gpu")
    if len(ids) > 1:
        names = [snapshot.gpus[i].name for i in ids]
        raise InvalidParameter(
            "gpu",
            f"{text!r} can be {', '.join(names)}; name one (buy vs rent prices one GPU type)",
            suggestions=names,
        )
    return ids[0]


def resolve_demand(request: BuyVsRentRequest) -> tuple[int, list[float], bool]:
    """Fleet size, the fleet's busy GPU-hours per month and whether the demand is a profile."""
    horizon = request.horizon_months
    if (request.utilization is None) == (request.monthly_demand_gpu_hours is None):
        raise InvalidParameter("utilization", "give exactly one of utilization or monthly_demand_gpu_hours")
    if request.utilization is not None:
        if request.gpu_count is None:
            raise InvalidParameter("gpu_count", "required with utilization (how many GPUs to buy or rent)")
        busy = request.gpu_count * request.utilization * HOURS_PER_MONTH
        return request.gpu_count, [busy] * horizon, False
    profile = request.monthly_demand_gpu_hours or []
    if len(profile) > horizon:
        raise InvalidParameter(
            "monthly_demand_gpu_hours", f"has {len(profile)} months, more than horizon_months ({horizon})"
        )
    if max(profile) < 1:
        raise InvalidParameter("monthly_demand_gpu_hours", "needs at least one month with 1 GPU-hour or more")
    demand = [profile[m % len(profile)] for m in range(horizon)]
    peak = math.ceil(max(demand) / HOURS_PER_MONTH - 1e-9)
    gpus = request.gpu_count if request.gpu_count is not None else peak
    if gpus < peak:
        raise InvalidParameter(
            "gpu_count",
            f"{gpus} GPUs cannot serve the peak month ({max(demand):g} GPU-hours needs {peak}); "
            "omit gpu_count or raise it",
        )
    return gpus, demand, True


def resolve_inputs(
    request: BuyVsRentRequest,
    prices: Sequence[SheetPrice],
    defaults: Sequence[SheetDefault],
    tdp: float | None,
) -> tuple[OwnershipInputs, list[Assumption]]:
    own = request.own
    choice = choose_defaults(
        prices, defaults, gpu_tdp_w=tdp, user_price=own.purchase_price_usd_per_gpu is not None
    )
    values: dict[str, float] = {}
    assumptions: list[Assumption] = []
    for name in UNITS:
        given = getattr(own, name)
        if given is not None:
            values[name] = float(given)
            assumptions.append(
                Assumption(
                    name=name, value=float(given), unit=UNITS[name], source="request", citation="request"
                )
            )
            continue
        default: SourcedValue | None = getattr(choice, name)
        if default is None:
            what = "purchase price" if name == "purchase_price_usd_per_gpu" else "default"
            raise InvalidParameter(f"own.{name}", f"the ownership sheet has no {what} for this GPU; give it")
        values[name] = default.value
        assumptions.append(_sourced(name, default))
    return OwnershipInputs(**values), assumptions


def _discounted(
    offers: Sequence[SheetOffer], defaults: Sequence[SheetDefault], commitment: Commitment
) -> tuple[float, SheetOffer, SourcedValue | None]:
    """The cheapest offer per GPU-hour after the provider's commitment discount (a 400 without one)."""
    priced: list[tuple[float, SheetOffer, SourcedValue | None]] = []
    for offer in offers:
        on_demand = offer.price_per_hour_usd / offer.gpus_per_instance
        discount = (
            None if commitment == "on_demand" else commitment_discount(defaults, offer.provider, commitment)
        )
        if commitment != "on_demand" and discount is None:
            raise InvalidParameter(
                "rent.commitment", f"the ownership sheet has no {commitment} discount to apply"
            )
        priced.append((on_demand * (1.0 - (discount.value if discount else 0.0)), offer, discount))
    return min(priced, key=lambda p: (p[0], p[1].provider, p[1].instance_type, p[1].region, p[1].offer_id))


def _offer_ref(offer: SheetOffer, discount: SourcedValue | None) -> OfferRef:
    return OfferRef(
        offer_id=offer.offer_id,
        provider=offer.provider,
        instance_type=offer.instance_type,
        region=offer.region,
        gpus_per_instance=offer.gpus_per_instance,
        on_demand_usd_per_hour=offer.price_per_hour_usd,
        on_demand_usd_per_gpu_hour=offer.price_per_hour_usd / offer.gpus_per_instance,
        commitment_discount=discount.value if discount else 0.0,
        sheet_version=offer.sheet_version,
        sheet_source=offer.sheet_source,
    )


def _sourced(name: str, value: SourcedValue) -> Assumption:
    return Assumption(
        name=name,
        value=value.value,
        unit=value.unit,
        source=value.source,
        citation=value.citation,
        sheet_version=value.sheet_version,
        confidence=value.confidence,
    )


def rent_price(
    request: BuyVsRentRequest, defaults: Sequence[SheetDefault], offers: Sequence[SheetOffer]
) -> tuple[float, OfferRef | None, list[Assumption]]:
    """The rent per GPU-hour: the request's, else the cheapest current offer's after the discount."""
    commitment = request.rent.commitment
    if request.rent.usd_per_gpu_hour is not None:
        price = float(request.rent.usd_per_gpu_hour)
        given = Assumption(
            name="rent_usd_per_gpu_hour",
            value=price,
            unit="USD per GPU-hour",
            source="request",
            citation=f"request ({commitment} rate)",
        )
        return price, None, [given]
    if not offers:
        raise InvalidParameter(
            "rent.usd_per_gpu_hour", "no current rental offer prices this GPU on demand; give the rent price"
        )
    price, offer, discount = _discounted(offers, defaults, commitment)
    assumptions = [
        Assumption(
            name="rent_usd_per_gpu_hour",
            value=price,
            unit="USD per GPU-hour",
            source="rental_sheet",
            citation=(
                f"cheapest current offer per GPU-hour after the {commitment} discount: {offer.provider} "
                f"{offer.instance_type} ({offer.region}, offer {offer.offer_id}) "
                f"{offer.price_per_hour_usd:g} USD/h / {offer.gpus_per_instance} GPUs"
            ),
            sheet_version=offer.sheet_version,
        )
    ]
    if discount is not None:
        assumptions.append(_sourced(f"commitment_discount_{commitment}", discount))
    return price, _offer_ref(offer, discount), assumptions
