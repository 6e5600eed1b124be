"""Redundancy rules of a serving fleet: at least ``min_replicas`` replicas, one spare instance per type."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from solver.errors import InvalidWorkload
from solver.optimise.fleet import COUNT_TOLERANCE, best_single_type, solve_fleet
from solver.optimise.fleet_rules import FleetRules
from tests.solver.optimise.test_fleet import RHO, classes, rtype


def test_one_replica_is_not_a_fleet_when_two_are_asked() -> None:
    types = [rtype("small", 1.0, [10.0])]
    assert solve_fleet(classes(1.0), 1.0, types, max_utilization=RHO).instances == {"small": 1}
    two = solve_fleet(classes(1.0), 1.0, types, max_utilization=RHO, rules=FleetRules(min_replicas=2))
    assert two.instances == {"small": 2} and two.replicas == {"small": 2}
    pair = [rtype("pair", 1.5, [10.0], replicas=2)]  # two replicas in one instance satisfy it
    assert solve_fleet(
        classes(1.0), 1.0, pair, max_utilization=RHO, rules=FleetRules(min_replicas=2)
    ).instances == {"pair": 1}


def test_a_spare_instance_survives_the_loss_of_a_host() -> None:
    pair = [rtype("pair", 1.5, [10.0], replicas=2)]  # 2 replicas on one host: no spare
    rules = FleetRules(min_replicas=2, spare_instance=True)
    fleet = solve_fleet(classes(1.0), 1.0, pair, max_utilization=RHO, rules=rules)
    assert fleet.instances == {"pair": 2}
    single = best_single_type(classes(1.0), 1.0, pair, max_utilization=RHO, rules=rules)
    assert single is not None and single.instances == {"pair": 2}
    # a load needing 3 instances gets a fourth, whose loss leaves 3 carrying it within RHO
    fleet = solve_fleet(
        classes(1.0), 3 * 10 * RHO, [rtype("one", 1.0, [10.0])], max_utilization=RHO, rules=rules
    )
    assert fleet.instances == {"one": 4}


def test_min_replicas_must_be_positive() -> None:
    with pytest.raises(InvalidWorkload, match="min_replicas"):
        solve_fleet(
            classes(1.0), 1.0, [rtype("a", 1.0, [1.0])], max_utilization=RHO, rules=FleetRules(min_replicas=0)
        )


def _oracle(rate: float, specs: list[tuple[float, float, int]], rules: FleetRules) -> float:
    """The cheapest fleet of one request class by enumeration: ``n_t`` instances of each type carry
    ``n_t`` (or ``n_t − 1`` with a spare) instances' worth of load."""
    best = math.inf
    for counts in itertools.product(range(11), repeat=len(specs)):
        served = sum(
            max(0, n - (1 if rules.spare_instance and n else 0)) * cap * RHO * r
            for n, (_, cap, r) in zip(counts, specs, strict=True)
        )
        replicas = sum(n * r for n, (_, _, r) in zip(counts, specs, strict=True))
        if served * (1 + COUNT_TOLERANCE) >= rate and replicas >= rules.min_replicas:
            best = min(best, sum(n * price for n, (price, _, _) in zip(counts, specs, strict=True)))
    return best


@pytest.mark.parametrize("seed", range(40))
def test_the_milp_matches_enumeration_under_the_rules(seed: int) -> None:
    rng = random.Random(seed)
    specs = [
        (rng.choice([1.0, 1.7, 2.5, 4.0]), rng.choice([1.0, 2.0, 3.5]), rng.choice([1, 2, 4]))
        for _ in range(3)
    ]
    rules = FleetRules(min_replicas=rng.choice([1, 2, 3, 5]), spare_instance=rng.random() < 0.5)
    rate = rng.choice([0.5, 2.0, 4.0, 6.5])
    types = [rtype(f"t{k}", price, [cap], replicas=r) for k, (price, cap, r) in enumerate(specs)]
    expected = _oracle(rate, specs, rules)
    fleet = solve_fleet(classes(1.0), rate, types, max_utilization=RHO, rules=rules)
    assert fleet.usd_per_hour == pytest.approx(expected, rel=1e-6)
    assert sum(fleet.replicas.values()) >= rules.min_replicas
    single = best_single_type(classes(1.0), rate, types, max_utilization=RHO, rules=rules)
    assert single is not None and single.usd_per_hour >= fleet.usd_per_hour - 1e-9
