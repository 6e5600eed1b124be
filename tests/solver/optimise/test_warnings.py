"""Plan warnings (each with its code) and the bands of hours and cost."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pytest

from solver.catalog.network import Network
from solver.costs.charges import (
    COMPUTE_ONLY_TERMS,
    NOTHING_MOVED,
    ChargeSummary,
    JobTerms,
    SupplyTerms,
    complete_charges,
)
from solver.memory.peak import estimate_memory
from solver.optimise.candidates import Candidate, Supply
from solver.optimise.warnings import candidate_warnings, complete_bands, deadline_probability, hours_band
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.estimate import Band, EfficiencyUsed, ThroughputEstimate
from solver.throughput.scaling import ScalingEstimate
from solver.throughput.step import Layout

ETHERNET = Network(network_class="ethernet", gbps=25.0, derived=True, rule="test")
FABRIC = Network(network_class="infiniband", gbps=3200.0, derived=True, rule="test")


def _candidate(*, hours: float = 10.0, units: int = 1, capacity: float = 400.0, network: Network = FABRIC,
               confidence: str = "medium", terms: SupplyTerms = COMPUTE_ONLY_TERMS,
               job_terms: JobTerms = NOTHING_MOVED) -> Candidate:  # fmt: skip
    job = resolve_workload(msgspec.convert({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}}, Workload))
    throughput = ThroughputEstimate(
        value=1000.0, unit="tokens_per_s", provenance="derived", route="class_model", sources=[],
        confidence=confidence, confidence_score=0.3 if confidence == "low" else 0.6, method="test",  # type: ignore[arg-type]
        workload_class="full_finetune", stack="standard", efficiency=EfficiencyUsed(basis="prior"),
        band=Band(low=800.0, high=1250.0),
        scaling=ScalingEstimate(efficiency=0.6, communication_fraction=0.4, bottleneck="inter_instance", method="t"),
    )  # fmt: skip
    supply = Supply(
        supply_id="s", acquisition="rent", pricing="on_demand", gpu_id="h100-sxm", gpus_per_unit=2,
        interconnect="nvlink", network=network, usd_per_unit_hour=10.0, billing_increment_s=3600, terms=terms,
    )  # fmt: skip
    charges = complete_charges(
        np.array([hours]), np.array([float(units)]), np.array([2.0 * units]), np.array([10.0]), np.array([3600.0]),
        [terms], np.array([1]), job_terms,
    )  # fmt: skip
    summary = ChargeSummary.of(charges, 0)
    return Candidate(
        supply=supply, units=units, gpu_count=2 * units, tp=1, sharding="none", recompute="none",
        layout=Layout(tp=1, pp=1, vpp=1, cp=1, dp=2 * units, zero="none", micro_batch=1, gradient_accumulation=1,
                      recompute="none", global_batch_tokens=2 * units * 2048),
        memory=estimate_memory(job), capacity_gib=capacity, throughput=throughput, compute_hours=hours,
        hours=summary.wall_hours, usd_per_hour=10.0 * units, cost_usd=summary.total_usd, charges=summary,
    )  # fmt: skip


def _codes(**fields: Any) -> set[str]:
    return {w.code for w in candidate_warnings(_candidate(**fields))}


def test_a_comfortable_plan_warns_of_nothing() -> None:
    assert _codes() == set()


def test_each_risk_has_its_code() -> None:
    memory = estimate_memory(
        resolve_workload(msgspec.convert({"kind": "fine_tune", "model": {"name": "Llama 3 8B"}}, Workload))
    )
    assert "memory_band_exceeds_capacity" in _codes(capacity=(memory.per_gpu_gib + memory.band.high_gib) / 2)
    assert "long_run" in _codes(hours=31 * 24)
    assert "low_confidence_throughput" in _codes(confidence="low")
    assert "multi_instance_ethernet" in _codes(units=4, network=ETHERNET)
    assert "multi_instance_ethernet" not in _codes(units=4, network=FABRIC)


def test_bands_bracket_the_central_hours_and_cost() -> None:
    candidate = _candidate()
    work = candidate.throughput.value * candidate.hours * 3600
    low, high = hours_band(work, candidate.throughput)
    assert low < candidate.hours < high
    assert low == pytest.approx(candidate.hours / 1.25) and high == pytest.approx(candidate.hours / 0.8)
    (wall_low, wall_high), (cost_low, cost_high) = complete_bands(candidate)
    assert (wall_low, wall_high) == pytest.approx((low, high))  # compute only: the throughput band
    assert cost_low <= candidate.cost_usd <= cost_high
    assert cost_high == pytest.approx(candidate.usd_per_hour * 13)  # 12.5 h billed by the hour


SPOT = msgspec.structs.replace(
    COMPUTE_ONLY_TERMS, startup_hours=0.1, download_gbps=10.0, checkpoint_write_gbps=8.0,
    storage_usd_per_gb_month=0.1, interruptions_per_gpu_hour=2e-5, restart_hours=0.2,
)  # fmt: skip
TRAINING = JobTerms(
    download_gb=100.0, dataset_gb=50.0, checkpoint_gb=200.0, checkpoints_kept=2, egress_gb=20.0,
    checkpoint_every_hours=None, loses_work=True,
)  # fmt: skip


def test_preemptions_widen_the_band_around_the_expected_hours_and_cost() -> None:
    steady = _candidate(hours=100.0, terms=SPOT, job_terms=TRAINING)
    spot = _candidate(
        hours=100.0, terms=msgspec.structs.replace(SPOT, preemptions_per_hour=0.05), job_terms=TRAINING
    )
    (steady_low, steady_high), (steady_cost_low, steady_cost_high) = complete_bands(steady)
    (spot_low, spot_high), (spot_cost_low, spot_cost_high) = complete_bands(spot)
    for candidate, low, high, cost_low, cost_high in (
        (steady, steady_low, steady_high, steady_cost_low, steady_cost_high),
        (spot, spot_low, spot_high, spot_cost_low, spot_cost_high),
    ):
        assert low < candidate.hours < high and cost_low < candidate.cost_usd < cost_high
    assert spot.charges.preemptions == pytest.approx(0.05 * (100 + spot.charges.checkpoint_hours))
    assert spot_high - spot_low > steady_high - steady_low
    assert spot.cost_usd > steady.cost_usd


def test_a_deadline_inside_the_throughput_band_is_at_risk_with_its_probability() -> None:
    """716 h expected against 720 h: the interruptions may hold, the throughput band does not (issue 22)."""
    candidate = _candidate(hours=716.0)
    chance = deadline_probability(candidate, 720.0)
    assert 0.4 < chance < 0.9
    at_risk = [w for w in candidate_warnings(candidate, 720.0) if w.code == "deadline_at_risk"]
    assert len(at_risk) == 1 and f"{chance:.0%}" in at_risk[0].message
    high = complete_bands(candidate)[0][1]
    assert deadline_probability(candidate, high) >= 0.9  # the band's high end is its 90th percentile
    assert not [w for w in candidate_warnings(candidate, high * 1.01) if w.code == "deadline_at_risk"]
    assert not [w for w in candidate_warnings(candidate) if w.code == "deadline_at_risk"]  # no deadline


def test_the_chance_grows_with_the_deadline() -> None:
    candidate = _candidate(hours=100.0)
    chances = [deadline_probability(candidate, d) for d in (90.0, 100.0, 110.0, 130.0, 200.0)]
    assert chances == sorted(chances) and chances[0] < 0.5 < chances[-1]
