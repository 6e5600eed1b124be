"""``gpuplan portfolio FILE``: plan a portfolio from a JSON file (the POST /v1/portfolios body) through the
same service as the API (or the running server that holds the database), and print the schedule, the
spend per bucket, what to buy and what binds; ``--json`` prints the API's answer, ``--csv`` its CSV."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec
from tabulate import tabulate

from service.console import print_json, read_json_body
from service.db.store import Store
from service.plans.cost_text import money
from service.plans.pipeline import PlanService
from service.portfolios.logic import PortfolioService, schedule_csv
from service.portfolios.schemas import BucketOut, PortfolioOut, PortfolioRequest
from service.server.client import ApiClient, add_target_options, reach
from solver import InfeasibleJob, InfeasiblePortfolio

__all__ = ["register"]


class _Problem(msgspec.Struct):
    detail: str
    jobs: list[InfeasibleJob] = []


def _via_server(server: ApiClient, request: PortfolioRequest) -> PortfolioOut:
    status, body = server.exchange(
        "POST",
        "/v1/portfolios",
        content=msgspec.json.encode(request),
        content_type="application/json",
        accept=(201, 422),
    )
    if status == 422:
        problem = msgspec.json.decode(body, type=_Problem)
        raise InfeasiblePortfolio(problem.detail, problem.jobs)
    return msgspec.json.decode(body, type=PortfolioOut)


def _schedule(out: PortfolioOut) -> str:
    rows: list[tuple[str, ...]] = []
    for j in out.jobs:
        rows.append((j.job, j.start[:16], j.end[:16], f"{j.gpu_count} x {j.gpu}", j.source, j.provider or "owned",
                     money(j.cost_usd), j.why))  # fmt: skip
        rows.extend(
            (f"stage {k + 1}/{len(j.stages)}", st.start[:16], st.end[:16], f"{j.gpu_count} x {j.gpu}", j.source,
             j.provider or "owned", money(st.cost_usd),
             f"bucket {st.bucket}: {st.share:.0%} of the work, {st.hours:,.1f} h busy")
            for k, st in enumerate(j.stages if j.split else [])
        )  # fmt: skip
    return tabulate(
        rows, headers=["job", "start", "end", "GPUs", "source", "from", "cost", "why not the cheapest alone"]
    )


def _owned(b: BucketOut) -> str:
    return ", ".join(
        f"{b.owned_busy_gpus[g]}/{n} {g} ({b.owned_utilization[g]:.0%})" for g, n in b.owned_gpus.items()
    )


def _buckets(out: PortfolioOut) -> str:
    rows = [
        (
            b.bucket,
            b.start[:10],
            _owned(b) or "-",
            b.rented_gpus,
            money(b.rented_usd),
            money(b.owned_usd),
            money(b.capital_usd),
            money(b.total_usd),
        )
        for b in out.buckets
    ]
    headers = [
        "bucket",
        "from",
        "owned busy (utilisation)",
        "rented GPUs",
        "rented",
        "owned",
        "capital",
        "total",
    ]
    return tabulate(rows, headers=headers)


def _print(out: PortfolioOut) -> None:
    jobs = f"{len(out.jobs)} job{'' if len(out.jobs) == 1 else 's'}"
    left = f" ({len(out.dropped)} left out)" if out.dropped else ""
    print(
        f"portfolio {out.portfolio_id}: {jobs}{left}, {out.horizon.buckets} {out.horizon.bucket}s from {out.horizon.start}"
    )
    print(_schedule(out))
    print()
    print(_buckets(out))
    for buy in out.buy:
        print(
            f"\nbuy {buy.units} unit(s) = {buy.gpus} x {buy.gpu} ({money(buy.usd)} over the horizon): {buy.rule}"
        )
    for d in out.dropped:
        print(f"left out: {d.job} (priority {d.priority}): {d.reason}")
    for b in out.binding:
        print(
            f"binding: {b.kind} {b.name}"
            + (f" in bucket {b.bucket}" if b.bucket is not None else "")
            + f": {b.detail}"
        )
    print(
        f"\ntotal {money(out.total_usd)}; each job alone on the rented market {money(out.alone_usd)}; "
        f"saving {money(out.saving_usd)}"
    )
    s = out.solver
    print(
        f"solver: {s.status}, gap {s.gap if s.gap is not None else '-'}, {s.variables} variables, {s.solve_ms:,.0f} ms ({s.backend})"
    )


def _cmd_portfolio(args: argparse.Namespace) -> int:
    request: PortfolioRequest = read_json_body(args.portfolio, PortfolioRequest, "portfolio")
    try:
        with reach(args) as where:
            out = (
                PortfolioService(where, PlanService(where)).create(request)
                if isinstance(where, Store)
                else _via_server(where, request)
            )
    except InfeasiblePortfolio as exc:
        print(f"gpuplan: {exc}", file=sys.stderr)
        for job in exc.jobs:
            fixes = "; ".join(f.detail for f in job.fixes) or "no fix found"
            print(f"  {job.job}: {job.reason}; fix: {fixes}", file=sys.stderr)
        return 3
    if args.json:
        print_json(out)
    elif args.csv:
        sys.stdout.write(schedule_csv(out))
    else:
        _print(out)
    return 0


def register(sub: Any) -> None:
    """Add the ``portfolio`` subcommand to the CLI's subparsers."""
    parser = sub.add_parser(
        "portfolio",
        help="plan a portfolio of jobs and serving (a POST /v1/portfolios JSON body in a file, or - for stdin)",
    )
    parser.add_argument(
        "portfolio", help="JSON file with the horizon, jobs, serving, owned GPUs, caps and budgets"
    )
    add_target_options(parser)
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the portfolio as JSON")
    shown.add_argument("--csv", action="store_true", help="print the schedule as CSV")
    parser.set_defaults(func=_cmd_portfolio)
