"""Plan a portfolio (:func:`solver.plan_portfolio` on the problem :mod:`service.portfolios.inputs`
builds), render the answer, store it, read it back; the CSV download of its schedule."""

from __future__ import annotations

import csv
import io
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec

from service.db.backend import Cursor
from service.db.store import Store
from service.errors import NotFound
from service.plans.pipeline import PlanService
from service.portfolios.inputs import Horizon, build_problem
from service.portfolios.schemas import (
    BucketOut,
    BuyOut,
    ConstraintOut,
    DroppedOut,
    JobOut,
    PortfolioOut,
    PortfolioRequest,
    ServingOut,
    SolverOut,
    StageOut,
)
from solver import JobSchedule, PortfolioProblem, PortfolioResult, plan_portfolio

__all__ = ["PortfolioService", "schedule_csv", "stored_portfolio"]


def _stages(s: JobSchedule, horizon: Horizon) -> list[StageOut]:
    return [
        StageOut(
            bucket=st.bucket,
            gpu=s.option.gpu_id,
            gpu_count=s.option.gpu_count,
            start=horizon.at(st.start_hour),
            end=horizon.at(st.end_hour),
            start_hour=st.start_hour,
            end_hour=st.end_hour,
            share=st.share,
            hours=st.hours,
            cost_usd=st.cost_usd,
        )
        for st in s.stages
    ]


def _jobs(result: PortfolioResult, horizon: Horizon) -> list[JobOut]:
    return [
        JobOut(
            job=s.job,
            start=horizon.at(s.start_hour),
            end=horizon.at(s.end_hour),
            start_hour=s.start_hour,
            end_hour=s.end_hour,
            start_bucket=s.start_bucket,
            gpu=s.option.gpu_id,
            gpu_count=s.option.gpu_count,
            instances=s.option.instances,
            source=s.option.acquisition,
            supply=s.option.supply_id,
            provider=s.option.provider,
            pricing=s.option.pricing,
            layout=s.option.layout,
            hours=s.option.hours,
            cost_usd=s.cost_usd,
            cheapest_alone_usd=s.cheapest_alone_usd,
            why=s.why,
            split=len(s.stages) > 1 or s.stages[0].share < 1.0,
            stages=_stages(s, horizon),
        )
        for s in result.schedules
    ]


def _buckets(result: PortfolioResult, horizon: Horizon) -> list[BucketOut]:
    return [
        BucketOut(
            bucket=b.bucket,
            start=horizon.at(b.bucket * horizon.bucket_hours),
            owned_gpus=b.owned_gpus,
            owned_busy_gpus=b.owned_busy_gpus,
            owned_utilization=b.owned_utilization,
            gpu_hours=b.gpu_hours,
            rented_gpus=b.rented_gpus,
            rented_usd=b.rented_usd,
            owned_usd=b.owned_usd,
            capital_usd=b.capital_usd,
            total_usd=b.total_usd,
            budget_usd=b.budget_usd,
        )
        for b in result.buckets
    ]


def _buy(result: PortfolioResult, problem: PortfolioProblem, rules: dict[str, str]) -> list[BuyOut]:
    return [
        BuyOut(
            gpu=o.gpu_id,
            units=units,
            gpus=units * o.unit_gpus,
            usd=units * o.usd_per_unit,
            rule=rules[o.gpu_id],
        )
        for o in problem.buy
        if (units := result.bought.get(o.gpu_id, 0)) > 0
    ]


def _solver(
    result: PortfolioResult, problem: PortfolioProblem, options_ms: float, total_ms: float
) -> SolverOut:
    return SolverOut(
        backend=result.backend,
        status=result.status,
        gap=result.gap,
        time_limit_s=problem.time_limit_s,
        mip_gap=problem.mip_gap,
        variables=result.variables,
        constraints=result.constraints,
        options_per_job=max((len(j.options) for j in problem.jobs), default=0),
        options_ms=options_ms,
        build_ms=result.build_ms,
        solve_ms=result.solve_ms,
        total_ms=total_ms,
        message=result.message,
    )


def render(
    request: PortfolioRequest,
    problem: PortfolioProblem,
    result: PortfolioResult,
    horizon: Horizon,
    rules: dict[str, str],
    started: float,
    options_ms: float,
) -> PortfolioOut:
    """The API view of a solved portfolio."""
    return PortfolioOut(
        portfolio_id=f"pf-{uuid.uuid4().hex[:16]}",
        created_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        horizon=request.horizon,
        bucket_hours=horizon.bucket_hours,
        total_usd=result.objective_usd,
        alone_usd=result.alone_usd,
        saving_usd=result.alone_usd - result.objective_usd,
        jobs=_jobs(result, horizon),
        serving=[
            ServingOut(
                serving=s.demand,
                bucket=s.bucket,
                start=horizon.at(s.bucket * horizon.bucket_hours),
                requests_per_s=s.requests_per_s,
                capacity_requests_per_s=s.capacity_rps,
                instances=s.instances,
                cost_usd=s.cost_usd,
            )
            for s in result.serving
        ],
        buckets=_buckets(result, horizon),
        buy=_buy(result, problem, rules),
        binding=[
            ConstraintOut(kind=b.kind, name=b.name, bucket=b.bucket, detail=b.detail) for b in result.binding
        ],
        dropped=[DroppedOut(job=d.job, priority=d.priority, reason=d.reason) for d in result.dropped],
        solver=_solver(result, problem, options_ms, (time.perf_counter() - started) * 1000),
    )


class PortfolioService:
    """Portfolios against one store, planned with the plan service's pipeline and caches."""

    def __init__(self, store: Store, plans: PlanService) -> None:
        self.store = store
        self.plans = plans

    def plan(self, request: PortfolioRequest) -> PortfolioOut:
        """Plan ``request`` without storing it."""
        started = time.perf_counter()
        problem, horizon, rules = build_problem(request, self.plans, self.store.snapshot)
        options_ms = (time.perf_counter() - started) * 1000
        result = plan_portfolio(problem)
        return render(request, problem, result, horizon, rules, started, options_ms)

    def create(self, request: PortfolioRequest) -> PortfolioOut:
        """Plan ``request`` and store it (nothing is stored when it fails)."""
        out = self.plan(request)

        def insert(cur: Cursor) -> None:
            cur.execute(
                "INSERT INTO portfolios VALUES (?, ?, ?, ?)",
                [
                    out.portfolio_id,
                    out.created_at,
                    msgspec.json.encode(request).decode(),
                    msgspec.json.encode(out).decode(),
                ],
            )

        self.store.transaction(insert)
        return out

    def get(self, portfolio_id: str) -> PortfolioOut:
        return stored_portfolio(self.store, portfolio_id)


def stored_portfolio(store: Store, portfolio_id: str) -> PortfolioOut:
    """A stored portfolio as it was returned (404 when there is none)."""
    with store.cursor() as cur:
        row = cur.execute(
            "SELECT portfolio FROM portfolios WHERE portfolio_id = ?", [portfolio_id]
        ).fetchone()
    if row is None:
        raise NotFound(f"no portfolio {portfolio_id!r}")
    return msgspec.json.decode(row[0], type=PortfolioOut)


CSV_COLUMNS = (
    "row",
    "name",
    "bucket",
    "start",
    "end",
    "gpu",
    "gpu_count",
    "instances",
    "source",
    "supply",
    "provider",
    "share",
    "cost_usd",
    "note",
)


def _rows(out: PortfolioOut) -> Iterator[dict[str, object]]:
    for j in out.jobs:
        where = {"gpu": j.gpu, "gpu_count": j.gpu_count, "instances": j.instances, "supply": j.supply}
        yield {"row": "job", "name": j.job, "bucket": j.start_bucket, "start": j.start, "end": j.end, **where,
               "source": j.source, "provider": j.provider or "", "share": "1", "cost_usd": f"{j.cost_usd:.2f}",
               "note": j.why}  # fmt: skip
        for st in j.stages if j.split else []:
            yield {"row": "stage", "name": j.job, "bucket": st.bucket, "start": st.start, "end": st.end, **where,
                   "source": j.source, "provider": j.provider or "", "share": f"{st.share:.4f}",
                   "cost_usd": f"{st.cost_usd:.2f}"}  # fmt: skip
    for d in out.dropped:
        yield {"row": "dropped", "name": d.job, "note": d.reason}
    for s in out.serving:
        for option, n in sorted(s.instances.items()):
            yield {"row": "serving", "name": s.serving, "bucket": s.bucket, "start": s.start, "instances": n,
                   "supply": option, "cost_usd": f"{s.cost_usd:.2f}"}  # fmt: skip
    for b in out.buckets:
        at = {"row": "bucket", "bucket": b.bucket, "start": b.start}
        yield {
            **at,
            "name": "rented",
            "gpu_count": b.rented_gpus,
            "source": "rent",
            "cost_usd": f"{b.rented_usd:.2f}",
        }
        owned = b.owned_usd + b.capital_usd
        busy = sum(b.owned_busy_gpus.values())
        yield {**at, "name": "owned", "gpu_count": busy, "source": "own", "cost_usd": f"{owned:.2f}"}


def schedule_csv(out: PortfolioOut) -> str:
    """The schedule as CSV: one row per job (then one per stage of a split job, with its share of the
    work), one per job left out (``dropped``, why in ``note``), one per serving bucket and option, and two
    per bucket (rented spend; owned running cost plus bought capital), so the bucket rows add up to the
    total."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(_rows(out))
    return buffer.getvalue()
