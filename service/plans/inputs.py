"""What a validated plan request carries into solving and rendering, whatever its kind."""

from __future__ import annotations

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.plans.supply import SupplySet
from solver import ResolvedWorkload, Workload

__all__ = ["PlanInputs", "PlanSettings"]


class PlanSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The operator's settings every plan uses."""

    time_limit_s: float = 5.0
    """The MILP time limit of one plan (a time-limited answer says so, with its gap)."""
    price_max_age_hours: float = 24 * 30
    """Plans warn about price sheets older than this."""


class PlanInputs[Q, S](msgspec.Struct, frozen=True, kw_only=True):
    """A validated request (``Q``, one member of the plan request union): its workload, what its kind
    validated (``spec``), and its supplies, all read from one catalog snapshot."""

    request: Q
    snapshot: CatalogSnapshot
    template: Workload
    """The workload with the layout fields at their defaults: the planner varies them."""
    resolved: ResolvedWorkload
    spec: S
    supplies: SupplySet
