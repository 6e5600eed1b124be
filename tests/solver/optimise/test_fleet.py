"""The serving-fleet MILP: closed forms, monotonicity, mix vs single type, and a brute-force oracle."""

from __future__ import annotations

import functools
import itertools
import math
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from service.db.seed_files import read_seed_catalog
from solver.errors import InvalidWorkload, NoFeasiblePlan, SolverError
from solver.optimise import fleet as fleet_module
from solver.optimise.fleet import COUNT_TOLERANCE, FleetResult, ReplicaType, best_single_type, solve_fleet
from solver.optimise.mip import SolveOutcome
from solver.spec.serving import RequestClass
from solver.throughput.capacity import Capacity, measured_capacity

RHO = 0.85
MIP_REL_GAP = 1e-4  # HiGHS's default relative MIP gap: "optimal" is within it


def cap(value: float) -> Capacity:
    return Capacity(requests_per_s=value, provenance="measured", sources=[], method="test", confidence="high")


def rtype(type_id: str, price: float, caps: list[float], replicas: int = 1, tp: int = 1) -> ReplicaType:
    return ReplicaType(
        type_id=type_id,
        gpu_id=f"gpu-{type_id}",
        tp=tp,
        replicas_per_instance=replicas,
        usd_per_instance_hour=price,
        capacities=[cap(c) for c in caps],
    )


def classes(*shares: float) -> list[RequestClass]:
    return [RequestClass(input_tokens=100 * (k + 1), output_tokens=50, share=s) for k, s in enumerate(shares)]


@functools.cache
def _melange() -> tuple[list[RequestClass], list[ReplicaType]]:
    """Real rows: three request sizes, and every 1-GPU offer of the four Mélange GPUs."""
    catalog = read_seed_catalog()
    mix = [
        RequestClass(input_tokens=30, output_tokens=80, share=0.6),
        RequestClass(input_tokens=800, output_tokens=300, share=0.3),
        RequestClass(input_tokens=1500, output_tokens=1500, share=0.1),
    ]
    types = []
    for offer in catalog.offers.offers:
        if offer.gpus_per_instance != 1 or offer.price_per_hour_usd is None:
            continue
        caps = [
            measured_capacity(
                catalog.serving.items, "Llama-2-7b", offer.gpu_id, 1, c.input_tokens, c.output_tokens
            )
            for c in mix
        ]
        if all(c is not None for c in caps):
            types.append(
                ReplicaType(
                    type_id=offer.offer_id,
                    gpu_id=offer.gpu_id,
                    tp=1,
                    replicas_per_instance=1,
                    usd_per_instance_hour=offer.price_per_hour_usd,
                    capacities=[c for c in caps if c is not None],
                    offer_ref=offer.offer_id,
                )
            )
    return mix, types


def check_fleet(
    fleet: FleetResult, mix: list[RequestClass], types: list[ReplicaType], rate: float, rho: float
) -> None:
    """Shares sum to 1 per class, loads ≤ ρ, and the cost and replicas add up."""
    by_id = {t.type_id: t for t in types}
    for c in range(len(mix)):
        assert math.isclose(sum(s[c] for s in fleet.shares.values()), 1.0, abs_tol=1e-9) or rate == 0
    for type_id, count in fleet.instances.items():
        t = by_id[type_id]
        assert count >= 1 and fleet.replicas[type_id] == count * t.replicas_per_instance
        used = sum(
            rate * mix[c].share * share / t.capacities[c].requests_per_s
            for c, share in enumerate(fleet.shares[type_id])
            if share > 0
        )
        assert math.isclose(fleet.load[type_id], used / fleet.replicas[type_id], rel_tol=1e-9, abs_tol=1e-12)
        assert fleet.load[type_id] <= rho * (1 + 2 * COUNT_TOLERANCE) + 1e-9
    expected = sum(n * by_id[t].usd_per_instance_hour for t, n in fleet.instances.items())
    assert math.isclose(fleet.usd_per_hour, expected, rel_tol=1e-12)


# 1. one request bucket: ⌈rate / (ρ · capacity per replica · replicas per instance)⌉ × the cheapest price


def test_one_bucket_costs_ceil_rate_over_rho_capacity_times_the_cheapest_offer() -> None:
    types = _melange()[1]
    one = [RequestClass(input_tokens=30, output_tokens=80, share=1.0)]
    l4 = [
        ReplicaType(
            type_id=t.type_id,
            gpu_id=t.gpu_id,
            tp=1,
            replicas_per_instance=1,
            usd_per_instance_hour=t.usd_per_instance_hour,
            capacities=[t.capacities[0]],
        )
        for t in types
        if t.gpu_id == "l4"
    ]
    assert len(l4) >= 2  # several offers of the same GPU: equal capacity, different prices
    capacity = l4[0].capacities[0].requests_per_s
    cheapest = min(t.usd_per_instance_hour for t in l4)
    for rate in (0.3, capacity * RHO, 17.0, 250.0):
        fleet = solve_fleet(one, rate, l4, max_utilization=RHO)
        assert fleet.usd_per_hour == pytest.approx(math.ceil(rate / (RHO * capacity) - 1e-9) * cheapest)
        check_fleet(fleet, one, l4, rate, RHO)


@settings(max_examples=40, deadline=None)
@given(
    rate=st.floats(0.01, 500),
    capacity=st.floats(0.05, 50),
    replicas=st.integers(1, 8),
    rho=st.sampled_from([0.5, 0.85, 1.0]),
    prices=st.lists(st.floats(0.1, 40), min_size=1, max_size=4),
)
def test_one_bucket_closed_form(
    rate: float, capacity: float, replicas: int, rho: float, prices: list[float]
) -> None:
    types = [rtype(f"t{k}", p, [capacity], replicas) for k, p in enumerate(prices)]
    fleet = solve_fleet(classes(1.0), rate, types, max_utilization=rho)
    need = rate / (rho * capacity * replicas)
    expected = {math.ceil(need), math.ceil(need / (1 + COUNT_TOLERANCE))}  # the tolerance decides exact ties
    assert sum(fleet.instances.values()) in expected
    assert fleet.usd_per_hour == pytest.approx(sum(fleet.instances.values()) * min(prices))


def test_a_rate_of_exactly_k_replicas_needs_k_replicas() -> None:
    for k in (1, 3, 7, 40):
        fleet = solve_fleet(classes(1.0), 0.85 * 3.3 * k, [rtype("a", 1.0, [3.3])], max_utilization=0.85)
        assert fleet.instances == {"a": k}


# 2. raising the rate never lowers the cost


@settings(max_examples=30, deadline=None)
@given(rates=st.lists(st.floats(0.05, 60), min_size=2, max_size=2))
def test_cost_is_monotone_in_the_rate(rates: list[float]) -> None:
    mix, types = _melange()
    low, high = sorted(rates)
    cheap = solve_fleet(mix, low, types, max_utilization=RHO)
    dear = solve_fleet(mix, high, types, max_utilization=RHO)
    assert cheap.usd_per_hour <= dear.usd_per_hour * (1 + MIP_REL_GAP) + 1e-9


# 3. the mix never costs more than the best single type


def test_a_mix_beats_every_single_type_on_melange_rows() -> None:
    mix, types = _melange()
    fleet = solve_fleet(mix, 20.0, types, max_utilization=RHO)
    single = best_single_type(mix, 20.0, types, max_utilization=RHO)
    assert single is not None and len(single.instances) == 1
    assert fleet.usd_per_hour < single.usd_per_hour  # short requests on L4/A10G, long ones on bigger GPUs
    assert len({next(t.gpu_id for t in types if t.type_id == i) for i in fleet.instances}) >= 2
    check_fleet(fleet, mix, types, 20.0, RHO)
    check_fleet(single, mix, types, 20.0, RHO)
    assert fleet.pruned and all(p not in fleet.instances for p in fleet.pruned)


def test_best_single_type_is_none_when_no_type_serves_every_class() -> None:
    types = [rtype("a", 1.0, [5.0, 0.0]), rtype("b", 2.0, [0.0, 5.0])]
    assert best_single_type(classes(0.5, 0.5), 3.0, types, max_utilization=RHO) is None
    fleet = solve_fleet(classes(0.5, 0.5), 3.0, types, max_utilization=RHO)
    assert fleet.instances == {"a": 1, "b": 1} and fleet.shares == {"a": [1.0, 0.0], "b": [0.0, 1.0]}


def test_fifty_types_and_six_classes_solve_to_optimality() -> None:
    rng = random.Random(5)
    mix = classes(0.3, 0.2, 0.2, 0.1, 0.1, 0.1)
    types = []
    for k in range(50):
        speed = rng.uniform(0.5, 10)
        caps = [speed * rng.uniform(0.2, 3) for _ in mix]
        types.append(
            rtype(f"t{k}", speed * rng.uniform(0.5, 1.5), caps, replicas=rng.choice([1, 1, 2, 4, 8]))
        )
    for rate in (1.0, 30.0, 400.0):
        fleet = solve_fleet(mix, rate, types, max_utilization=RHO)
        single = best_single_type(mix, rate, types, max_utilization=RHO)
        assert fleet.outcome.status == "optimal" and single is not None
        assert fleet.usd_per_hour <= single.usd_per_hour + 1e-9
        check_fleet(fleet, mix, types, rate, RHO)


# 4. small instances agree with brute force over integer instance vectors


def _feasible(counts: tuple[int, ...], needs: list[list[float | None]]) -> bool:
    """Whether instance counts can carry every class (one or two classes, exactly).

    ``needs[t][c]``: instances of type t that class c alone keeps busy (None: t cannot serve c). With
    two classes, routing class 0 is a fractional knapsack: put it first where it displaces the least
    class-1 capacity (smallest needs[t][0] / needs[t][1]), then check class 1 fits in what is left.
    """
    budget = [n * (1 + COUNT_TOLERANCE) for n in counts]
    if len(needs[0]) == 1:
        return (
            sum(b / need[0] for b, need in zip(budget, needs, strict=True) if need[0] is not None)
            >= 1 - 1e-12
        )
    left = 1.0
    order = sorted(
        (t for t in range(len(needs)) if needs[t][0] is not None),
        key=lambda t: 0.0 if needs[t][1] is None else needs[t][0] / needs[t][1],  # type: ignore[operator]
    )
    for t in order:
        need0 = needs[t][0]
        assert need0 is not None
        take = min(left, budget[t] / need0)
        budget[t] -= take * need0
        left -= take
    if left > 1e-12:
        return False
    room = sum(budget[t] / need[1] for t, need in enumerate(needs) if need[1] is not None)
    return room >= 1 - 1e-12


Instance = tuple[list[RequestClass], float, list[ReplicaType], float, int | None]


@st.composite
def small_instances(draw: st.DrawFn) -> Instance:
    n_classes = draw(st.integers(1, 2))
    share = draw(st.sampled_from([0.2, 0.5, 0.7])) if n_classes == 2 else 1.0
    mix = classes(share, 1 - share) if n_classes == 2 else classes(1.0)
    types = []
    for k in range(draw(st.integers(1, 3))):
        caps = [draw(st.sampled_from([0.0, 1.0, 2.5, 4.0, 7.0, 12.0])) for _ in range(n_classes)]
        price = draw(st.integers(1, 30)) / 2
        replicas, tp = draw(st.integers(1, 3)), draw(st.sampled_from([1, 1, 2]))
        types.append(rtype(f"t{k}", price, caps, replicas=replicas, tp=tp))
    rate = draw(st.sampled_from([0.5, 1.0, 3.0, 6.0, 10.0]))
    rho = draw(st.sampled_from([0.5, 0.85, 1.0]))
    max_gpus = draw(st.none() | st.integers(1, 12))
    return mix, rate, types, rho, max_gpus


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_milp_agrees_with_brute_force(instance: Instance) -> None:
    mix, rate, types, rho, max_gpus = instance
    needs = [
        [
            rate * c.share / (cap.requests_per_s * rho * t.replicas_per_instance)
            if cap.requests_per_s > 0
            else None
            for c, cap in zip(mix, t.capacities, strict=True)
        ]
        for t in types
    ]
    bounds = [math.ceil(sum(n for n in need if n is not None)) for need in needs]
    best: float | None = None
    for counts in itertools.product(*(range(b + 1) for b in bounds)):
        gpus = sum(n * t.gpus_per_instance for n, t in zip(counts, types, strict=True))
        if (max_gpus is None or gpus <= max_gpus) and _feasible(counts, needs):
            cost = sum(n * t.usd_per_instance_hour for n, t in zip(counts, types, strict=True))
            best = cost if best is None else min(best, cost)
    if best is None:
        with pytest.raises(NoFeasiblePlan):
            solve_fleet(mix, rate, types, max_utilization=rho, max_gpus=max_gpus)
        return
    fleet = solve_fleet(mix, rate, types, max_utilization=rho, max_gpus=max_gpus)
    assert fleet.usd_per_hour == pytest.approx(best, rel=MIP_REL_GAP, abs=1e-9)
    counts = tuple(fleet.instances.get(t.type_id, 0) for t in types)
    assert _feasible(counts, needs)
    used = sum(n * t.gpus_per_instance for n, t in zip(counts, types, strict=True))
    assert max_gpus is None or used <= max_gpus
    check_fleet(fleet, mix, types, rate, rho)
    single = best_single_type(mix, rate, types, max_utilization=rho, max_gpus=max_gpus)
    if single is not None:
        assert fleet.usd_per_hour <= single.usd_per_hour + 1e-9
        check_fleet(single, mix, types, rate, rho)
        ((type_id, count),) = single.instances.items()  # the closed form agrees with the MILP on that type
        alone = solve_fleet(mix, rate, [t for t in types if t.type_id == type_id], max_utilization=rho)
        assert alone.instances == {type_id: count}


# the rest: pruning, infeasibility, limits, validation


def test_a_dominated_type_is_pruned_and_a_cheap_small_type_is_not() -> None:
    small = rtype("small", 1.0, [10.0])  # $0.10 per req/s: dearer per unit of capacity than "big"
    big = rtype("big", 5.0, [100.0])  # $0.05 per req/s
    worse = rtype("worse", 6.0, [90.0])  # dearer and slower than "big": dominated
    fleet = solve_fleet(classes(1.0), 5.0, [small, big, worse], max_utilization=RHO)
    assert fleet.instances == {"small": 1} and fleet.pruned == {"worse": "big"}
    assert solve_fleet(classes(1.0), 80.0, [small, big, worse], max_utilization=RHO).instances == {"big": 1}


def test_a_big_instance_dearer_than_its_parts_is_pruned() -> None:
    single = rtype("single", 1.0, [2.0])
    octo = rtype("octo", 8.5, [2.0], replicas=8)  # dearer than 8 singles with the same capacity
    fleet = solve_fleet(classes(1.0), 13.0, [single, octo], max_utilization=1.0)
    assert fleet.pruned == {"octo": "single"} and fleet.instances == {"single": 7}
    discounted = rtype("octo", 7.5, [2.0], replicas=8)
    fleet = solve_fleet(classes(1.0), 15.0, [single, discounted], max_utilization=1.0)
    assert fleet.pruned == {} and fleet.instances == {"octo": 1}


def _pairwise_pruned(
    mix: list[RequestClass], rate: float, types: list[ReplicaType], gpu_cap: int | None
) -> set[str]:
    """The pruning rule of the module docstring, pair by pair in plain Python (the reference)."""
    rates = [rate * c.share for c in mix]

    def need(t: ReplicaType, c: int) -> float | None:
        cap_ = t.capacities[c].requests_per_s
        return rates[c] / (cap_ * RHO * t.replicas_per_instance) if cap_ > 0 else None

    def dominates(v: ReplicaType, u: ReplicaType) -> bool:
        copies = 1
        for c in range(len(mix)):
            if rates[c] <= 0 or need(u, c) is None:
                continue
            nv, nu = need(v, c), need(u, c)
            if nv is None or nu is None:
                return False
            copies = max(copies, math.ceil(nv / nu - 1e-9))
        cheap = copies * v.usd_per_instance_hour <= u.usd_per_instance_hour
        return cheap and (gpu_cap is None or copies * v.gpus_per_instance <= u.gpus_per_instance)

    return {
        u.type_id
        for j, u in enumerate(types)
        if any(i != j and dominates(v, u) and (not dominates(u, v) or i < j) for i, v in enumerate(types))
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 6),  # price
            st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 6.0]), min_size=2, max_size=2),  # capacities
            st.sampled_from([1, 2]),  # replicas per instance
            st.sampled_from([1, 2]),  # tensor-parallel degree
        ),
        min_size=1,
        max_size=9,
    ),
    st.sampled_from([None, 64]),
)
@example([(2, [3.0, 3.0], 1, 1), (2, [3.0, 3.0], 1, 2)], None)  # a mutual tie: the first is kept
@example([(2, [3.0, 0.0], 1, 1), (2, [3.0, 1.0], 1, 1), (3, [6.0, 2.0], 2, 1)], 64)
def test_pruning_matches_the_pairwise_rule(
    specs: list[tuple[int, list[float], int, int]], gpu_cap: int | None
) -> None:
    types = [rtype(f"t{k}", float(p), caps, replicas=r, tp=tp) for k, (p, caps, r, tp) in enumerate(specs)]
    mix = classes(0.5, 0.5)
    problem = fleet_module._validate(mix, 7.0, types, RHO, gpu_cap)
    dropped = fleet_module._dominated(problem)
    assert {types[u].type_id for u in dropped} == _pairwise_pruned(mix, 7.0, types, gpu_cap)
    assert all(v not in dropped for v in dropped.values())  # each points at a kept type


def test_exact_twins_keep_the_first() -> None:
    twins = [rtype("a", 2.0, [4.0, 4.0]), rtype("b", 2.0, [4.0, 4.0])]
    fleet = solve_fleet(classes(0.5, 0.5), 10.0, twins, max_utilization=RHO)
    assert fleet.pruned == {"b": "a"} and set(fleet.instances) == {"a"}


def test_a_class_nobody_can_serve_raises_with_reasons_per_gpu() -> None:
    types = [rtype("a", 1.0, [5.0, 0.0]), rtype("b", 2.0, [9.0, 0.0])]
    with pytest.raises(NoFeasiblePlan, match=r"request_mix\[1\]") as info:
        solve_fleet(classes(0.5, 0.5), 3.0, types, max_utilization=RHO)
    assert set(info.value.rejected) == {"gpu-a", "gpu-b"}
    assert all(
        r.reason == "no_capacity" and "request_mix[1]" in r.detail for r in info.value.rejected["gpu-a"]
    )


def test_max_gpus_is_respected_or_reported() -> None:
    types = [rtype("one", 1.0, [1.0]), rtype("quad", 5.5, [1.25], replicas=4)]  # 1 and 4 GPUs per instance
    assert solve_fleet(classes(1.0), 5.0, types, max_utilization=1.0).instances == {"one": 5}  # $5, 5 GPUs
    capped = solve_fleet(classes(1.0), 5.0, types, max_utilization=1.0, max_gpus=4)
    assert capped.instances == {"quad": 1} and capped.usd_per_hour == 5.5
    single = best_single_type(classes(1.0), 5.0, types, max_utilization=1.0, max_gpus=4)
    assert single is not None and single.instances == {"quad": 1}
    with pytest.raises(NoFeasiblePlan, match="max_gpus") as info:
        solve_fleet(classes(1.0), 5.0, types, max_utilization=1.0, max_gpus=3)
    assert set(info.value.rejected) == {"gpu-one", "gpu-quad"}


def test_under_a_gpu_cap_a_type_needing_more_gpus_does_not_dominate() -> None:
    one = rtype("one", 1.0, [1.0])
    quad = rtype("quad", 0.9, [0.5], replicas=4)  # cheaper per instance and 2 req/s per instance, 4 GPUs
    assert solve_fleet(classes(1.0), 2.5, [one, quad], max_utilization=1.0).pruned == {"one": "quad"}
    capped = solve_fleet(classes(1.0), 2.5, [one, quad], max_utilization=1.0, max_gpus=3)
    assert capped.instances == {"one": 3} and capped.pruned == {}


def test_a_tiny_load_still_needs_an_instance() -> None:
    types = [rtype("a", 1.0, [5.0, 0.0]), rtype("huge", 100.0, [0.0, 1e9])]  # below HiGHS's tolerance
    fleet = solve_fleet(classes(0.5, 0.5), 2.0, types, max_utilization=RHO)
    assert fleet.instances == {"a": 1, "huge": 1}
    check_fleet(fleet, classes(0.5, 0.5), types, 2.0, RHO)


@pytest.mark.parametrize(
    ("rate", "shares"),
    [(1e-12, (0.5, 0.5)), (20.0, (1e-300, 1.0)), (5e-324, (1.0, 0.0)), (1e-12, (1e-12, 1.0))],
)
def test_vanishing_loads_still_need_an_instance_and_never_crash(
    rate: float, shares: tuple[float, float]
) -> None:
    mix = [RequestClass(input_tokens=100 * (k + 1), output_tokens=50, share=s) for k, s in enumerate(shares)]
    mix = [c for c in mix if c.share > 0]
    types = [rtype("a", 1.0, [5.0, 2.0][: len(mix)]), rtype("b", 1.5, [9.0, 30.0][: len(mix)])]
    fleet = solve_fleet(mix, rate, types, max_utilization=RHO)
    assert sum(fleet.instances.values()) >= 1 and fleet.outcome.status == "optimal"
    check_fleet(fleet, mix, types, rate, RHO)


def test_a_failed_milp_falls_back_to_the_best_single_type(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(model: object, *, time_limit_s: float, options: object = None) -> SolveOutcome:
        return SolveOutcome(
            status="error", objective=None, best_bound=None, gap=None, solve_ms=0.0, message="boom"
        )

    monkeypatch.setattr(fleet_module, "solve", fail)
    types = [rtype("a", 1.0, [5.0, 5.0]), rtype("b", 3.5, [20.0, 20.0])]
    fleet = solve_fleet(classes(0.5, 0.5), 12.0, types, max_utilization=RHO)
    assert fleet.instances == {"a": 3} and "boom" in fleet.outcome.message
    assert "single-type" in fleet.outcome.message
    with pytest.raises(SolverError, match="boom"):
        solve_fleet(
            classes(0.5, 0.5),
            12.0,
            [rtype("a", 1.0, [5.0, 0.0]), rtype("b", 3.0, [0.0, 5.0])],
            max_utilization=RHO,
        )


def test_zero_rate_needs_no_fleet() -> None:
    fleet = solve_fleet(classes(1.0), 0.0, [rtype("a", 1.0, [2.0])], max_utilization=RHO)
    assert fleet.instances == {} and fleet.usd_per_hour == 0.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_utilization": 0.0}, "max_utilization"),
        ({"max_utilization": 1.2}, "max_utilization"),
        ({"max_utilization": 0.8, "max_gpus": 0}, "max_gpus"),
    ],
)
def test_bad_limits_name_their_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InvalidWorkload) as info:
        solve_fleet(classes(1.0), 1.0, [rtype("a", 1.0, [2.0])], **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_bad_mix_or_rate_is_rejected() -> None:
    with pytest.raises(InvalidWorkload) as info:
        solve_fleet(classes(0.5, 0.4), 1.0, [rtype("a", 1.0, [2.0, 2.0])], max_utilization=RHO)
    assert info.value.field == "request_mix"
    with pytest.raises(InvalidWorkload) as info:
        solve_fleet(classes(1.0), -1.0, [rtype("a", 1.0, [2.0])], max_utilization=RHO)
    assert info.value.field == "requests_per_s"
    with pytest.raises(ValueError, match="capacities"):
        solve_fleet(classes(1.0), 1.0, [rtype("a", 1.0, [2.0, 3.0])], max_utilization=RHO)
