"""``gpuplan plans benchmarks ID``: what to benchmark next for a stored plan (as POST
/v1/plans/{plan_id}/benchmarks), on the database or through a running server."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec
from tabulate import tabulate

from service.benchmarks.schemas import BenchmarkPlanOut
from service.benchmarks.shortlist import benchmark_shortlist
from service.console import print_json
from service.db.store import Store
from service.plans.cost_text import money
from service.plans.pipeline import PlanService
from service.server.client import add_target_options, reach

__all__ = ["register"]


def _fetch(args: argparse.Namespace) -> BenchmarkPlanOut:
    with reach(args) as where:
        if isinstance(where, Store):
            return benchmark_shortlist(PlanService(where), args.plan_id)
        _, body = where.exchange("POST", f"/v1/plans/{args.plan_id}/benchmarks", accept=(200,))
    return msgspec.json.decode(body, type=BenchmarkPlanOut)


def _print(answer: BenchmarkPlanOut, commands: int) -> None:
    band = answer.chosen_cost
    print(f"plan {answer.plan_id} ({answer.plan_type}, {answer.model})")
    print(
        f"chosen: {answer.chosen.summary}\n  {money(band.expected_usd)} "
        f"(likely {money(band.low_usd)}-{money(band.high_usd)})"
    )
    change = answer.changes
    print(
        "changed since the plan was made: "
        + ("; ".join(change.differences) if change.differences else "nothing")
    )
    if not answer.candidates:
        print("\nnothing to benchmark: no other configuration's cost band reaches the chosen one's")
        return
    rows = [
        (
            c.rank,
            f"{c.gpu_count} x {c.gpu_name}" + (f" {c.precision}" if c.precision else ""),
            c.tp,
            f"{money(c.cost.expected_usd)} ({money(c.cost.low_usd)}-{money(c.cost.high_usd)})",
            money(c.expected_saving_usd),
            money(c.benchmark_cost_usd),
            f"{c.recipe.setup_minutes + c.recipe.warmup_minutes + c.recipe.measure_minutes:,.0f}",
            f"{c.recipe.provider or 'owned'} {c.recipe.instance_type or ''}".strip(),
            "yes" if c.worth_it else "no",
        )
        for c in answer.candidates
    ]
    headers = ["#", "configuration", "tp", "cost (likely)", "saving", "benchmark", "min", "on", "worth it"]
    print("\n" + tabulate(rows, headers=headers))
    for c in answer.candidates[:commands]:
        print(f"\n#{c.rank} {c.gpu_count} x {c.gpu_name}: {c.recipe.rule}")
        if c.recipe.config is not None:
            print(f"  {c.recipe.config_file}:")
            print("\n".join(f"    {line}" for line in c.recipe.config.splitlines()))
        print("\n".join(f"  $ {line}" for line in c.recipe.commands))


def _cmd_benchmarks(args: argparse.Namespace) -> int:
    answer = _fetch(args)
    if args.json:
        print_json(answer)
    else:
        _print(answer, args.commands)
    return 0


def register(sub: Any) -> None:
    """Add ``benchmarks`` to the ``plans`` command's subparsers."""
    parser = sub.add_parser("benchmarks", help="what to benchmark next for a stored plan, with recipes")
    parser.add_argument("plan_id", help="the id POST /v1/plans returned")
    parser.add_argument(
        "--commands", type=int, default=1, metavar="N", help="print the recipes of the first N (default 1)"
    )
    add_target_options(parser)
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.set_defaults(func=_cmd_benchmarks)
