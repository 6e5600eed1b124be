"""The portfolio MILP against the exhaustive oracle on small random portfolios, and the behaviours the issue
names: a collision on owned GPUs moves a job or rents, a tighter cap raises the cost, a deadline that cannot
be met is explained, an infeasible portfolio names the fix. Option figures are made up for the model's
arithmetic only (no catalog data is involved in this room)."""

from __future__ import annotations

import random

import pytest

from solver.portfolio import (
    AvailabilityCap,
    BuyOption,
    InfeasiblePortfolio,
    JobOption,
    OwnedPool,
    PortfolioJob,
    PortfolioProblem,
    ServingDemand,
    ServingOption,
    plan_portfolio,
)
from tests.solver.portfolio.oracle import matches_oracle


def _own(gpu: str, count: int, hours: float, rate: float) -> JobOption:
    return JobOption(
        option_id=f"own:{gpu}:{count}",
        acquisition="own",
        gpu_id=gpu,
        gpu_count=count,
        instances=count // 8 or 1,
        supply_id=f"own:{gpu}",
        hours=hours,
        span_hours=hours,
        cost_usd=hours * count * rate,
    )


def _rent(gpu: str, provider: str, count: int, hours: float, usd_per_gpu_hour: float) -> JobOption:
    return JobOption(
        option_id=f"{provider}:{gpu}:{count}",
        acquisition="rent",
        gpu_id=gpu,
        gpu_count=count,
        instances=max(1, count // 8),
        supply_id=f"{provider}:{gpu}",
        provider=provider,
        hours=hours,
        span_hours=hours,
        cost_usd=hours * count * usd_per_gpu_hour,
    )


def _random_problem(seed: int) -> PortfolioProblem:
    rng = random.Random(seed)
    buckets, bucket_hours = 3, 24.0
    jobs = []
    for j in range(rng.choice([2, 3])):
        hours = rng.choice([10.0, 20.0, 30.0])
        options = [
            _own("h100", 8, hours, 0.4),
            _rent("h100", "acme", 8, hours, rng.uniform(1.5, 3.0)),
            _rent("a100", "bolt", 16, hours * 1.1, rng.uniform(0.8, 1.6)),
        ]
        rng.shuffle(options)
        deadline = rng.choice([None, 48.0, 72.0])
        jobs.append(
            PortfolioJob(
                name=f"job{j}",
                options=options[:2],
                earliest_start_hour=rng.choice([0.0, 12.0]),
                deadline_hour=deadline,
            )
        )
    serving = []
    if rng.random() < 0.5:
        serving.append(
            ServingDemand(
                name="chat",
                requests_per_s=[rng.choice([0.0, 5.0, 12.0]) for _ in range(buckets)],
                options=[
                    ServingOption(
                        option_id="own-h100",
                        acquisition="own",
                        gpu_id="h100",
                        gpus_per_instance=8,
                        requests_per_s=10.0,
                        usd_per_instance_hour=3.2,
                        supply_id="own:h100",
                    ),
                    ServingOption(
                        option_id="acme-h100",
                        acquisition="rent",
                        gpu_id="h100",
                        gpus_per_instance=8,
                        requests_per_s=10.0,
                        usd_per_instance_hour=18.0,
                        supply_id="acme:h100",
                        provider="acme",
                    ),
                ],
            )
        )
    return PortfolioProblem(
        bucket_hours=bucket_hours,
        buckets=buckets,
        jobs=jobs,
        serving=serving,
        owned=[OwnedPool(gpu_id="h100", gpus=rng.choice([0, 8]), usd_per_gpu_hour=0.4)],
        buy=[
            BuyOption(
                gpu_id="h100",
                unit_gpus=8,
                usd_per_unit=rng.choice([300.0, 900.0]),
                usd_per_gpu_hour=0.4,
                max_units=1,
            )
        ]
        if rng.random() < 0.5
        else [],
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=rng.choice([1, 2]))]
        if rng.random() < 0.6
        else [],
        budgets=[rng.choice([None, 900.0, 2000.0]) for _ in range(buckets)],
    )


@pytest.mark.parametrize("seed", range(40))
def test_the_milp_finds_the_enumeration_optimum(seed: int) -> None:
    matches_oracle(_random_problem(seed))


def _two_jobs_one_pool(**changes: object) -> PortfolioProblem:
    """Two 30-hour jobs that both want the 8 owned H100 in the first day-long bucket."""
    jobs = [
        PortfolioJob(
            name=name,
            options=[_own("h100", 8, 30.0, 0.5), _rent("h100", "acme", 8, 30.0, 2.5)],
            deadline_hour=48.0,
        )
        for name in ("a", "b")
    ]
    fields: dict[str, object] = {
        "bucket_hours": 24.0,
        "buckets": 4,
        "jobs": jobs,
        "owned": [OwnedPool(gpu_id="h100", gpus=8, usd_per_gpu_hour=0.5)],
    }
    return PortfolioProblem(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_collision_on_owned_gpus_rents_for_one_job_and_says_why() -> None:
    result = plan_portfolio(_two_jobs_one_pool())
    sources = sorted(s.option.acquisition for s in result.schedules)
    assert sources == ["own", "rent"]
    rented = next(s for s in result.schedules if s.option.acquisition == "rent")
    assert "owned h100 full" in rented.why
    assert any(b.kind == "owned_capacity" and b.name == "h100" for b in result.binding)
    assert result.objective_usd == pytest.approx(30 * 8 * 0.5 + 30 * 8 * 2.5)
    assert result.alone_usd == pytest.approx(2 * 30 * 8 * 2.5)


def test_a_later_deadline_moves_the_job_onto_the_owned_gpus_instead() -> None:
    problem = _two_jobs_one_pool()
    relaxed = [PortfolioJob(name=j.name, options=j.options, deadline_hour=96.0) for j in problem.jobs]
    result = plan_portfolio(_two_jobs_one_pool(jobs=relaxed))
    assert [s.option.acquisition for s in result.schedules] == ["own", "own"]
    assert sorted(s.start_bucket for s in result.schedules) == [0, 2]
    assert result.buckets[0].owned_utilization["h100"] == pytest.approx(24 / 24)


def test_a_tighter_availability_cap_raises_the_cost() -> None:
    jobs = [
        PortfolioJob(
            name=n,
            options=[_rent("h100", "acme", 8, 20.0, 2.0), _rent("h100", "bolt", 8, 20.0, 3.0)],
            deadline_hour=24.0,
        )
        for n in ("a", "b")
    ]
    loose = PortfolioProblem(
        bucket_hours=24.0,
        buckets=2,
        jobs=jobs,
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=2)],
    )
    tight = PortfolioProblem(
        bucket_hours=24.0,
        buckets=2,
        jobs=jobs,
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=1)],
    )
    assert plan_portfolio(tight).objective_usd > plan_portfolio(loose).objective_usd
    assert any(b.kind == "availability" for b in plan_portfolio(tight).binding)


def test_a_deadline_no_option_can_meet_is_explained_with_the_deadline_that_would() -> None:
    job = PortfolioJob(
        name="late",
        options=[_rent("h100", "acme", 8, 50.0, 2.0)],
        earliest_start_hour=10.0,
        deadline_hour=40.0,
    )
    with pytest.raises(InfeasiblePortfolio) as caught:
        plan_portfolio(PortfolioProblem(bucket_hours=24.0, buckets=4, jobs=[job]))
    [stuck] = caught.value.jobs
    assert stuck.job == "late"
    assert stuck.fixes[0].kind == "deadline" and stuck.fixes[0].needed == pytest.approx(60.0)


def test_caps_that_leave_no_schedule_name_the_jobs_and_the_smallest_raise() -> None:
    jobs = [
        PortfolioJob(name=n, options=[_rent("h100", "acme", 16, 20.0, 2.0)], deadline_hour=24.0)
        for n in ("a", "b")
    ]
    problem = PortfolioProblem(
        bucket_hours=24.0,
        buckets=2,
        jobs=jobs,
        caps=[AvailabilityCap(scope="provider", key="acme", max_instances=3)],
    )
    with pytest.raises(InfeasiblePortfolio) as caught:
        plan_portfolio(problem)
    assert {j.job for j in caught.value.jobs} == {"a", "b"}
    fix = caught.value.jobs[0].fixes[0]
    assert (fix.kind, fix.current, fix.needed, fix.bucket) == ("availability", 3, 4, 0)


def test_buying_a_unit_pays_when_the_work_fills_it() -> None:
    jobs = [
        PortfolioJob(name=f"j{i}", options=[_own("h100", 8, 24.0, 0.5), _rent("h100", "acme", 8, 24.0, 3.0)])
        for i in range(4)
    ]
    problem = PortfolioProblem(
        bucket_hours=24.0,
        buckets=4,
        jobs=jobs,
        buy=[BuyOption(gpu_id="h100", unit_gpus=8, usd_per_unit=1000.0, usd_per_gpu_hour=0.5, max_units=2)],
    )
    result = plan_portfolio(problem)
    assert result.bought == {"h100": 1}
    assert result.objective_usd == pytest.approx(1000.0 + 4 * 24 * 8 * 0.5)


def test_serving_that_outgrows_the_owned_gpus_names_the_serving_and_the_gpus_it_needs() -> None:
    own = ServingOption(
        option_id="own-h100", acquisition="own", gpu_id="h100", gpus_per_instance=8, requests_per_s=10.0,
        usd_per_instance_hour=3.2, supply_id="own:h100",
    )  # fmt: skip
    chat = ServingDemand(name="chat", requests_per_s=[5.0, 15.0], options=[own])
    problem = PortfolioProblem(
        bucket_hours=24.0, buckets=2, jobs=[], serving=[chat],
        owned=[OwnedPool(gpu_id="h100", gpus=8, usd_per_gpu_hour=0.4)],
    )  # fmt: skip
    with pytest.raises(InfeasiblePortfolio) as caught:
        plan_portfolio(problem)
    [held] = caught.value.jobs
    assert held.job == "serving chat"
    [fix] = held.fixes
    assert (fix.kind, fix.bucket, fix.current, fix.needed) == ("owned_capacity", 1, 8, 16)
