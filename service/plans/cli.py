"""``gpuplan plan workload.json``: plan a workload from a JSON file (the POST /v1/plans body), through the
same pipeline as the API."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tabulate import tabulate

from service.console import print_json, read_json_body
from service.db.store import Store
from service.plans.cost_text import money, print_costs
from service.plans.pipeline import PlanService
from service.plans.remote import plan_via_server
from service.plans.schemas import ChoiceOut, PlanOut, ReplicaOut, ServingPlanOut
from service.server.client import add_target_options, reach
from solver import Network, NoFeasiblePlan, PlanRequest

__all__ = ["register"]


def _network(network: Network) -> str:
    return (
        "no network"
        if network.network_class == "none"
        else f"{network.network_class} {network.gbps:g} Gbit/s"
    )


def _where(choice: ChoiceOut) -> str:
    """The offer (or owned nodes) chosen, with the network between instances when there are several."""
    offer, owned = choice.offer, choice.owned
    if offer is not None:
        where = (
            f"{offer.provider} {offer.instance_type} ({offer.region}, {offer.country or 'country unknown'}), "
            f"{offer.pricing.replace('_', '-')} {money(offer.price_per_hour_usd)}/h per instance"
        )
        network = offer.network
    elif owned is not None:
        where, network = f"owned, {money(owned.usd_per_busy_gpu_hour)} per busy GPU-hour", owned.network
    else:
        return ""
    return f"{where}; between instances {_network(network)}" if choice.instances > 1 else where


def _plan_rows(plan: PlanOut) -> list[tuple[str, Any]]:
    choice, estimate, cost = plan.choice, plan.estimate, plan.cost
    throughput, memory = estimate.throughput, estimate.memory
    rows: list[tuple[str, Any]] = [
        ("plan", plan.plan_id),
        ("model", f"{plan.model} ({plan.kind})"),
        (
            "choice",
            f"{choice.gpu_count} x {choice.gpu_name} in {choice.instances} instance(s), tp={choice.tp}, "
            f"sharding={choice.sharding}, recompute={choice.recompute}",
        ),
        ("from", _where(choice)),
        *([("layout", choice.layout.text())] if choice.layout else []),
        *([("MIG", choice.mig.summary)] if choice.mig else []),
        (
            "hours",
            f"{estimate.hours:,.2f} (likely {estimate.hours_band.low:,.2f}-{estimate.hours_band.high:,.2f}; "
            f"billable {cost.billable_hours:,.2f})",
        ),
        (
            "total cost",
            f"{money(cost.total_usd)} (likely {money(cost.total_usd_band.low)}-{money(cost.total_usd_band.high)})",
        ),
        (
            "throughput",
            f"{throughput.value:,.0f} {throughput.unit} ({throughput.provenance}: {throughput.workload_class} "
            f"on {throughput.stack}, {throughput.confidence} confidence)",
        ),
    ]
    if estimate.scaling is not None:
        scaling = estimate.scaling
        rows.append(
            (
                "scaling",
                f"{scaling.efficiency:.0%} of linear, {scaling.communication_fraction:.0%} of a step "
                f"communicating (bound by {scaling.bottleneck.replace('_', ' ')})",
            )
        )
    rows += [
        (
            "memory per GPU",
            f"{memory.per_gpu_gib:,.1f} of {memory.capacity_gib:g} GiB "
            f"(likely {memory.band.low_gib:,.1f}-{memory.band.high_gib:,.1f})"
            + (
                f"; measured peak {memory.measured_peak_gib:,.1f} GiB ({memory.measured_peak_source})"
                if memory.measured_peak_gib is not None
                else ""
            ),
        ),
        (
            "solver",
            f"{plan.solver.status}, {plan.solver.candidates} candidates, {plan.solver.milp_variables} on the "
            f"Pareto front, {plan.solver.total_ms:,.0f} ms",
        ),
    ]
    return rows


def _print_plan(plan: PlanOut) -> None:
    rows = _plan_rows(plan)
    print(tabulate(rows, tablefmt="plain"))
    print_costs(plan)
    if plan.alternatives:
        print("\nalternatives")
        print(
            tabulate(
                [
                    (
                        a.rank,
                        a.gpu_name or a.gpu,  # the catalog name, as the choice shows it
                        a.gpu_count,
                        a.provider or a.acquisition,
                        "" if a.provider is None else f"{a.region}, {a.country or '?'}",
                        f"{a.hours:,.1f}",
                        money(a.cost_usd),
                        a.why,
                    )
                    for a in plan.alternatives
                ],
                headers=["#", "GPU", "GPUs", "from", "where", "hours", "cost", "why it lost"],
            )
        )
    _print_below_headroom(plan)
    if plan.rejected:
        print(f"\n{len(plan.rejected)} GPU types cannot be used, e.g.:")
        for rejected in plan.rejected[:8]:
            print(f"  {rejected.gpu_name}: " + "; ".join(f"{r.reason}: {r.detail}" for r in rejected.reasons))
    for warning in plan.warnings:
        print(f"\nwarning [{warning.code}]: {warning.message}")


def against_choice(usd_below: float, hours_below: float) -> str:
    """A configuration against the chosen one in words: "$24.65 less, 19.7 h later" (never a negative
    saving: a dearer one that finishes sooner says "more" and "sooner")."""
    cost = f"{money(abs(usd_below))} {'less' if usd_below >= 0 else 'more'}"
    if abs(hours_below) < 0.05:
        return cost
    return f"{cost}, {abs(hours_below):,.1f} h {'sooner' if hours_below > 0 else 'later'}"


def _print_below_headroom(plan: PlanOut) -> None:
    """What the memory headroom costs: the configurations that fit only below it."""
    if not plan.pareto_below_headroom:
        return
    rows = [
        (e.gpu, e.gpu_count, e.provider or e.acquisition, f"{e.hours:,.1f}", money(e.cost_usd),
         f"{e.per_gpu_gib:,.1f} of {e.capacity_gib:g} GiB", f"{e.headroom:.0%}",
         against_choice(e.usd_below_choice, e.hours_below_choice))
        for e in plan.pareto_below_headroom
    ]  # fmt: skip
    print("\nwhat the memory headroom costs (these fit only below it; never chosen)")
    headers = ["GPU", "GPUs", "from", "hours", "cost", "memory per GPU", "free", "against the choice"]
    print(tabulate(rows, headers=headers))


def _print_fleet_header(plan: ServingPlanOut) -> None:
    """The plan, model, cost, GPUs and solver lines above the fleet's table."""
    print(
        tabulate(
            [
                ("plan", plan.plan_id),
                (
                    "model",
                    f"{plan.model} (serving {plan.requests_per_s:g} requests/s, load <= {plan.max_utilization:.0%})",
                ),
                (
                    "cost",
                    f"{money(plan.cost.usd_per_hour)}/h, {money(plan.cost.total_usd)} over {plan.cost.hours:g} h",
                ),
                ("GPUs", f"{plan.choice.gpus}; {plan.choice.why}"),
                (
                    "solver",
                    f"{plan.solver.status}, {plan.solver.replica_types} replica types, {plan.solver.total_ms:,.0f} ms",
                ),
            ],
            tablefmt="plain",
        )
    )


def _print_fleet(plan: ServingPlanOut) -> None:
    _print_fleet_header(plan)
    print("\nfleet")
    print(
        tabulate(
            [
                (
                    r.mig.summary if r.mig else r.gpu_name,
                    r.precision,
                    r.tp,
                    r.replicas,
                    r.instances,
                    r.gpus,
                    f"{r.offer.provider} ({r.offer.region})" if r.offer else r.acquisition,
                    money(r.usd_per_hour),
                    f"{r.load:.0%}",
                    _latency_text(r),
                    ", ".join(
                        f"{c.input_tokens}/{c.output_tokens}: {c.share_of_class:.0%}"
                        for c in r.classes
                        if c.share_of_class > 0
                    ),
                )
                for r in plan.choice.replicas
            ],
            headers=[
                "GPU",
                "precision",
                "tp",
                "replicas",
                "instances",
                "GPUs",
                "from",
                "$/h",
                "load",
                "TTFT/TPOT p90 ms",
                "request sizes served (in/out: share)",
            ],
        )
    )
    _print_fleet_footer(plan)


def _latency_text(replica: ReplicaOut) -> str:
    """The simulated p90 TTFT and TPOT of one replica at its load (``-`` when not simulated)."""
    latency = replica.latency
    if latency is None:
        return "-"
    text = f"{latency.ttft_ms.p90:,.0f} / {latency.tpot_ms.p90:,.1f}"
    return text if latency.stable else f"{text} (not sustained)"


def _print_fleet_footer(plan: ServingPlanOut) -> None:
    if plan.best_single_type and plan.saving_vs_single_type:
        single = plan.best_single_type
        print(
            f"\nbest single type: {single.replicas} x {single.gpu} (tp={single.tp}) at {money(single.usd_per_hour)}/h; "
            f"the fleet saves {money(plan.saving_vs_single_type.usd_per_hour)}/h "
            f"({plan.saving_vs_single_type.fraction:.1%})"
        )
    for warning in plan.warnings:
        print(f"\nwarning [{warning.code}]: {warning.message}")


def _cmd_plan(args: argparse.Namespace) -> int:
    request: PlanRequest = read_json_body(args.workload, PlanRequest, "workload")
    try:
        with reach(args) as where:
            if isinstance(where, Store):
                plan = PlanService(where).create(request)
            else:
                plan = plan_via_server(where, request)
    except NoFeasiblePlan as exc:
        print(f"gpuplan: {exc}", file=sys.stderr)
        for gpu, reasons in exc.rejected.items():
            print(f"  {gpu}: " + "; ".join(f"{r.reason}: {r.detail}" for r in reasons), file=sys.stderr)
        return 3
    if args.json:
        print_json(plan)
    elif isinstance(plan, ServingPlanOut):
        _print_fleet(plan)
    else:
        _print_plan(plan)
    return 0


def register(sub: Any) -> None:
    """Add the ``plan`` subcommand to the CLI's subparsers."""
    parser = sub.add_parser(
        "plan", help="plan a workload (a POST /v1/plans JSON body in a file, or - for stdin)"
    )
    parser.add_argument("workload", help="JSON file with the workload, work and constraints")
    add_target_options(parser)
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=_cmd_plan)
