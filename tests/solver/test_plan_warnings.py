"""Plan warnings (each with its code) and the bands of hours and cost."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from solver.candidates import Candidate, Supply
from solver.memory import estimate_memory
from solver.network import Network
from solver.plan_warnings import candidate_warnings, cost_band, hours_band
from solver.scaling import ScalingEstimate
from solver.throughput import Band, EfficiencyUsed, ThroughputEstimate
from solver.workload import Workload, resolve_workload

ETHERNET = Network(network_class="ethernet", gbps=25.0, derived=True, rule="test")
FABRIC = Network(network_class="infiniband", gbps=3200.0, derived=True, rule="test")


def _candidate(*, hours: float = 10.0, units: int = 1, capacity: float = 400.0, network: Network = FABRIC,
               confidence: str = "medium") -> Candidate:  # fmt: skip
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
        interconnect="nvlink", network=network, usd_per_unit_hour=10.0, billing_increment_s=3600,
    )  # fmt: skip
    return Candidate(
        supply=supply, units=units, gpu_count=2 * units, tp=1, sharding="none", recompute="none",
        memory=estimate_memory(job), capacity_gib=capacity, throughput=throughput, hours=hours,
        billable_hours=hours, usd_per_hour=10.0 * units, cost_usd=10.0 * units * hours,
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
    cost_low, cost_high = cost_band(candidate, (low, high))
    assert cost_low <= candidate.cost_usd <= cost_high
    assert cost_high == pytest.approx(candidate.usd_per_hour * 13)  # 12.5 h billed by the hour
