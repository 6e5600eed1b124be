"""Owned GPUs as plan supplies: every GPU with a purchase price in the current ownership sheets.

An owned GPU with MIG profiles is also a supply of each slice profile that splits it into several
(``max_count`` > 1): a unit is one slice, priced at the GPU's busy-hour rate ÷ ``max_count``, so a
plan that needs less than a GPU pays for the share it uses (the other slices serve other work, as
an owned GPU's idle hours do). Slices are for inference plans only (the pipeline drops them
otherwise).

An owned GPU is priced per **busy** hour: its yearly cost (capital annualised over its life, hosting,
maintenance, idle energy — ``pricing.ownership.tco``) spread over the busy share ``owned_utilization`` of its
hours, plus the energy of a busy hour. That share is the request's (default 0.85) and it is an
assumption: it holds only when other work keeps the hardware busy after this job, so every owned
supply states it, with what one purchase unit costs to buy, for a one-off job to weigh.

Owned GPUs are bought in whole purchase units (``pricing.purchase_unit``: 8-GPU boards for SXM/OAM
parts, 72-GPU NVL72 racks for GB200/GB300, servers of 1, 2, 4 or 8 PCIe cards), each linked as that
unit's board or rack is; more GPUs are several units, and a plan uses every GPU of the units it buys.
MIG slices are the one exception: a slice is priced as its share of a GPU on the same utilisation
basis, the other slices (and the server's other GPUs) serving other work.
Busy hours are not rounded. Setup, storage and interruptions follow the ``owned`` class row of the
provider-cost sheets.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import msgspec

from pricing import (
    OWNED_PROVIDER,
    OwnershipInputs,
    choose_defaults,
    derive_interconnect,
    owned_network,
    owned_usd_per_busy_gpu_hour,
    purchase_unit,
    terms_of,
)
from service.catalog.gpu_names import one_gpu
from service.db.snapshot import CatalogSnapshot, Derived
from service.errors import InvalidParameter
from solver import GpuSpec, OwnedInventory, Rejection, Supply, SupplyTerms

__all__ = [
    "OWNED_SUPPLIES",
    "OwnedSupplies",
    "inventory_supplies",
    "marginal_usd_per_gpu_hour",
    "owned_supplies",
]

_INPUTS = OwnershipInputs.__struct_fields__


class OwnedSupplies:
    """Owned supplies of one snapshot, computed once per utilisation a request asks for."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        self._snapshot = snapshot
        self._lock = threading.Lock()
        self._at: dict[float, tuple[list[Supply], list[Rejection]]] = {}

    def at(self, utilization: float) -> tuple[list[Supply], list[Rejection]]:
        with self._lock:
            if utilization not in self._at:
                self._at[utilization] = owned_supplies(self._snapshot, utilization)
            return self._at[utilization]


OWNED_SUPPLIES: Derived[OwnedSupplies] = Derived("owned supplies", OwnedSupplies)


def _slice_supplies(
    snapshot: CatalogSnapshot, gpu: GpuSpec, rate: float, source: str, version: int | None, terms: SupplyTerms
) -> list[Supply]:
    """One-slice supplies of every profile of ``gpu`` that fits on it more than once."""
    found = []
    for spec in snapshot.mig_slices.values():
        if spec.parent_gpu_id != gpu.gpu_id or spec.slices_per_gpu < 2:
            continue  # a profile that fits once costs the whole GPU and does less: never the cheaper choice
        share = rate / spec.slices_per_gpu
        rule = (
            f"one MIG {spec.mig_profile} slice costs the {gpu.name}'s ${rate:,.2f} per busy GPU-hour "
            f"/ {spec.slices_per_gpu} (the slices of this profile one {gpu.name} holds) = ${share:,.4f}"
        )
        found.append(
            Supply(
                supply_id=f"own:{spec.gpu_id}:1",
                acquisition="own",
                pricing="owned",
                gpu_id=spec.gpu_id,
                gpus_per_unit=1,
                interconnect="none",
                network=owned_network(gpu, 1),
                usd_per_unit_hour=share,
                billing_increment_s=0,
                terms=terms,
                price_source=f"{rule}; the {gpu.name} is {source}",
                sheet_version=version,
            )
        )
    return found


def _basis(inputs: OwnershipInputs, rate: float, utilization: float, citation: str) -> str:
    """How an owned busy hour is priced, with the utilisation named as the assumption it is."""
    return (
        f"owned at ${rate:,.2f} per busy GPU-hour at {utilization:.0%} utilisation (owned_utilization, an "
        "assumption: the hardware's yearly cost is spread over that share of its hours, so other work must "
        "keep it busy after this job; a one-off job that leaves it idle pays far more): purchase "
        f"${inputs.purchase_price_usd_per_gpu:,.0f} ({citation}), overhead x{inputs.server_overhead_factor:g}, "
        f"{inputs.useful_life_years:g}-year life, {inputs.power_kw_per_gpu:g} kW at PUE {inputs.pue:g} and "
        f"${inputs.electricity_usd_per_kwh:g}/kWh, colocation ${inputs.colocation_usd_per_kw_month:g}/kW-month, "
        f"maintenance {inputs.maintenance_fraction_per_year:.0%}/year, discount rate {inputs.discount_rate:.0%}"
    )


def _unit_text(inputs: OwnershipInputs, size: int, rule: str) -> str:
    """The purchase-unit rule and what one such unit costs to buy (what a one-off job commits to)."""
    outlay = inputs.purchase_price_usd_per_gpu * inputs.server_overhead_factor * size
    return f"{rule}; one {size}-GPU unit costs ${outlay:,.0f} to buy"


def _unit_supply(
    gpu: GpuSpec, size: int, rate: float, terms: SupplyTerms, version: int | None, source: str
) -> Supply:
    interconnect, _rule = derive_interconnect(gpu, size, "")
    return Supply(
        supply_id=f"own:{gpu.gpu_id}:{size}",
        acquisition="own",
        pricing="owned",
        gpu_id=gpu.gpu_id,
        gpus_per_unit=size,
        interconnect=interconnect,
        network=owned_network(gpu, size),
        usd_per_unit_hour=rate * size,
        billing_increment_s=0,
        terms=terms,
        price_source=source,
        sheet_version=version,
    )


def owned_supplies(snapshot: CatalogSnapshot, utilization: float) -> tuple[list[Supply], list[Rejection]]:
    """Owned supplies for every GPU the sheets price, and why the others cannot be owned."""
    rows = snapshot.ownership
    costs = snapshot.provider_costs.resolve(OWNED_PROVIDER)
    supplies: list[Supply] = []
    rejections: list[Rejection] = []
    for gpu_id, gpu in sorted(snapshot.gpus.items()):
        choice = choose_defaults(
            rows.prices.get(gpu_id, []), rows.defaults, gpu_tdp_w=gpu.tdp_w, user_price=False
        )
        values = {name: getattr(choice, name) for name in _INPUTS}
        missing = [name for name, value in values.items() if value is None]
        if missing:
            what = (
                "no purchase price" if "purchase_price_usd_per_gpu" in missing else f"no {', '.join(missing)}"
            )
            rejections.append(
                Rejection(
                    gpu_id=gpu_id, reason="filter", detail=f"cannot be owned: {what} in the ownership sheet"
                )
            )
            continue
        inputs = OwnershipInputs(**{name: value.value for name, value in values.items()})
        rate = owned_usd_per_busy_gpu_hour(inputs, utilization)
        price = values["purchase_price_usd_per_gpu"]
        source = _basis(inputs, rate, utilization, price.citation)
        version = price.sheet_version
        terms = terms_of(costs, gpu, spot=False)
        supplies.extend(_slice_supplies(snapshot, gpu, rate, source, version, terms))
        unit = purchase_unit(gpu)
        for size in unit.sizes:
            supplies.append(
                _unit_supply(
                    gpu, size, rate, terms, version, f"{source}; {_unit_text(inputs, size, unit.rule)}"
                )
            )
    return supplies, rejections


def marginal_usd_per_gpu_hour(snapshot: CatalogSnapshot, gpu: GpuSpec) -> float | None:
    """The energy of one busy hour of an owned ``gpu`` (the ownership sheet's power, load, PUE and
    electricity price): what using a GPU already owned costs, its capital being spent. ``None``: the
    sheets lack a value."""
    choice = choose_defaults(
        snapshot.ownership.prices.get(gpu.gpu_id, []),
        snapshot.ownership.defaults,
        gpu_tdp_w=gpu.tdp_w,
        user_price=False,
    )
    needed = ("power_kw_per_gpu", "load_fraction", "pue", "electricity_usd_per_kwh")
    values = {name: getattr(choice, name) for name in needed}
    if any(value is None for value in values.values()):
        return None
    power, load, pue, price = (values[name].value for name in needed)
    return float(power * load * pue * price)


_PARTS = (1, 2, 4, 8)
"""Parts of an owned server or rack a job may hold (other work holds the rest)."""


def inventory_supplies(snapshot: CatalogSnapshot, inventory: Sequence[OwnedInventory]) -> list[Supply]:
    """Owned GPUs that exist (a request's ``owned_inventory``): each type at its marginal running cost per
    busy GPU-hour, as its purchase unit and as the parts of it a job may hold, each capped at the GPUs
    owned (``max_units``)."""
    costs = snapshot.provider_costs.resolve(OWNED_PROVIDER)
    supplies: list[Supply] = []
    for i, item in enumerate(inventory):
        gpu = one_gpu(snapshot, item.gpu, f"owned_inventory[{i}].gpu")
        rate = (
            item.usd_per_gpu_hour
            if item.usd_per_gpu_hour is not None
            else marginal_usd_per_gpu_hour(snapshot, gpu)
        )
        if rate is None:
            raise InvalidParameter(
                f"owned_inventory[{i}].usd_per_gpu_hour",
                f"the ownership sheet cannot price a busy {gpu.name} hour; give it",
            )
        source = (
            f"owned inventory: {item.count} {gpu.name} already owned, at their marginal running cost of "
            f"${rate:,.2f} per busy GPU-hour (the capital is spent)"
        )
        terms = terms_of(costs, gpu, spot=False)
        for size in sorted({*purchase_unit(gpu).sizes, *_PARTS}):
            if size <= item.count:
                unit = _unit_supply(gpu, size, rate, terms, None, source)
                supplies.append(msgspec.structs.replace(unit, max_units=item.count // size))
    return supplies
