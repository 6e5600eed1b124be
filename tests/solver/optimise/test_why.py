"""Why an alternative lost: numbers printed until they differ (issue 25: "175.8 h vs 175.8 h")."""

from __future__ import annotations

import msgspec

from solver.catalog.gpus import GpuSpec
from solver.optimise.candidates import Candidate
from solver.optimise.planner import plan
from solver.optimise.why import distinct_pair, why_it_lost
from solver.spec.workload import ResolvedWorkload
from solver.throughput.estimate import ThroughputEstimate, Topology
from tests.solver.optimise.test_planner import GPUS, JOB, SPEED, request, supply, throughput


def _hours(value: float, digits: int) -> str:
    return f"{value:,.{digits}f} h"


def test_a_pair_that_rounds_alike_gets_the_digits_that_tell_it_apart() -> None:
    assert distinct_pair(175.83, 175.81, _hours, 1) == ("175.83 h", "175.81 h")
    assert distinct_pair(175.8312, 175.8304, _hours, 1) == ("175.831 h", "175.830 h")


def test_a_pair_that_differs_keeps_the_asked_digits_and_equal_values_stay_equal() -> None:
    assert distinct_pair(63.3, 79.9, _hours, 1) == ("63.3 h", "79.9 h")
    assert distinct_pair(12.0, 12.0, _hours, 1) == ("12.0 h", "12.0 h")


def _twins(lean_memory_gib: float) -> tuple[Candidate, Candidate]:
    """The choice and its first alternative among two offers alike in price and speed: the test
    planner's "big" GPU and a copy with ``lean_memory_gib`` of memory (``tests/solver/optimise/test_planner``)."""
    lean = msgspec.structs.replace(GPUS["big"], gpu_id="lean", name="Lean", memory_gib=lean_memory_gib)
    speed = {**SPEED, "lean": SPEED["big"]}

    def rate(w: ResolvedWorkload, gpu: GpuSpec, count: int, topology: Topology) -> ThroughputEstimate:
        return msgspec.structs.replace(
            throughput(w, GPUS["big"], count, topology), value=speed[gpu.gpu_id] * count
        )

    supplies = [supply(0, "big", 1, 2.0), supply(1, "lean", 1, 2.0)]
    result = plan(request(10**9, max_gpus=1), JOB, supplies, {**GPUS, "lean": lean}, rate, seq_len=1024)
    return result.choice, result.alternatives[0].candidate


def test_configurations_alike_in_cost_and_time_lose_on_memory_headroom_or_tie() -> None:
    one, other = _twins(lean_memory_gib=40)
    assert (one.cost_usd, one.hours) == (other.cost_usd, other.hours)
    big, lean = (one, other) if one.supply.gpu_id == "big" else (other, one)
    lost_on, why = why_it_lost(lean, big, "cost")
    assert lost_on == "memory_headroom" and why.startswith("same cost and time; less memory headroom: peak ")
    assert why_it_lost(big, lean, "cost")[0] == "tie"
    assert why_it_lost(big, big, "time")[0] == "tie"
    assert "ties on cost" in why_it_lost(big, big, "cost")[1]


def test_a_deadline_at_risk_decides_between_equals_and_a_miss_is_named() -> None:
    one, _ = _twins(lean_memory_gib=80)
    tight = one.charges.deadline_hours * 0.9
    lost_on, why = why_it_lost(one, one, "cost", deadline_hours=tight)
    assert lost_on == "deadline_risk" and why.startswith("misses the deadline at 90 % confidence: ")
