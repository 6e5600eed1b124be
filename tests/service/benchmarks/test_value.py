"""The value of a benchmark (the expected saving over a triangular cost band) and its cost (the
planner's charge rules on the configuration's offer)."""

from __future__ import annotations

import numpy as np
import pytest

from service.benchmarks.value import BenchRun, bench_recipe, expected_saving
from solver import COMPUTE_ONLY_TERMS, Network, Supply


def test_a_band_wholly_above_the_chosen_cost_saves_nothing() -> None:
    assert expected_saving(100.0, 100.0, 120.0, 150.0) == 0.0
    assert expected_saving(100.0, 130.0, 140.0, 150.0) == 0.0


def test_a_band_wholly_below_saves_the_gap_to_its_mean() -> None:
    # E[chosen - C] = chosen - mean, and a triangular distribution's mean is (low + mode + high) / 3
    assert expected_saving(200.0, 60.0, 90.0, 150.0) == pytest.approx(200.0 - 100.0, rel=1e-4)


def test_the_saving_matches_sampling_the_triangular_band() -> None:
    rng = np.random.default_rng(7)
    draws = rng.triangular(80.0, 110.0, 190.0, 400_000)
    sampled = float(np.maximum(120.0 - draws, 0.0).mean())
    assert expected_saving(120.0, 80.0, 110.0, 190.0) == pytest.approx(sampled, rel=0.02)


def _supply(increment_s: int) -> Supply:
    return Supply(
        supply_id="s",
        acquisition="rent",
        pricing="on_demand",
        gpu_id="h100-sxm",
        gpus_per_unit=8,
        interconnect="nvswitch",
        network=Network(network_class="none", gbps=0.0, derived=False, rule="one instance"),
        usd_per_unit_hour=24.0,
        billing_increment_s=increment_s,
        terms=COMPUTE_ONLY_TERMS,
    )


def test_ten_minutes_on_an_hourly_billed_offer_pay_the_hour() -> None:
    recipe = bench_recipe(BenchRun(_supply(3600), 1, 8, 120.0, 480.0, 0.0), ["true"], "ten minutes")
    assert recipe.breakdown["compute_usd"] == pytest.approx(4.0)
    assert recipe.breakdown["billing_rounding_usd"] == pytest.approx(20.0)
    assert recipe.cost_usd == pytest.approx(24.0)
    assert (recipe.instances, recipe.gpus, recipe.warmup_minutes, recipe.measure_minutes) == (1, 8, 2.0, 8.0)


def test_per_second_billing_pays_the_minutes() -> None:
    recipe = bench_recipe(BenchRun(_supply(1), 2, 16, 0.0, 600.0, 0.0), ["true"], "ten minutes")
    assert recipe.cost_usd == pytest.approx(2 * 24.0 / 6, rel=1e-3)
    assert sum(recipe.breakdown.values()) == pytest.approx(recipe.cost_usd)
