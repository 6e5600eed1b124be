"""Owned GPUs as plan supplies: every GPU with a purchase price in the current ownership sheets.

An owned GPU is priced per **busy** hour: its yearly cost (capital annualised over its life, hosting,
maintenance, idle energy — ``pricing.tco``) spread over the busy share ``owned_utilization`` of its
hours, plus the energy of a busy hour. Owned GPUs come in servers of up to 8 (1, 2, 4 or 8 per node,
linked as that form factor's board is; more GPUs are several 8-GPU nodes). Busy hours are not rounded.
"""

from __future__ import annotations

import msgspec

from pricing import tco
from pricing.interconnect import derive_interconnect
from pricing.ownership_defaults import SheetDefault, SheetPrice, choose_defaults
from service.store import CatalogSnapshot, Store
from solver.candidates import Rejection, Supply

__all__ = ["OwnershipRows", "load_ownership_rows", "owned_supplies"]

_INPUTS = tco.OwnershipInputs.__struct_fields__
_NODE_SIZES = (1, 2, 4, 8)


class OwnershipRows(msgspec.Struct, frozen=True, kw_only=True):
    """The current ownership sheets' rows: prices by GPU, and every finance default."""

    prices: dict[str, list[SheetPrice]]
    defaults: list[SheetDefault]


def load_ownership_rows(store: Store, snapshot: CatalogSnapshot) -> OwnershipRows:
    """One query per table for the ownership sheet versions current in ``snapshot``."""
    versions = [s.version for s in snapshot.sheets if s.kind == "ownership"]
    if not versions:
        return OwnershipRows(prices={}, defaults=[])
    marks = ", ".join("?" for _ in versions)
    price_fields = [f for f in SheetPrice.__struct_fields__ if f != "sheet_version"]
    default_fields = [f for f in SheetDefault.__struct_fields__ if f != "sheet_version"]
    with store.cursor() as cur:
        price_rows = cur.execute(
            f"SELECT version, {', '.join(price_fields)} FROM ownership_prices WHERE version IN ({marks})",
            versions,
        ).fetchall()
        default_rows = cur.execute(
            f"SELECT version, {', '.join(default_fields)} FROM ownership_defaults WHERE version IN ({marks})",
            versions,
        ).fetchall()
    prices: dict[str, list[SheetPrice]] = {}
    for row in price_rows:
        price = SheetPrice(sheet_version=int(row[0]), **dict(zip(price_fields, row[1:], strict=True)))
        prices.setdefault(price.gpu_id, []).append(price)
    defaults = [
        SheetDefault(sheet_version=int(r[0]), **dict(zip(default_fields, r[1:], strict=True)))
        for r in default_rows
    ]
    return OwnershipRows(prices=prices, defaults=defaults)


def owned_supplies(
    snapshot: CatalogSnapshot, rows: OwnershipRows, utilization: float
) -> tuple[list[Supply], list[Rejection]]:
    """Owned supplies for every GPU the sheets price, and why the others cannot be owned."""
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
        inputs = tco.OwnershipInputs(**{name: value.value for name, value in values.items()})
        rate = tco.owned_usd_per_busy_gpu_hour(inputs, utilization)
        price = values["purchase_price_usd_per_gpu"]
        source = (
            f"owned at ${rate:,.2f} per busy GPU-hour at {utilization:.0%} utilisation: purchase "
            f"${inputs.purchase_price_usd_per_gpu:,.0f} ({price.citation}), overhead x{inputs.server_overhead_factor:g}, "
            f"{inputs.useful_life_years:g}-year life, {inputs.power_kw_per_gpu:g} kW at PUE {inputs.pue:g} and "
            f"${inputs.electricity_usd_per_kwh:g}/kWh, colocation ${inputs.colocation_usd_per_kw_month:g}/kW-month, "
            f"maintenance {inputs.maintenance_fraction_per_year:.0%}/year, discount rate {inputs.discount_rate:.0%}"
        )
        version = price.sheet_version
        for size in _NODE_SIZES:
            interconnect, _rule = derive_interconnect(gpu, size, "")
            supplies.append(
                Supply(
                    supply_id=f"own:{gpu_id}:{size}",
                    acquisition="own",
                    pricing="owned",
                    gpu_id=gpu_id,
                    gpus_per_unit=size,
                    interconnect=interconnect,
                    usd_per_unit_hour=rate * size,
                    billing_increment_s=0,
                    price_source=source,
                    sheet_version=version,
                )
            )
    return supplies, rejections
