"""What every plan's answer shares, made once: its id and time stamp, its status, the price sheets it
was priced against, the GPUs it could not use, and how an owned supply is priced."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Literal

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.plans.schemas import (
    MigOut,
    OwnedRef,
    PriceSheetsOut,
    PriceSheetUse,
    RejectedGpu,
    RejectionOut,
)
from service.plans.supply import SupplySet
from solver import Acquisition, PlanWarning, RejectionsByGpu, SliceSpec, SolveOutcome, Supply, parent_gpus_for

__all__ = [
    "PlanStamp",
    "country_warnings",
    "host_warnings",
    "mig_ref",
    "owned_ref",
    "plan_status",
    "price_sheets_used",
    "rejected_gpus",
    "stale_warnings",
]

_SHEET_KINDS: Mapping[Acquisition, frozenset[str]] = {
    "rent": frozenset({"rental"}),
    "own": frozenset({"ownership"}),
    "either": frozenset({"rental", "ownership"}),
}


class PlanStamp(msgspec.Struct, frozen=True, kw_only=True):
    """A plan's identity: its id, when it was made, and how long it took (from ``started``)."""

    plan_id: str
    created_at: datetime
    total_ms: float

    @classmethod
    def mint(cls, started: float) -> PlanStamp:
        """A new id, now, and the milliseconds since ``started`` (a ``time.perf_counter()`` value)."""
        return cls(
            plan_id=f"pl-{uuid.uuid4().hex[:16]}",
            created_at=datetime.now(UTC),
            total_ms=(time.perf_counter() - started) * 1000,
        )


def plan_status(outcome: SolveOutcome) -> Literal["optimal", "time_limited"]:
    """The plan's status as the API states it: a time-limited solve says so, anything else is optimal."""
    return "time_limited" if outcome.status == "time_limited" else "optimal"


def price_sheets_used(
    snapshot: CatalogSnapshot, acquisition: Acquisition, now: datetime, max_age_hours: float
) -> PriceSheetsOut:
    """The current sheets of the kinds the plan priced against, with their age, and a warning for each
    sheet older than ``max_age_hours``."""
    kinds = _SHEET_KINDS[acquisition]
    uses: list[PriceSheetUse] = []
    warnings: list[str] = []
    for sheet in snapshot.sheets:
        if sheet.kind not in kinds:
            continue
        age = (now - sheet.fetched_at).total_seconds() / 3600
        uses.append(
            PriceSheetUse(
                version=sheet.version,
                source=sheet.source,
                kind=sheet.kind,
                fetched_at=sheet.fetched_at,
                age_hours=age,
            )
        )
        if age > max_age_hours:
            warnings.append(
                f"{sheet.kind} sheet {sheet.source!r} (version {sheet.version}) is {age / 24:.0f} days old"
            )
    return PriceSheetsOut(versions=uses, warnings=warnings)


def stale_warnings(sheets: PriceSheetsOut) -> list[PlanWarning]:
    """The price-sheet age warnings as coded plan warnings (``price_sheet_stale``)."""
    return [PlanWarning(code="price_sheet_stale", message=text) for text in sheets.warnings]


def rejected_gpus(snapshot: CatalogSnapshot, rejected: RejectionsByGpu) -> list[RejectedGpu]:
    """Every GPU type that cannot be used, with its reasons (in ``rejected``'s order)."""
    return [
        RejectedGpu(
            gpu=gpu_id,
            gpu_name=snapshot.gpu_spec(gpu_id).name,
            reasons=[RejectionOut(reason=r.reason, detail=r.detail, admit_at=r.admit_at) for r in reasons],
        )
        for gpu_id, reasons in rejected.items()
    ]


def owned_ref(supply: Supply, utilization: float) -> OwnedRef | None:
    """How an owned supply is priced (None for rented ones)."""
    if supply.acquisition != "own":
        return None
    return OwnedRef(
        usd_per_busy_gpu_hour=supply.usd_per_unit_hour / supply.gpus_per_unit,
        gpus_per_node=supply.gpus_per_unit,
        interconnect=supply.interconnect,
        network=supply.network,
        utilization=utilization,
        assumptions=[
            supply.price_source,
            f"network between nodes: {supply.network.rule}",
            "host: the buyer configures each server's CPUs, memory and storage, so the request's host"
            " requirements (and any CPU offload) are met",
        ],
    )


def mig_ref(snapshot: CatalogSnapshot, supply: Supply, slices: int) -> MigOut | None:
    """What ``slices`` slices of ``supply``'s GPU are, in numbers and in words (None for a whole GPU)."""
    spec = snapshot.gpu_spec(supply.gpu_id)
    if not isinstance(spec, SliceSpec):
        return None
    parent = snapshot.gpu_spec(spec.parent_gpu_id)
    if supply.acquisition == "own":
        parents = parent_gpus_for(slices, spec)
        on = f"one owned {parent.name}" if parents == 1 else f"{parents} owned {parent.name}s"
    else:
        parents = None
        on = f"{parent.name} GPUs rented from {supply.provider or 'a provider'}"
    return MigOut(
        profile=spec.mig_profile,
        parent_gpu=parent.gpu_id,
        parent_gpu_name=parent.name,
        slices=slices,
        slices_per_gpu=spec.slices_per_gpu,
        parent_gpus=parents,
        summary=f"{slices} × {spec.mig_profile} on {on}",
    )


def host_warnings(supplies: SupplySet, chosen: Iterable[Supply]) -> list[PlanWarning]:
    """A ``host_unknown`` warning for each chosen rental whose offer does not state a host number the
    request asks about (it was kept: "where known")."""
    found = []
    for supply in chosen:
        missing = supplies.host_unknown.get(supply.supply_id)
        if missing:
            found.append(
                PlanWarning(
                    code="host_unknown",
                    message=(
                        f"{supply.provider} {supply.instance_type or supply.supply_id} does not state what host."
                        f"{', host.'.join(missing)} asks about: check it before renting"
                    ),
                )
            )
    return found


def country_warnings(supplies: SupplySet) -> list[PlanWarning]:
    """A ``country_unknown`` warning when ``constraints.countries`` excluded offers because no
    country could be derived from their region (they might have been in an allowed country)."""
    if not supplies.unknown_country:
        return []
    regions = sorted(set(supplies.unknown_country))
    return [
        PlanWarning(
            code="country_unknown",
            message=(
                f"{len(supplies.unknown_country)} offer(s) excluded by constraints.countries because their region"
                f" names no country: {', '.join(regions[:10])}" + (" …" if len(regions) > 10 else "")
            ),
        )
    ]
