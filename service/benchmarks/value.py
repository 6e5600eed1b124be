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

from typing import Any, Final, NamedTuple

import msgspec
import numpy as np

from service.benchmarks.schemas import BenchmarkCandidate, BenchmarkRecipe, CostBand
from solver import CHARGE_NAMES, NOTHING_MOVED, Supply, complete_charges

__all__ = ["BenchRun", "bench_recipe", "expected_saving", "overlaps", "valued"]

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


class BenchRun(NamedTuple):
    """Where and how long one benchmark runs: ``units`` instances of ``supply`` holding ``gpus`` GPUs,
    each downloading ``download_gb`` (the weights) first, then ``warmup_s`` and ``measure_s``."""

    supply: Supply
    units: int
    gpus: int
    warmup_s: float
    measure_s: float
    download_gb: float


def bench_recipe(run: BenchRun, commands: list[str], rule: str, **config: str | None) -> BenchmarkRecipe:
    """The recipe of ``run``, priced at its complete charge (setup, warm-up and measurement, billing
    increments; nothing is kept or sent out, no work is lost); ``config``: ``config_file`` and ``config``."""
    supply = run.supply
    job = msgspec.structs.replace(NOTHING_MOVED, download_gb=run.download_gb)
    charges = complete_charges(
        np.array([(run.warmup_s + run.measure_s) / 3600]),
        np.array([float(run.units)]),
        np.array([float(run.gpus)]),
        np.array([supply.usd_per_unit_hour]),
        np.array([float(supply.billing_increment_s)]),
        [supply.terms],
        np.array([1]),
        job,
    )
    return BenchmarkRecipe(
        provider=supply.provider,
        instance_type=supply.instance_type,
        region=supply.region,
        pricing=supply.pricing,
        instances=run.units,
        gpus=run.gpus,
        setup_minutes=float(charges.setup_hours[0]) * 60,
        warmup_minutes=run.warmup_s / 60,
        measure_minutes=run.measure_s / 60,
        cost_usd=float(charges.total_usd[0]),
        breakdown={name: float(charges.parts[name][0]) for name in CHARGE_NAMES},
        commands=commands,
        rule=rule,
        **config,
    )


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
