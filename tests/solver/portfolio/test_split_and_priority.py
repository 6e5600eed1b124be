"""Jobs that may run in stages, and ``drop_lowest_priority``: the MILP against the exhaustive oracle on
small random portfolios, and the behaviours issue 27 names (a job that cannot fit whole into the owned
GPUs' gaps runs split there, cheaper than renting; a portfolio that cannot be met whole keeps its most
valuable jobs and says why the others were left out). Option figures are made up for the model's
arithmetic only, as in ``test_solve``."""

from __future__ import annotations

import random

import msgspec
import pytest

from solver.portfolio import (
    AvailabilityCap,
    InfeasiblePortfolio,
    OwnedPool,
    PortfolioJob,
    PortfolioProblem,
    plan_portfolio,
)
from tests.solver.portfolio.oracle import matches_oracle, oracle_optimum, oracle_subset
from tests.solver.portfolio.test_solve import _own, _rent


def _random_split(seed: int) -> PortfolioProblem:
    """Day-long buckets with the owned GPUs often held by a job pinned to one day, and longer jobs that
    may split around it (or rent, capped)."""
    rng = random.Random(seed)
    jobs = []
    if rng.random() < 0.85:
        pinned = rng.choice([1, 2])
        jobs.append(PortfolioJob(name="pinned", options=[_own("h100", 8, rng.choice([6.0, 20.0]), 0.4)],
                                 earliest_start_hour=24.0 * pinned, deadline_hour=24.0 * pinned + 24))  # fmt: skip
    for j in range(rng.choice([1, 2])):
        hours = rng.choice([12.0, 30.0, 40.0])
        options = [_own("h100", 8, hours, 0.4), _rent("h100", "acme", 8, hours, rng.uniform(1.5, 3.0))]
        jobs.append(
            PortfolioJob(
                name=f"job{j}",
                options=options[: rng.choice([1, 2])],
                earliest_start_hour=rng.choice([0.0, 6.0]),
                deadline_hour=rng.choice([60.0, 72.0]),
                splittable=rng.random() < 0.8,
                restart_hours=rng.choice([0.0, 1.5]),
            )
        )
    return PortfolioProblem(
        bucket_hours=24.0,
        buckets=4,
        jobs=jobs,
        owned=[OwnedPool(gpu_id="h100", gpus=8, usd_per_gpu_hour=0.4)],
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=1)] if rng.random() < 0.5 else [],
    )


@pytest.mark.parametrize("seed", range(60))
def test_split_jobs_meet_the_enumeration_optimum(seed: int) -> None:
    result = matches_oracle(_random_split(seed))
    for s in [] if result is None else result.schedules:
        assert sum(stage.share for stage in s.stages) == pytest.approx(1.0)
        assert sum(stage.cost_usd for stage in s.stages) == pytest.approx(s.cost_usd)


def _blocked_gap(splittable: bool, restart_hours: float = 0.0) -> PortfolioProblem:
    """8 owned H100 over four day-long buckets; ``block`` holds them all of day 1; ``long`` needs 30
    hours by the end of day 3 (hour 72): whole, it cannot fit around day 1 on the owned GPUs."""
    block = PortfolioJob(name="block", options=[_own("h100", 8, 20.0, 0.5)], earliest_start_hour=24.0,
                         deadline_hour=48.0)  # fmt: skip
    long = PortfolioJob(
        name="long",
        options=[_own("h100", 8, 30.0, 0.5), _rent("h100", "acme", 8, 30.0, 2.5)],
        deadline_hour=72.0,
        splittable=splittable,
        restart_hours=restart_hours,
    )
    return PortfolioProblem(bucket_hours=24.0, buckets=4, jobs=[block, long],
                            owned=[OwnedPool(gpu_id="h100", gpus=8, usd_per_gpu_hour=0.5)])  # fmt: skip


def test_a_job_that_cannot_fit_whole_into_the_owned_gaps_runs_split_there_and_costs_less_than_renting() -> (
    None
):
    whole = plan_portfolio(_blocked_gap(splittable=False))
    split = plan_portfolio(_blocked_gap(splittable=True, restart_hours=0.5))
    [rented] = [s for s in whole.schedules if s.job == "long"]
    assert rented.option.acquisition == "rent" and rented.cost_usd == pytest.approx(30 * 8 * 2.5)
    assert [st.bucket for st in rented.stages] == [0]
    [staged] = [s for s in split.schedules if s.job == "long"]
    assert staged.option.acquisition == "own"
    assert [st.bucket for st in staged.stages] == [0, 2]
    # 30 hours of work: 23.5 in day 0 (24 less the restart), the rest in day 2; two restarts charged
    assert [st.share for st in staged.stages] == pytest.approx([23.5 / 30, 6.5 / 30])
    assert staged.cost_usd == pytest.approx(30 * 8 * 0.5 + 2 * 0.5 * 8 * 0.5)
    assert staged.stages[1].start_hour == 48.0 and staged.stages[1].end_hour == pytest.approx(48 + 0.5 + 6.5)
    assert split.objective_usd < whole.objective_usd
    assert split.objective_usd == pytest.approx(oracle_optimum(_blocked_gap(True, 0.5)) or 0.0)
    assert [b.owned_busy_gpus["h100"] for b in split.buckets] == [8, 8, 8, 0]


def _over_capacity(**priorities: int) -> PortfolioProblem:
    """Three 20-hour jobs on 8 owned H100 only, each due within the same day: one fits."""
    jobs = [
        PortfolioJob(name=name, options=[_own("h100", 8, 20.0, 0.5)], deadline_hour=24.0, priority=p)
        for name, p in priorities.items()
    ]
    return PortfolioProblem(bucket_hours=24.0, buckets=2, jobs=jobs,
                            owned=[OwnedPool(gpu_id="h100", gpus=8, usd_per_gpu_hour=0.5)],
                            on_infeasible="drop_lowest_priority")  # fmt: skip


def test_dropping_keeps_the_highest_priority_job_and_names_the_others_with_why() -> None:
    problem = _over_capacity(a=1, b=5, c=0)
    with pytest.raises(InfeasiblePortfolio):
        plan_portfolio(msgspec.structs.replace(problem, on_infeasible="explain"))
    result = plan_portfolio(problem)
    assert [s.job for s in result.schedules] == ["b"]
    assert [(d.job, d.priority) for d in result.dropped] == [("c", 0), ("a", 1)]
    assert "owned h100 full in bucket 0" in result.dropped[0].reason
    assert result.objective_usd == pytest.approx(20 * 8 * 0.5)
    assert oracle_subset(problem) == (6, pytest.approx(result.objective_usd))


def test_dropping_counts_a_job_of_priority_zero_so_two_jobs_beat_one_cheaper_of_the_same_priority_sum() -> (
    None
):
    """``big`` (priority 1, all 16 GPUs, $80) or ``x`` (priority 0) and ``y`` (priority 1), $160 together:
    by priorities alone a tie the cheaper ``big`` would win; by ``priority + 1`` (3 against 2) x and y."""
    jobs = [
        PortfolioJob(name="big", options=[_own("h100", 16, 10.0, 0.5)], deadline_hour=24.0, priority=1),
        PortfolioJob(name="x", options=[_own("h100", 8, 20.0, 0.5)], deadline_hour=24.0, priority=0),
        PortfolioJob(name="y", options=[_own("h100", 8, 20.0, 0.5)], deadline_hour=24.0, priority=1),
    ]
    problem = PortfolioProblem(bucket_hours=24.0, buckets=1, jobs=jobs,
                               owned=[OwnedPool(gpu_id="h100", gpus=16, usd_per_gpu_hour=0.5)],
                               on_infeasible="drop_lowest_priority")  # fmt: skip
    result = plan_portfolio(problem)
    assert [s.job for s in result.schedules] == ["x", "y"]
    assert [d.job for d in result.dropped] == ["big"]
    assert result.objective_usd == pytest.approx(160.0)
    assert oracle_subset(problem) == (3, pytest.approx(160.0))


def test_a_feasible_portfolio_drops_nothing_and_a_job_past_its_window_is_left_out_with_its_deadline() -> None:
    late = PortfolioJob(name="late", options=[_rent("h100", "acme", 8, 50.0, 2.0)], deadline_hour=30.0)
    fits = PortfolioJob(name="fits", options=[_rent("h100", "acme", 8, 10.0, 2.0)])
    problem = PortfolioProblem(bucket_hours=24.0, buckets=2, jobs=[late, fits],
                               on_infeasible="drop_lowest_priority")  # fmt: skip
    result = plan_portfolio(problem)
    assert [s.job for s in result.schedules] == ["fits"]
    [dropped] = result.dropped
    assert dropped.job == "late" and "after its deadline at hour 30" in dropped.reason
    assert plan_portfolio(msgspec.structs.replace(problem, jobs=[fits])).dropped == []


def _random_crowded(seed: int) -> PortfolioProblem:
    """Two or three jobs of random priority on few owned GPUs, a tight provider cap and a budget: often
    not all of them fit."""
    rng = random.Random(seed)
    jobs = []
    for j in range(rng.choice([2, 3])):
        hours = rng.choice([10.0, 20.0, 30.0])
        options = [_own("h100", 8, hours, 0.4), _rent("h100", "acme", 8, hours, rng.uniform(1.5, 3.0))]
        jobs.append(
            PortfolioJob(
                name=f"job{j}",
                options=options[rng.choice([0, 1]) : rng.choice([1, 2])] or options[:1],
                earliest_start_hour=rng.choice([0.0, 12.0]),
                deadline_hour=rng.choice([24.0, 36.0, 48.0]),
                priority=rng.choice([0, 1, 3]),
            )
        )
    return PortfolioProblem(
        bucket_hours=24.0,
        buckets=2,
        jobs=jobs,
        owned=[OwnedPool(gpu_id="h100", gpus=rng.choice([0, 8]), usd_per_gpu_hour=0.4)],
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=rng.choice([0, 1]))],
        budgets=[rng.choice([None, 300.0, 600.0]) for _ in range(2)],
        on_infeasible="drop_lowest_priority",
    )


@pytest.mark.parametrize("seed", range(40))
def test_dropping_meets_the_enumeration_optimum(seed: int) -> None:
    problem = _random_crowded(seed)
    expected = oracle_subset(problem)
    assert expected is not None  # leaving every job out always fits (no serving here)
    result = plan_portfolio(problem)
    kept = sum(j.priority + 1 for j in problem.jobs) - sum(d.priority + 1 for d in result.dropped)
    assert (kept, result.objective_usd) == (expected[0], pytest.approx(expected[1], rel=1e-6, abs=1e-6))
