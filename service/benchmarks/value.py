"""What measuring a configuration is worth, and what the measurement costs.

**Worth.** Once measured, a configuration's cost is known; the plan then switches to it when it is
cheaper than the chosen configuration's expected cost. The saving a benchmark is expected to reveal is
therefore ``E[max(0, chosen − C)]`` over the configuration's cost ``C``, taken as a triangular
distribution on its band (low, expected, high): zero for a configuration whose cheapest likely cost is
above the chosen one's, most for one whose band reaches far below it.

**Cost.** The benchmark runs on the configuration's own offer for its setup (instance start and the
downloads, at the seller's rates), warm-up and measurement, priced by the planner's own charge rules
(:func:`solver.complete_charges`: billing increments, interruptions, transfer), so a 10-minute run on
an hourly-billed offer pays the hour.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import numpy as np

from service.benchmarks.schemas import BenchmarkCandidate, BenchmarkRecipe, CostBand
from solver import CHARGE_NAMES, NOTHING_MOVED, Supply, complete_charges

__all__ = ["BenchCharge", "bench_charge", "expected_saving", "overlaps", "valued"]

_POINTS: Final = 2001
"""Quadrature points over a cost band."""


def expected_saving(chosen_usd: float, low: float, expected: float, high: float) -> float:
    """``E[max(0, chosen_usd − C)]`` for ``C`` triangular on (``low``, ``expected``, ``high``)."""
    if high <= low:
        return max(0.0, chosen_usd - expected)
    mode = min(max(expected, low), high)
    x = np.linspace(low, high, _POINTS)
    rising = np.where(x <= mode, (x - low) / max(mode - low, 1e-12), 0.0)
    falling = np.where(x > mode, (high - x) / max(high - mode, 1e-12), 0.0)
    density = 2.0 / (high - low) * (rising + falling)
    gain = np.maximum(chosen_usd - x, 0.0)
    return float(np.trapezoid(gain * density, x))


class BenchCharge:
    """A benchmark run's charge: hours billed and their cost by part (:data:`solver.CHARGE_NAMES`)."""

    def __init__(self, total_usd: float, setup_hours: float, breakdown: dict[str, float]) -> None:
        self.total_usd = total_usd
        self.setup_hours = setup_hours
        self.breakdown = breakdown


def bench_charge(supply: Supply, units: int, gpus: int, hours: float, download_gb: float) -> BenchCharge:
    """The complete charge of ``hours`` of benchmarking on ``units`` instances of ``supply`` that each
    download ``download_gb`` (the weights) first; nothing is kept or sent out, no work is lost."""
    job = msgspec.structs.replace(NOTHING_MOVED, download_gb=download_gb)
    charges = complete_charges(
        np.array([hours]),
        np.array([float(units)]),
        np.array([float(gpus)]),
        np.array([supply.usd_per_unit_hour]),
        np.array([float(supply.billing_increment_s)]),
        [supply.terms],
        np.array([1]),
        job,
    )
    breakdown = {name: float(charges.parts[name][0]) for name in CHARGE_NAMES}
    return BenchCharge(float(charges.total_usd[0]), float(charges.setup_hours[0]), breakdown)


def overlaps(band: CostBand, chosen: CostBand) -> bool:
    """Whether two cost bands share a range (the configuration could be the cheaper one)."""
    return band.low_usd <= chosen.high_usd and band.high_usd >= chosen.low_usd


def valued(chosen: CostBand, band: CostBand, recipe: BenchmarkRecipe, **fields: Any) -> BenchmarkCandidate:
    """A candidate with its band, recipe, expected saving against ``chosen`` and net value (rank 0:
    unranked)."""
    saving = expected_saving(chosen.expected_usd, band.low_usd, band.expected_usd, band.high_usd)
    return BenchmarkCandidate(
        rank=0,
        cost=band,
        expected_saving_usd=saving,
        benchmark_cost_usd=recipe.cost_usd,
        net_value_usd=saving - recipe.cost_usd,
        worth_it=saving > recipe.cost_usd,
        recipe=recipe,
        **fields,
    )
