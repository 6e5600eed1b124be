"""The complete charge: every part by hand on one configuration, and how each input moves it."""

from __future__ import annotations

import math

import msgspec
import numpy as np
import pytest

from solver.costs.charges import (
    CHARGE_NAMES,
    CHARGES,
    COMPUTE_ONLY_TERMS,
    NOTHING_MOVED,
    ChargeSummary,
    JobTerms,
    SupplyTerms,
    complete_charges,
    supply_rates,
)
from solver.costs.reliability import optimal_checkpoint_interval

TERMS = SupplyTerms(
    startup_hours=0.1,
    download_gbps=8.0,
    checkpoint_write_gbps=8.0,
    storage_usd_per_gb_month=0.073,
    egress_usd_per_gb=0.09,
    ingress_usd_per_gb=0.01,
    preemptions_per_hour=0.0,
    interruptions_per_gpu_hour=2e-5,
    network_interruption_share=0.1,
    restart_hours=0.25,
)
TRAINING = JobTerms(
    download_gb=360.0,
    dataset_gb=100.0,
    checkpoint_gb=720.0,
    checkpoints_kept=2,
    egress_gb=50.0,
    checkpoint_every_hours=None,
    loses_work=True,
)


def _one(hours: float, units: int, gpus: int, price: float, increment: int, terms: SupplyTerms,
         job: JobTerms) -> ChargeSummary:  # fmt: skip
    charges = complete_charges(
        np.array([hours]), np.array([units]), np.array([gpus]), np.array([price]), np.array([float(increment)]),
        [terms], np.array([1]), job,
    )  # fmt: skip
    return ChargeSummary.of(charges, 0)


def test_every_part_by_hand_on_a_multi_node_training_job() -> None:
    s = _one(500.0, 4, 32, 30.0, 3600, TERMS, TRAINING)
    setup = 0.1 + 360 * 8 / 8 / 3600  # start + 360 GB at 8 Gbit/s
    write = 720 * 8 / (8 * 4) / 3600  # 720 GB written by 4 instances at 8 Gbit/s each
    rate = 2e-5 * 32  # four instances: the network's share counts
    interval = float(optimal_checkpoint_interval(np.array([write]), np.array([1 / rate]))[0])
    checkpoints = 500 / interval * write
    interruptions = rate * (500 + checkpoints)
    lost = interruptions * (0.25 + interval / 2)
    wall = 500 + setup + checkpoints + lost
    billable = math.ceil(wall)
    assert s.checkpoint_interval_hours == pytest.approx(interval)
    assert interval == pytest.approx(math.sqrt(2 * write / rate), rel=0.05)  # Young, to first order
    assert s.interruptions == pytest.approx(interruptions) and s.preemptions == 0
    assert s.wall_hours == pytest.approx(wall) and s.billable_hours == billable
    expected = {
        "compute_usd": 120 * 500,
        "setup_usd": 120 * setup,
        "checkpoint_usd": 120 * checkpoints,
        "failures_usd": 120 * lost,
        "preemption_usd": 0.0,
        "billing_rounding_usd": 120 * (billable - wall),
        "storage_usd": (4 * 100 + 2 * 720) * 0.073 * wall / 730,  # no shared storage: a copy per instance
        "data_transfer_usd": 4 * 360 * 0.01 + 50 * 0.09,
    }
    assert list(s.breakdown) == list(CHARGE_NAMES)
    assert s.breakdown == pytest.approx(expected)
    assert s.total_usd == pytest.approx(sum(expected.values()))
    assert not s.shared_staging and s.staging_hours == 0


def test_a_dataset_staged_once_to_shared_storage_by_hand() -> None:
    """Issue 24: a dataset downloaded to each of several instances as setup; staged once, the
    instances neither wait for it nor each pay its ingress and storage."""
    shared = msgspec.structs.replace(TERMS, shared_storage=True)
    s = _one(500.0, 4, 32, 30.0, 3600, shared, TRAINING)
    per_node = _one(500.0, 4, 32, 30.0, 3600, TERMS, TRAINING)
    staging = 100 * 8 / 8 / 3600  # 100 GB at 8 Gbit/s, before the instances start
    setup = 0.1 + 260 * 8 / 8 / 3600  # start + the 260 GB model each instance still downloads
    assert s.shared_staging and s.staging_hours == pytest.approx(staging)
    assert s.wall_hours == pytest.approx(per_node.wall_hours)  # the same elapsed time
    assert s.billable_hours == math.ceil(s.wall_hours - staging)
    assert s.breakdown["setup_usd"] == pytest.approx(120 * setup)
    assert s.breakdown["storage_usd"] == pytest.approx((100 + 2 * 720) * 0.073 * s.wall_hours / 730)
    assert s.breakdown["data_transfer_usd"] == pytest.approx((4 * 260 + 100) * 0.01 + 50 * 0.09)
    saving = 120 * staging + 3 * 100 * (0.01 + 0.073 * s.wall_hours / 730)
    assert s.staging_saving_usd == pytest.approx(saving)
    assert per_node.total_usd - s.total_usd == pytest.approx(saving, abs=120.0)  # up to an hour's rounding


def test_compute_only_terms_price_the_billable_hours_alone() -> None:
    s = _one(10.25, 2, 16, 12.0, 3600, COMPUTE_ONLY_TERMS, NOTHING_MOVED)
    assert s.total_usd == pytest.approx(24.0 * 11) and s.wall_hours == 10.25
    assert s.breakdown["compute_usd"] == pytest.approx(24 * 10.25)
    assert s.checkpoint_interval_hours is None and s.interruptions == 0


def test_one_instance_does_not_see_the_networks_share_of_interruptions() -> None:
    inside = _one(100.0, 1, 8, 10.0, 60, TERMS, TRAINING)
    across = _one(100.0, 2, 8, 10.0, 60, TERMS, TRAINING)
    assert inside.interruptions / (100 + inside.checkpoint_hours) == pytest.approx(2e-5 * 8 * 0.9)
    assert across.interruptions / (100 + across.checkpoint_hours) == pytest.approx(2e-5 * 8)


def test_overrides_replace_the_rates_and_a_fixed_interval_is_kept() -> None:
    base = _one(1000.0, 8, 64, 30.0, 60, TERMS, TRAINING)
    worse = _one(
        1000.0, 8, 64, 30.0, 60, TERMS, msgspec.structs.replace(TRAINING, interruptions_per_gpu_hour=2e-4)
    )
    assert worse.interruptions == pytest.approx(10 * base.interruptions, rel=0.05)
    assert worse.total_usd > base.total_usd
    assert worse.checkpoint_interval_hours is not None and base.checkpoint_interval_hours is not None
    assert worse.checkpoint_interval_hours < base.checkpoint_interval_hours  # fail more: save more often
    fixed = _one(
        1000.0, 8, 64, 30.0, 60, TERMS, msgspec.structs.replace(TRAINING, checkpoint_every_hours=5.0)
    )
    assert fixed.checkpoint_interval_hours == 5.0
    assert fixed.total_usd > base.total_usd  # the optimum is the cheapest interval
    slow = _one(1000.0, 8, 64, 30.0, 60, TERMS, msgspec.structs.replace(TRAINING, restart_hours=2.0))
    assert slow.breakdown["failures_usd"] > base.breakdown["failures_usd"]


def test_spot_preemptions_cost_restarts_and_lost_work_and_the_deadline_takes_the_90th_percentile() -> None:
    spot_terms = msgspec.structs.replace(TERMS, preemptions_per_hour=0.1)
    spot = _one(100.0, 1, 8, 10.0, 60, spot_terms, TRAINING)
    assert spot.preemptions == pytest.approx(0.1 * (100 + spot.checkpoint_hours))
    assert spot.breakdown["preemption_usd"] > 0
    assert spot.wall_hours < spot.deadline_hours  # ~10 expected, 14 at the 90th percentile
    given = _one(
        100.0, 1, 8, 10.0, 60, spot_terms, msgspec.structs.replace(TRAINING, preemptions_per_hour=0.5)
    )
    assert given.preemptions == pytest.approx(0.5 * (100 + given.checkpoint_hours))
    on_demand = _one(
        100.0, 1, 8, 10.0, 60, TERMS, msgspec.structs.replace(TRAINING, preemptions_per_hour=0.5)
    )
    assert on_demand.preemptions == 0  # the override applies to spot capacity only


def test_inference_writes_no_checkpoints_and_loses_only_the_restart() -> None:
    job = msgspec.structs.replace(TRAINING, checkpoint_gb=0.0, checkpoints_kept=0, loses_work=False)
    s = _one(200.0, 2, 16, 10.0, 60, TERMS, job)
    assert s.checkpoint_interval_hours is None and s.checkpoint_hours == 0
    assert s.lost_hours == pytest.approx(s.interruptions * 0.25)


def test_daly_interval_reduces_to_young_and_saturates_at_the_mean_time_between() -> None:
    young = optimal_checkpoint_interval(np.array([1e-4]), np.array([100.0]))[0]
    assert young == pytest.approx(math.sqrt(2 * 1e-4 * 100), rel=0.01)
    assert optimal_checkpoint_interval(np.array([5.0]), np.array([2.0]))[0] == 2.0
    assert optimal_checkpoint_interval(np.array([0.1]), np.array([np.inf]))[0] == np.inf


@pytest.mark.parametrize("units", [1, 4])
@pytest.mark.parametrize("own_rate", [None, 1e-4])
def test_the_rates_a_plan_explains_are_the_rates_it_charged(units: int, own_rate: float | None) -> None:
    spot = msgspec.structs.replace(TERMS, preemptions_per_hour=0.05)
    job = msgspec.structs.replace(TRAINING, interruptions_per_gpu_hour=own_rate, preemptions_per_hour=0.2)
    s = _one(100.0, units, 8 * units, 30.0, 0, spot, job)
    per_gpu, per_instance = supply_rates(spot, units, job)
    exposed = 100.0 + s.checkpoint_hours
    assert s.interruptions == pytest.approx(per_gpu * 8 * units * exposed)
    assert s.preemptions == pytest.approx(per_instance * units * exposed)
    assert per_instance == 0.2  # the workload's own preemption rate replaces the spot supply's
    if own_rate is None and units == 1:
        assert per_gpu == pytest.approx(2e-5 * 0.9)  # inside one instance: the network's share is off


def test_every_declared_charge_has_a_label_and_a_rule() -> None:
    assert len(set(CHARGE_NAMES)) == len(CHARGES) and all(c.label and c.what for c in CHARGES)


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0, 1e3, 1e5])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.99])
def test_the_poisson_quantile_is_scipys_exactly(scale: float, q: float) -> None:
    """The stepping quantile matches ``scipy.stats.poisson.ppf`` row for row, zeros included."""
    from scipy.stats import poisson

    from solver.costs.charges import _poisson_quantile

    means = np.random.default_rng(int(scale * 100) + int(q * 100)).exponential(scale, 20_000)
    means[:5] = [0.0, 1e-9, -np.log(q), 1e-3, 5e5]
    assert np.array_equal(_poisson_quantile(means, q), poisson.ppf(q, means))
