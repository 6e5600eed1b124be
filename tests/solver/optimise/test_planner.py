"""The planner: the MILP agrees with brute-force enumeration; pruning, alternatives and rejections."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.mig import SliceSpec
from solver.catalog.network import Network
from solver.errors import NoFeasiblePlan, ThroughputUnavailable
from solver.optimise.candidates import Candidate, Supply, enumerate_candidates, gpu_counts
from solver.optimise.planner import choose, pareto_front, plan
from solver.spec.plan import PLAN_REQUEST_KINDS, PlanConstraints, PlanRequest
from solver.spec.workload import ModelSpec, ResolvedWorkload, Workload
from solver.throughput.estimate import Band, EfficiencyUsed, ThroughputEstimate, Topology
from tests.gpu_facts import facts

GPUS = {
    "big": GpuSpec(
        gpu_id="big",
        name="Big",
        vendor="X",
        memory_gib=80,
        ecc=True,
        form_factor="SXM5",
        **facts("h100-sxm", family="big"),
    ),
    "mid": GpuSpec(
        gpu_id="mid",
        name="Mid",
        vendor="X",
        memory_gib=48,
        ecc=True,
        form_factor="PCIe card",
        **facts("l40s", family="mid"),
    ),
    "small": GpuSpec(
        gpu_id="small",
        name="Small",
        vendor="X",
        memory_gib=24,
        ecc=False,
        form_factor="PCIe card",
        **facts("rtx-4090", family="small"),
    ),
}
SPEED = {"big": 10_000.0, "mid": 4_000.0, "small": 2_500.0}  # tokens/s per GPU


ETHERNET = Network(network_class="ethernet", gbps=25.0, derived=False, rule="test ethernet")


def throughput(
    workload: ResolvedWorkload, gpu: GpuSpec, gpu_count: int, topology: Topology
) -> ThroughputEstimate:
    """A stand-in throughput: fixed speed per GPU, 0.9-0.97 kept per doubling inside an instance and
    0.85 per doubling of instances (the planner's choice, not this curve, is under test)."""
    if gpu.gpu_id == "none":
        raise ThroughputUnavailable("no data")
    inside = min(gpu_count, topology.gpus_per_instance)
    instances = gpu_count / inside
    efficiency = {"none": 1.0, "pcie": 0.9, "nvlink": 0.95, "nvswitch": 0.97}[
        topology.interconnect
    ] ** math.log2(inside) * 0.85 ** math.log2(instances)
    value = SPEED[gpu.gpu_id] * gpu_count * efficiency
    return ThroughputEstimate(
        value=value,
        unit="tokens_per_s",
        provenance="derived",
        route="class_model",
        sources=[],
        confidence="medium",
        confidence_score=0.5,
        method="test",
        workload_class="lora",
        stack="standard",
        efficiency=EfficiencyUsed(basis="prior"),
        band=Band(low=value * 0.8, high=value * 1.25),
    )


def supply(
    i: int, gpu: str, per_unit: int, price: float, ic: Interconnect = "pcie", increment: int = 60
) -> Supply:
    return Supply(
        supply_id=f"s{i}",
        acquisition="rent",
        pricing="on_demand",
        gpu_id=gpu,
        gpus_per_unit=per_unit,
        interconnect="none" if per_unit == 1 else ic,
        network=ETHERNET,
        usd_per_unit_hour=price,
        billing_increment_s=increment,
        provider=f"p{i % 3}",
    )


JOB = Workload(
    kind="fine_tune", model=ModelSpec(name="Llama 3.2 1B"), method="lora", batch_size=2, seq_len=1024
)


def plan_request(**fields: Any) -> PlanRequest:
    """The member of the plan request union that ``fields["kind"]`` names, built from the other fields."""
    kind = fields.pop("kind")
    member = next(m for m in PLAN_REQUEST_KINDS if m.__struct_config__.tag == kind)
    return member(**fields)  # type: ignore[return-value]


def request(tokens: int, **limits: float | int | None) -> PlanRequest:
    return plan_request(
        kind="fine_tune",
        model=ModelSpec(name="Llama 3.2 1B"),
        method="lora",
        batch_size=2,
        seq_len=1024,
        tokens=tokens,
        constraints=PlanConstraints(**limits),  # type: ignore[arg-type]
    )


def brute_force(
    candidates: list[Candidate], deadline: float | None, budget: float | None, objective: str
) -> float | None:
    feasible = [
        c
        for c in candidates
        if (deadline is None or c.hours <= deadline) and (budget is None or c.cost_usd <= budget)
    ]
    if not feasible:
        return None
    return min(c.cost_usd if objective == "cost" else c.hours for c in feasible)


supplies_strategy = st.lists(
    st.tuples(
        st.sampled_from(sorted(GPUS)),
        st.sampled_from([1, 2, 4, 8]),
        st.floats(min_value=0.2, max_value=40, allow_nan=False),
        st.sampled_from(["pcie", "nvlink", "nvswitch"]),
        st.sampled_from([1, 60, 3600]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    raw=supplies_strategy,
    tokens=st.integers(min_value=10**6, max_value=10**11),
    deadline=st.none() | st.floats(min_value=0.05, max_value=5000),
    budget=st.none() | st.floats(min_value=1, max_value=100_000),
    max_gpus=st.sampled_from([1, 4, 8, 16, 64]),
    objective=st.sampled_from(["cost", "time"]),
)
def test_milp_agrees_with_enumeration_oracle(
    raw: list[tuple[str, int, float, Interconnect, int]],
    tokens: int,
    deadline: float | None,
    budget: float | None,
    max_gpus: int,
    objective: str,
) -> None:
    supplies = [supply(i, g, n, price, ic, inc) for i, (g, n, price, ic, inc) in enumerate(raw)]
    # The oracle sees every configuration, without the deadline/budget filtering or Pareto pruning.
    every = enumerate_candidates(
        JOB, supplies, GPUS, throughput, lambda unit: _tokens(tokens), max_gpus=max_gpus
    ).candidates
    best = brute_force(every, deadline, budget, objective)
    limits = {"deadline_hours": deadline, "budget_usd": budget, "max_gpus": max_gpus}
    req = request(tokens, **limits)
    req = msgspec.structs.replace(req, objective=objective)
    if best is None:
        with pytest.raises(NoFeasiblePlan):
            plan(req, JOB, supplies, GPUS, throughput, seq_len=1024)
        return
    result = plan(req, JOB, supplies, GPUS, throughput, seq_len=1024)
    got = result.choice.cost_usd if objective == "cost" else result.choice.hours
    assert got == pytest.approx(best, rel=1e-9)
    assert result.outcome.status == "optimal"


def _tokens(tokens: int):  # type: ignore[no-untyped-def]
    from solver.optimise.candidates import WorkAmount

    return WorkAmount(amount=float(tokens), unit="tokens")


@settings(max_examples=80, deadline=None)
@given(
    points=st.lists(
        st.tuples(st.floats(min_value=0.01, max_value=1e5), st.floats(min_value=0.01, max_value=1e5)),
        min_size=1,
        max_size=30,
    ),
    deadline=st.none() | st.floats(min_value=0.01, max_value=1e5),
)
def test_one_hot_milp_equals_argmin(points: list[tuple[float, float]], deadline: float | None) -> None:
    base = enumerate_candidates(
        JOB, [supply(0, "big", 1, 1.0)], GPUS, throughput, lambda u: _tokens(10**9), max_gpus=1
    )
    template = base.candidates[0]
    candidates = [
        msgspec.structs.replace(
            template,
            cost_usd=c,
            hours=h,
            charges=msgspec.structs.replace(template.charges, total_usd=c, wall_hours=h, deadline_hours=h),
        )
        for c, h in points
    ]
    index, outcome = choose(candidates, "cost", deadline_hours=deadline)
    expected = brute_force(candidates, deadline, None, "cost")
    if expected is None:
        assert index is None and outcome.status == "infeasible"
    else:
        assert index is not None and candidates[index].cost_usd == pytest.approx(expected)
    front = pareto_front(candidates)
    assert min(c.cost_usd for c in front) == min(c.cost_usd for c in candidates)
    assert min(c.hours for c in front) == min(c.hours for c in candidates)


def test_gpu_counts_are_data_parallel_friendly() -> None:
    assert gpu_counts(1, 20) == [1, 2, 4, 8, 16]
    assert gpu_counts(8, 32) == [1, 2, 3, 4]
    assert gpu_counts(3, 24) == [1, 8]
    assert gpu_counts(16, 8) == []


def test_billing_increment_rounds_up() -> None:
    supplies = [supply(0, "big", 1, 3.6, increment=3600)]
    result = plan(request(10**8), JOB, supplies, GPUS, throughput, seq_len=1024)
    hours = 10**8 / SPEED["big"] / 3600
    assert result.choice.hours == pytest.approx(hours)
    assert result.choice.billable_hours == math.ceil(hours)
    assert result.choice.cost_usd == pytest.approx(3.6 * math.ceil(hours))


def test_rejections_name_the_reason_per_gpu() -> None:
    supplies = [supply(0, "big", 1, 2.0), supply(1, "small", 1, 0.2)]
    huge = plan_request(kind="train", model=ModelSpec(name="Llama 3.1 70B"), tokens=10**9, recompute="none")
    template = Workload(kind="train", model=ModelSpec(name="Llama 3.1 70B"), recompute="none")
    with pytest.raises(NoFeasiblePlan) as info:
        plan(huge, template, supplies, GPUS, throughput, seq_len=2048)
    assert {r.reason for r in info.value.rejected["small"]} == {"memory"}
    assert [(r.reason, r.detail) for r in info.value.rejected["mid"]] == [
        ("filter", "no current offer or ownership price")
    ]


def test_deadline_picks_more_gpus_and_alternatives_explain() -> None:
    supplies = [supply(0, "big", 1, 2.0), supply(1, "mid", 1, 0.7)]
    tokens = 10**10
    cheap = plan(request(tokens), JOB, supplies, GPUS, throughput, seq_len=1024)
    rushed = plan(
        request(tokens, deadline_hours=cheap.choice.hours / 3), JOB, supplies, GPUS, throughput, seq_len=1024
    )
    assert rushed.choice.hours <= cheap.choice.hours / 3
    assert rushed.choice.gpu_count > cheap.choice.gpu_count
    assert rushed.choice.cost_usd >= cheap.choice.cost_usd
    assert all(a.candidate.cost_usd >= cheap.choice.cost_usd for a in cheap.alternatives)
    assert all("costs more" in a.why or "same cost" in a.why for a in cheap.alternatives)


def test_ecc_and_interconnect_filters() -> None:
    supplies = [supply(0, "small", 1, 0.1), supply(1, "big", 8, 20.0, "nvswitch")]
    ecc = plan(request(10**9, max_gpus=8), JOB, supplies, GPUS, throughput, seq_len=1024)
    assert ecc.choice.supply.gpu_id == "small"
    req = request(10**9)
    strict = msgspec.structs.replace(req, constraints=PlanConstraints(ecc=True, interconnect="nvswitch"))
    # The standard (fine-tuning) stack is data-parallel only: an 8-GPU instance needs 8 sequences a step.
    job = msgspec.structs.replace(JOB, batch_size=8)
    result = plan(strict, job, supplies, GPUS, throughput, seq_len=1024)
    assert result.choice.supply.gpu_id == "big"
    assert ("ecc", "no ECC memory") in [(r.reason, r.detail) for r in result.rejected["small"]]


def test_left_out_checkpointing_is_chosen_per_layout() -> None:
    """With ``recompute`` left out the planner tries every level and keeps the fastest layout that fits."""
    supplies = [supply(0, "mid", 8, 20.0, "nvswitch")]
    job = {"kind": "train", "model": ModelSpec(name="Llama 3 8B"), "seq_len": 8192, "batch_size": 4}
    one_node = PlanConstraints(max_gpus=8)
    stated = plan_request(**job, tokens=10**9, recompute="none", constraints=one_node)  # type: ignore[arg-type]
    with pytest.raises(NoFeasiblePlan):
        plan(stated, Workload(**job, recompute="none"), supplies, GPUS, throughput, seq_len=8192)  # type: ignore[arg-type]
    auto = plan_request(**job, tokens=10**9, constraints=one_node)  # type: ignore[arg-type]
    found = plan(auto, Workload(**job), supplies, GPUS, throughput, seq_len=8192)  # type: ignore[arg-type]
    assert found.choice.recompute in ("selective", "full")
    assert found.choice.memory.per_gpu_gib <= GPUS["mid"].memory_gib


BIG_SLICE = SliceSpec(
    gpu_id="big-mig-1g-10gb",
    name="Big MIG 1g.10gb",
    vendor="X",
    **facts("h100-sxm", family="big", nvlink_domain=1),
    memory_gib=10,
    ecc=True,
    parent_gpu_id="big",
    mig_profile="1g.10gb",
    slices_per_gpu=7,
    compute_fraction=1 / 7,
    memory_fraction=1 / 8,
)


def test_slices_are_told_under_their_parent_gpu_never_on_their_own() -> None:
    gpus = {**GPUS, BIG_SLICE.gpu_id: BIG_SLICE}
    SPEED[BIG_SLICE.gpu_id] = SPEED["big"] / 8
    big_job = plan_request(
        kind="train", model=ModelSpec(name="Llama 3.1 70B"), tokens=10**9, recompute="none"
    )
    template = Workload(kind="train", model=ModelSpec(name="Llama 3.1 70B"), recompute="none")
    with pytest.raises(NoFeasiblePlan) as info:
        plan(big_job, template, [supply(0, BIG_SLICE.gpu_id, 1, 0.3)], gpus, throughput, seq_len=2048)
    rejected = info.value.rejected
    assert set(rejected) == set(GPUS)  # one entry per whole GPU, none per slice
    ((only,),) = [rejected["big"]]
    assert only.reason == "memory" and only.detail.startswith("MIG 1g.10gb: needs")
    # a usable slice makes its parent usable: no "no current offer" line for it
    small_job = plan(
        request(10**8), JOB, [supply(0, BIG_SLICE.gpu_id, 1, 0.3)], gpus, throughput, seq_len=1024
    )
    assert small_job.choice.supply.gpu_id == BIG_SLICE.gpu_id
    assert "big" not in small_job.rejected and BIG_SLICE.gpu_id not in small_job.rejected
    # the parent's own reasons win over its slices'
    both = [supply(0, BIG_SLICE.gpu_id, 1, 0.3), supply(1, "big", 1, 2.0)]
    with pytest.raises(NoFeasiblePlan) as info:
        plan(big_job, template, both, gpus, throughput, seq_len=2048)
    assert not info.value.rejected["big"][0].detail.startswith("MIG")
