"""Inputs of a buy-vs-rent request: the GPU, the demand, every ownership input and the rent price.

Loads what the request needs with one query (the GPU's current ownership price rows, the current
ownership defaults and the GPU's priced current offers), then fills each input from the request or
its sourced default, recording the source as an ``Assumption``. Cross-field rules JSON Schema cannot
express are 400s naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from pricing import tco
from pricing.ownership_defaults import (
    SheetDefault,
    SheetPrice,
    SourcedValue,
    choose_defaults,
    commitment_discount,
)
from service.buy_vs_rent_schemas import Assumption, BuyVsRentRequest, OfferRef
from service.catalog.gpu_names import resolve_gpu_names
from service.db.store import Store
from service.errors import InvalidParameter

__all__ = ["SheetOffer", "load_sheet_rows", "rent_price", "resolve_demand", "resolve_gpu", "resolve_inputs"]

_OWN_FIELDS = tuple(tco.OwnershipInputs.__struct_fields__)
_UNITS = {
    "purchase_price_usd_per_gpu": "USD per GPU",
    "server_overhead_factor": "ratio",
    "useful_life_years": "years",
    "residual_fraction": "fraction of capital",
    "power_kw_per_gpu": "kW",
    "load_fraction": "fraction of provisioned power",
    "idle_power_fraction": "fraction of provisioned power",
    "pue": "ratio",
    "electricity_usd_per_kwh": "USD/kWh",
    "colocation_usd_per_kw_month": "USD/kW-month",
    "maintenance_fraction_per_year": "fraction of capital per year",
    "discount_rate": "per year",
}


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


_LOAD_SQL = """
WITH own_versions AS (SELECT version FROM current_sheets WHERE kind = 'ownership')
SELECT 'price', to_json(p)::VARCHAR FROM (
    SELECT * RENAME (version AS sheet_version) FROM ownership_prices
    WHERE gpu_id = ? AND version IN (SELECT version FROM own_versions)) p
UNION ALL
SELECT 'default', to_json(d)::VARCHAR FROM (
    SELECT * RENAME (version AS sheet_version) FROM ownership_defaults
    WHERE version IN (SELECT version FROM own_versions)) d
UNION ALL
SELECT 'offer', to_json(o)::VARCHAR FROM (
    SELECT o.offer_id, o.provider, o.instance_type, o.region, o.gpus_per_instance, o.price_per_hour_usd,
           o.version AS sheet_version, s.source AS sheet_source
    FROM current_offers o JOIN current_sheets s ON s.version = o.version
    WHERE o.gpu_id = ? AND o.price_per_hour_usd > 0 AND o.gpus_per_instance > 0) o
"""


def load_sheet_rows(
    store: Store, gpu_id: str
) -> tuple[list[SheetPrice], list[SheetDefault], list[SheetOffer]]:
    """The GPU's current price rows, all current defaults and the GPU's priced offers: one query."""
    with store.cursor() as cur:
        rows = cur.execute(_LOAD_SQL, [gpu_id, gpu_id]).fetchall()
    prices = [msgspec.json.decode(text, type=SheetPrice) for kind, text in rows if kind == "price"]
    defaults = [msgspec.json.decode(text, type=SheetDefault) for kind, text in rows if kind == "default"]
    offers = [msgspec.json.decode(text, type=SheetOffer) for kind, text in rows if kind == "offer"]
    return prices, defaults, offers


def resolve_gpu(store: Store, text: str) -> str:
    ids = resolve_gpu_names(store.snapshot, text, field="gpu")
    if len(ids) > 1:
        names = [store.snapshot.gpus[i].name for i in ids]
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
        busy = request.gpu_count * request.utilization * tco.HOURS_PER_MONTH
        return request.gpu_count, [busy] * horizon, False
    profile = request.monthly_demand_gpu_hours or []
    if len(profile) > horizon:
        raise InvalidParameter(
            "monthly_demand_gpu_hours", f"has {len(profile)} months, more than horizon_months ({horizon})"
        )
    if max(profile) < 1:
        raise InvalidParameter("monthly_demand_gpu_hours", "needs at least one month with 1 GPU-hour or more")
    demand = [profile[m % len(profile)] for m in range(horizon)]
    peak = math.ceil(max(demand) / tco.HOURS_PER_MONTH - 1e-9)
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
) -> tuple[tco.OwnershipInputs, list[Assumption]]:
    own = request.own
    choice = choose_defaults(
        prices, defaults, gpu_tdp_w=tdp, user_price=own.purchase_price_usd_per_gpu is not None
    )
    values: dict[str, float] = {}
    assumptions: list[Assumption] = []
    for name in _OWN_FIELDS:
        given = getattr(own, name)
        if given is not None:
            values[name] = float(given)
            assumptions.append(
                Assumption(
                    name=name, value=float(given), unit=_UNITS[name], source="request", citation="request"
                )
            )
            continue
        default: SourcedValue | None = getattr(choice, name)
        if default is None:
            what = "purchase price" if name == "purchase_price_usd_per_gpu" else "default"
            raise InvalidParameter(f"own.{name}", f"the ownership sheet has no {what} for this GPU; give it")
        values[name] = default.value
        assumptions.append(
            Assumption(
                name=name,
                value=default.value,
                unit=default.unit,
                source=default.source,
                citation=default.citation,
                sheet_version=default.sheet_version,
                confidence=default.confidence,
            )
        )
    return tco.OwnershipInputs(**values), assumptions


def rent_price(
    request: BuyVsRentRequest, defaults: Sequence[SheetDefault], offers: Sequence[SheetOffer]
) -> tuple[float, OfferRef | None, list[Assumption]]:
    commitment = request.rent.commitment
    if request.rent.usd_per_gpu_hour is not None:
        price = float(request.rent.usd_per_gpu_hour)
        return (
            price,
            None,
            [
                Assumption(
                    name="rent_usd_per_gpu_hour",
                    value=price,
                    unit="USD per GPU-hour",
                    source="request",
                    citation=f"request ({commitment} rate)",
                )
            ],
        )
    if not offers:
        raise InvalidParameter(
            "rent.usd_per_gpu_hour", "no current rental offer prices this GPU on demand; give the rent price"
        )
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
    price, offer, discount = min(
        priced, key=lambda p: (p[0], p[1].provider, p[1].instance_type, p[1].region, p[1].offer_id)
    )
    ref = OfferRef(
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
        assumptions.append(
            Assumption(
                name=f"commitment_discount_{commitment}",
                value=discount.value,
                unit=discount.unit,
                source=discount.source,
                citation=discount.citation,
                sheet_version=discount.sheet_version,
                confidence=discount.confidence,
            )
        )
    return price, ref, assumptions
