"""How the own-vs-rent answer moves with its inputs: a utilisation × rent price grid and a tornado.

The measure throughout is the **own advantage**: NPV of renting − NPV of owning over the horizon
(positive: owning saves that much in present value). Pure functions; no I/O.

* Grid: every (flat utilisation, rent price) pair, with the fleet, horizon and every other input
  unchanged.
* Tornado: each main input moved by −20 % and +20 % alone (clamped to its valid range: fractions
  and utilisation within [0, 1], PUE ≥ 1), sorted by swing = |advantage at high − advantage at low|,
  largest first. Utilisation scales the busy GPU-hours of every month (capped at the fleet's hours).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from pricing.ownership.tco import HOURS_PER_MONTH, OwnershipInputs, RentBilling, compare

__all__ = [
    "DEFAULT_RENT_MULTIPLIERS",
    "DEFAULT_UTILIZATIONS",
    "GridCell",
    "Scenario",
    "TornadoBar",
    "own_advantage_usd",
    "sensitivity_grid",
    "tornado",
]

DEFAULT_UTILIZATIONS: Final = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEFAULT_RENT_MULTIPLIERS: Final = (0.6, 0.8, 1.0, 1.2, 1.4)

_OWN_INPUTS: Final = OwnershipInputs.__struct_fields__
_FRACTIONS: Final = {
    "residual_fraction",
    "load_fraction",
    "idle_power_fraction",
    "maintenance_fraction_per_year",
}


class Scenario(msgspec.Struct, frozen=True, kw_only=True):
    """One own-vs-rent question: a fleet, its busy GPU-hours per month, the rent and its billing."""

    inputs: OwnershipInputs
    gpus: int
    busy_gpu_hours: list[float]
    rent_usd_per_gpu_hour: float
    billing: RentBilling

    @property
    def capacity_gpu_hours(self) -> float:
        return self.gpus * HOURS_PER_MONTH

    @property
    def mean_utilization(self) -> float:
        return sum(self.busy_gpu_hours) / (self.capacity_gpu_hours * len(self.busy_gpu_hours))


class GridCell(msgspec.Struct, frozen=True, kw_only=True):
    """Own vs rent at one flat utilisation and one rent price."""

    utilization: float
    rent_usd_per_gpu_hour: float
    npv_own_usd: float
    npv_rent_usd: float
    own_advantage_usd: float
    cheaper: Literal["own", "rent"]


class TornadoBar(msgspec.Struct, frozen=True, kw_only=True):
    """The own advantage with one input at its low (−20 %) and high (+20 %) value, all else unchanged."""

    input: str
    base_value: float
    low_value: float
    high_value: float
    own_advantage_at_low_usd: float
    own_advantage_at_high_usd: float
    swing_usd: float


def own_advantage_usd(scenario: Scenario) -> float:
    """NPV of renting − NPV of owning."""
    result = compare(
        scenario.inputs,
        gpus=scenario.gpus,
        busy_gpu_hours=scenario.busy_gpu_hours,
        rent_usd_per_gpu_hour=scenario.rent_usd_per_gpu_hour,
        billing=scenario.billing,
    )
    return result.npv_rent_usd - result.npv_own_usd


def sensitivity_grid(
    scenario: Scenario,
    utilizations: Sequence[float] = DEFAULT_UTILIZATIONS,
    rent_multipliers: Sequence[float] = DEFAULT_RENT_MULTIPLIERS,
) -> list[GridCell]:
    """Own vs rent for every flat utilisation × (rent price × multiplier)."""
    cells: list[GridCell] = []
    horizon = len(scenario.busy_gpu_hours)
    for u in utilizations:
        busy = [u * scenario.capacity_gpu_hours] * horizon
        for multiplier in rent_multipliers:
            rent = scenario.rent_usd_per_gpu_hour * multiplier
            result = compare(
                scenario.inputs,
                gpus=scenario.gpus,
                busy_gpu_hours=busy,
                rent_usd_per_gpu_hour=rent,
                billing=scenario.billing,
            )
            advantage = result.npv_rent_usd - result.npv_own_usd
            cells.append(
                GridCell(
                    utilization=u,
                    rent_usd_per_gpu_hour=rent,
                    npv_own_usd=result.npv_own_usd,
                    npv_rent_usd=result.npv_rent_usd,
                    own_advantage_usd=advantage,
                    cheaper="own" if advantage > 0 else "rent",
                )
            )
    return cells


def _clamp(name: str, value: float) -> float:
    if name in _FRACTIONS:
        return min(max(value, 0.0), 1.0)
    if name == "pue":
        return max(value, 1.0)
    return value


def _with_input(scenario: Scenario, name: str, factor: float) -> tuple[Scenario, float]:
    """The scenario with one input scaled by ``factor``, and the value that input then has."""
    if name == "utilization":
        cap = scenario.capacity_gpu_hours
        busy = [min(hours * factor, cap) for hours in scenario.busy_gpu_hours]
        moved = msgspec.structs.replace(scenario, busy_gpu_hours=busy)
        return moved, moved.mean_utilization
    if name == "rent_usd_per_gpu_hour":
        value = scenario.rent_usd_per_gpu_hour * factor
        return msgspec.structs.replace(scenario, rent_usd_per_gpu_hour=value), value
    value = _clamp(name, getattr(scenario.inputs, name) * factor)
    inputs = msgspec.structs.replace(scenario.inputs, **{name: value})
    return msgspec.structs.replace(scenario, inputs=inputs), value


def tornado(scenario: Scenario, *, change: float = 0.2) -> list[TornadoBar]:
    """Each main input at (1 − change) and (1 + change) of its value, sorted by swing, largest first."""
    names = [*_OWN_INPUTS, "utilization", "rent_usd_per_gpu_hour"]
    bars: list[TornadoBar] = []
    for name in names:
        if name == "utilization":
            base = scenario.mean_utilization
        elif name == "rent_usd_per_gpu_hour":
            base = scenario.rent_usd_per_gpu_hour
        else:
            base = float(getattr(scenario.inputs, name))
        low_scenario, low = _with_input(scenario, name, 1.0 - change)
        high_scenario, high = _with_input(scenario, name, 1.0 + change)
        at_low = own_advantage_usd(low_scenario)
        at_high = own_advantage_usd(high_scenario)
        bars.append(
            TornadoBar(
                input=name,
                base_value=base,
                low_value=low,
                high_value=high,
                own_advantage_at_low_usd=at_low,
                own_advantage_at_high_usd=at_high,
                swing_usd=abs(at_high - at_low),
            )
        )
    return sorted(bars, key=lambda bar: (-bar.swing_usd, bar.input))
