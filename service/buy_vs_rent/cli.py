"""``gpuplan buy-vs-rent``: own vs rent for one GPU type from the command line (same function as the API).

Prints a summary (headline numbers, the hybrid for a demand profile, the tornado's top inputs and every
assumption with its source); ``--csv FILE`` writes the monthly schedule, ``--svg FILE`` the chart,
``--json`` prints the whole answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
from tabulate import tabulate

from service.buy_vs_rent.compare import buy_vs_rent
from service.buy_vs_rent.own_inputs import OWN_INPUTS
from service.buy_vs_rent.schemas import BuyVsRentRequest, BuyVsRentResponse
from service.console import print_json
from service.db.store import Store
from service.server.client import add_target_options, reach
from solver import SolverError

__all__ = ["register"]


def _demand(text: str) -> list[float]:
    try:
        return [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}") from exc


def _request(args: argparse.Namespace) -> BuyVsRentRequest:
    own = {i.name: getattr(args, i.name) for i in OWN_INPUTS if getattr(args, i.name) is not None}
    rent: dict[str, Any] = {"commitment": args.commitment}
    if args.rent_price is not None:
        rent["usd_per_gpu_hour"] = args.rent_price
    body: dict[str, Any] = {
        "gpu": args.gpu,
        "horizon_months": args.horizon_months,
        "gpu_count": args.gpu_count,
        "utilization": args.utilization,
        "monthly_demand_gpu_hours": args.demand,
        "own": own,
        "rent": rent,
    }
    return msgspec.convert({k: v for k, v in body.items() if v is not None}, BuyVsRentRequest)


@contextmanager
def _native_stdout_to_stderr() -> Iterator[None]:
    """HiGHS prints a banner on the process's stdout (file descriptor 1) on its first solve; send
    anything native code writes there to stderr, so stdout holds only our output (``--json`` pipes)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _month(month: int | None) -> str:
    return "never" if month is None else f"month {month}"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _returns_rows(answer: BuyVsRentResponse) -> list[tuple[str, str]]:
    """Payback and IRR of buying instead of renting."""
    payback = f"{_month(answer.payback_month)} ({_month(answer.discounted_payback_month)})"
    irr = "none" if answer.irr_annual is None else f"{answer.irr_annual:.1%} a year"
    return [("payback (discounted)", payback), ("IRR of buying", irr)]


def _print_summary(answer: BuyVsRentResponse) -> None:
    rows: list[tuple[str, str]] = [
        ("GPU", f"{answer.gpu_name} ({answer.gpu_id}) × {answer.gpu_count}"),
        ("horizon", f"{answer.horizon_months} months"),
        ("utilisation", f"{answer.utilization:.1%}"),
        ("owned USD per busy GPU-hour", _usd(answer.owned_usd_per_busy_gpu_hour)),
        (f"rent USD per GPU-hour ({answer.commitment})", _usd(answer.rent_usd_per_gpu_hour)),
        ("rent USD per busy GPU-hour", _usd(answer.rent_usd_per_busy_gpu_hour)),
        (
            "break-even utilisation",
            f"{answer.break_even_utilization:.1%} (own cheaper {answer.break_even_own_cheaper})"
            if answer.break_even_utilization is not None
            else f"none (own {answer.break_even_own_cheaper} cheaper)",
        ),
        ("break-even month", str(answer.break_even_month) if answer.break_even_month is not None else "none"),
        ("NPV own (USD)", _usd(answer.npv_own_usd)),
        ("NPV rent (USD)", _usd(answer.npv_rent_usd)),
        ("total own (USD, undiscounted)", _usd(answer.total_own_usd)),
        ("total rent (USD, undiscounted)", _usd(answer.total_rent_usd)),
        *_returns_rows(answer),
    ]
    if answer.hybrid is not None:
        h = answer.hybrid
        rows += [
            ("hybrid: own / peak GPUs", f"{h.owned_gpus} / {h.peak_gpus} (reserved {h.reserved_gpus})"),
            ("hybrid NPV (USD)", _usd(h.npv_hybrid_usd)),
            ("all-own NPV / all-rent NPV (USD)", f"{_usd(h.npv_all_own_usd)} / {_usd(h.npv_all_rent_usd)}"),
        ]
    print(tabulate(rows, tablefmt="plain"))
    print(f"\nrecommendation: {answer.recommendation.choice.upper()} — {answer.recommendation.reason}")
    if answer.rent_offer is not None:
        o = answer.rent_offer
        print(f"rent offer: {o.provider} {o.instance_type} ({o.region}), offer {o.offer_id}")
    print("\nlargest sensitivities (own advantage = NPV rent − NPV own, inputs ±20 %):")
    print(
        tabulate(
            [
                (
                    b.input,
                    f"{b.low_value:g}",
                    f"{b.high_value:g}",
                    _usd(b.own_advantage_at_low_usd),
                    _usd(b.own_advantage_at_high_usd),
                )
                for b in answer.sensitivity.tornado[:6]
            ],
            headers=["input", "low", "high", "advantage at low", "advantage at high"],
        )
    )
    print("\nassumptions:")
    print(
        tabulate(
            [(a.name, f"{a.value:g}", a.unit, a.source, a.citation) for a in answer.assumptions],
            headers=["name", "value", "unit", "source", "citation"],
            maxcolwidths=[None, None, None, None, 70],
        )
    )


def _write_files(answer: BuyVsRentResponse, csv: str | None, svg: str | None) -> None:
    """``--csv`` and ``--svg``: the monthly schedule and the chart (matplotlib is imported only for them:
    it costs every other command a second of start-up)."""
    from service.buy_vs_rent.formats import cumulative_cost_svg, monthly_csv

    if csv is not None:
        Path(csv).write_text(monthly_csv(answer), encoding="utf-8", newline="")
    if svg is not None:
        Path(svg).write_bytes(cumulative_cost_svg(answer))


def _cmd_buy_vs_rent(args: argparse.Namespace) -> int:
    try:
        request = _request(args)
    except msgspec.ValidationError as exc:
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 2
    try:
        with reach(args) as where, _native_stdout_to_stderr():
            if isinstance(where, Store):
                answer = buy_vs_rent(where.snapshot, request)
            else:  # the CSV and the chart are drawn here from the answer, as the server draws them
                answer = where.post("/v1/buy-vs-rent", BuyVsRentResponse, request)
    except SolverError as exc:
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 1
    _write_files(answer, args.csv, args.svg)
    if args.json:
        print_json(answer)
    else:
        _print_summary(answer)
        for label, path in (("CSV", args.csv), ("SVG", args.svg)):
            if path is not None:
                print(f"\n{label} written to {path}")
    return 0


def register(subparsers: Any) -> None:
    """Add the ``buy-vs-rent`` subcommand to the ``gpuplan`` parser."""
    parser = subparsers.add_parser(
        "buy-vs-rent",
        help="own vs rent one GPU type: cash flows, NPV, break-even, sensitivity, hybrid",
        description="Arguments mirror POST /v1/buy-vs-rent; ownership inputs left out default from the "
        "ownership sheet (each with its source).",
    )
    add_target_options(parser)
    parser.add_argument("--gpu", required=True, help="one GPU: id, name or alias (e.g. h100-sxm)")
    parser.add_argument("--horizon-months", type=int, required=True, help="months compared (1-240)")
    parser.add_argument(
        "--gpu-count", type=int, help="GPUs bought or rented (default with --demand: the peak)"
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--utilization", type=float, help="busy share of the hours, in (0, 1]")
    mode.add_argument(
        "--demand", type=_demand, help="busy GPU-hours per month, comma-separated (repeated to the horizon)"
    )
    for item in OWN_INPUTS:  # each ownership input's option, as described in OwnInputs
        parser.add_argument(item.flag, dest=item.name, type=float, help=item.help)
    parser.add_argument("--rent-price", type=float, help="rent USD per GPU-hour (default: cheapest offer)")
    parser.add_argument("--commitment", choices=["on_demand", "1y", "3y"], default="on_demand")
    parser.add_argument("--csv", metavar="FILE", help="write the monthly schedule as CSV")
    parser.add_argument("--svg", metavar="FILE", help="write the cumulative cost chart as SVG")
    parser.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    parser.set_defaults(func=_cmd_buy_vs_rent)
