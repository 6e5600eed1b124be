"""Buy vs rent for one GPU type, shared by the HTTP API (``POST /v1/buy-vs-rent``) and the CLI.

The arithmetic and its conventions are in ``pricing.ownership.tco`` (owned cost, cash flows, NPV, break-even),
``pricing.ownership.sensitivity`` (grid, tornado) and ``solver.optimise.hybrid`` (own + rent MILP); defaults come
from the current ownership sheet (``pricing.ownership.defaults``). ``service.buy_vs_rent.inputs`` reads
what a request needs from the catalog snapshot and fills every input from the request or a sourced
default; this module assembles the answer with every number's source in ``assumptions``.

Service conventions on top of ``pricing.ownership.tco``:

* ``utilization`` mode: a fleet of ``gpu_count`` GPUs, each busy ``utilization`` × 730 hours a month.
* ``monthly_demand_gpu_hours`` mode: the list (repeated to fill the horizon when shorter) is the
  fleet's busy GPU-hours per month; the owned fleet is ``gpu_count`` GPUs (default: enough for the
  peak month) and the hybrid MILP chooses how many to own, renting the rest.
* Rent: ``rent.usd_per_gpu_hour`` as given (for a commitment, the committed rate), else the cheapest
  current offer for the GPU per GPU-hour (on-demand instance price / GPUs per instance), less the
  commitment discount of the offer's provider.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from pricing import (
    HOURS_PER_MONTH,
    BreakEven,
    Comparison,
    MonthValue,
    OwnershipInputs,
    RentBilling,
    Scenario,
    annualised_capital_usd,
    break_even_utilization,
    busy_energy_usd_per_hour,
    compare,
    fixed_usd_per_gpu_hour,
    hybrid_coefficients,
    idle_energy_usd_per_hour,
    investment_returns,
    monthly_rate,
    own_cash_flows,
    owned_usd_per_busy_gpu_hour,
    schedule_values,
    sensitivity_grid,
    tornado,
)
from service.buy_vs_rent.inputs import rent_price, resolve_demand, resolve_gpu, resolve_inputs, sheet_rows
from service.buy_vs_rent.schemas import (
    Assumption,
    BuyVsRentRequest,
    BuyVsRentResponse,
    HybridOut,
    MonthRow,
    Recommendation,
    Sensitivity,
)
from service.db.snapshot import CatalogSnapshot
from solver import FleetCost, HybridProblem, solve_hybrid

__all__ = ["buy_vs_rent"]


def _derived(inputs: OwnershipInputs, utilization: float, *, given: bool) -> list[Assumption]:
    def item(name: str, value: float, unit: str, how: str) -> Assumption:
        return Assumption(name=name, value=value, unit=unit, source="derived", citation=how)

    return [
        item("hours_per_month", HOURS_PER_MONTH, "hours", "8,760 hours a year / 12"),
        item(
            "capital_usd_per_gpu",
            inputs.capital_usd_per_gpu,
            "USD per GPU",
            "purchase price × server overhead",
        ),
        item(
            "annualised_capital_usd_per_gpu",
            annualised_capital_usd(inputs),
            "USD per GPU-year",
            "straight line (discount rate 0) or capital recovery with residual value",
        ),
        item("life_months", float(inputs.life_months), "months", "round(12 × useful life), at least 1"),
        item("monthly_discount_rate", monthly_rate(inputs.discount_rate), "per month", "(1 + r)^(1/12) − 1"),
        item(
            "fixed_usd_per_gpu_hour",
            fixed_usd_per_gpu_hour(inputs),
            "USD per provisioned GPU-hour",
            "(annualised capital + maintenance) / 8,760 + colocation kW × USD/kW-month / 730",
        ),
        item(
            "busy_energy_usd_per_hour",
            busy_energy_usd_per_hour(inputs),
            "USD per GPU-hour",
            "kW × load fraction × PUE × USD/kWh",
        ),
        item(
            "idle_energy_usd_per_hour",
            idle_energy_usd_per_hour(inputs),
            "USD per GPU-hour",
            "kW × idle power fraction × PUE × USD/kWh",
        ),
        Assumption(name="utilization", value=utilization, unit="fraction", source="request", citation="given")
        if given
        else item("utilization", utilization, "fraction", "busy GPU-hours / (GPUs × 730 × months)"),
    ]


def _fleet_flows(inputs: OwnershipInputs, fleet: FleetCost, rent: float, billing: RentBilling) -> list[float]:
    """Undiscounted monthly cash flows (months 0..H) of one hybrid fleet."""
    own = own_cash_flows(inputs, gpus=fleet.owned_gpus, busy_gpu_hours=fleet.served_gpu_hours)
    if billing == "reserved":
        rented = [fleet.reserved_gpus * HOURS_PER_MONTH * rent for _ in fleet.rented_gpu_hours]
    else:
        rented = [hours * rent for hours in fleet.rented_gpu_hours]
    return [sum(own[0]), *(sum(own[m]) + rented[m - 1] for m in range(1, len(own)))]


def _hybrid(
    inputs: OwnershipInputs, demand: list[float], rent: float, billing: RentBilling
) -> tuple[HybridOut, list[float]]:
    coefficients = hybrid_coefficients(inputs, horizon_months=len(demand), rent_usd_per_gpu_hour=rent)
    problem = HybridProblem(
        demand_gpu_hours=demand,
        hours_per_gpu_month=HOURS_PER_MONTH,
        owned_fixed_usd_per_gpu=coefficients.owned_fixed_usd_per_gpu,
        owned_busy_usd_per_hour=coefficients.owned_busy_usd_per_hour,
        rent_usd_per_hour=coefficients.rent_usd_per_hour,
        rent_billing=billing,
        reserved_usd_per_gpu=coefficients.reserved_usd_per_gpu,
    )
    result = solve_hybrid(problem)
    flows = {
        name: _fleet_flows(inputs, f, rent, billing)
        for name, f in (("best", result.best), ("own", result.all_own), ("rent", result.all_rent))
    }
    out = HybridOut(
        owned_gpus=result.best.owned_gpus,
        reserved_gpus=result.best.reserved_gpus,
        peak_gpus=problem.peak_gpus,
        owned_gpu_hours=math.fsum(result.best.served_gpu_hours),
        rented_gpu_hours=math.fsum(result.best.rented_gpu_hours),
        npv_hybrid_usd=result.best.cost_usd,
        npv_all_own_usd=result.all_own.cost_usd,
        npv_all_rent_usd=result.all_rent.cost_usd,
        total_hybrid_usd=math.fsum(flows["best"]),
        total_all_own_usd=math.fsum(flows["own"]),
        total_all_rent_usd=math.fsum(flows["rent"]),
        solver=result.outcome,
    )
    return out, flows["best"]


def _money(value: float) -> str:
    return f"${value:,.0f}"


class Headline(msgspec.Struct, frozen=True, kw_only=True):
    """The numbers the recommendation weighs (all in the answer too)."""

    npv_own_usd: float
    npv_rent_usd: float
    horizon_months: int
    discount_rate: float
    owned_usd_per_busy_gpu_hour: float
    rent_usd_per_busy_gpu_hour: float
    utilization: float
    break_even_month: int | None


def _recommend(
    headline: Headline, gpu_name: str, gpus: int, hybrid: HybridOut | None, break_even: BreakEven
) -> Recommendation:
    own, rent = headline.npv_own_usd, headline.npv_rent_usd
    options: list[tuple[Literal["own", "rent", "hybrid"], float]] = [("own", own), ("rent", rent)]
    if hybrid is not None and 0 < hybrid.owned_gpus < hybrid.peak_gpus:
        options.append(("hybrid", hybrid.npv_hybrid_usd))
    choice, best = min(options, key=lambda o: o[1])
    runner_up = min(v for k, v in options if k != choice)
    parts = [
        f"{choice} has the lowest present cost over {headline.horizon_months} months at a "
        f"{headline.discount_rate:.1%} discount rate: "
        f"{_money(best)} against {_money(runner_up)} for the next option "
        f"(own {gpus} × {gpu_name} {_money(own)}, rent {_money(rent)}"
        + (
            f", hybrid {_money(hybrid.npv_hybrid_usd)} owning {hybrid.owned_gpus} of {hybrid.peak_gpus}"
            if hybrid is not None
            else ""
        )
        + ").",
        f"Owned cost {headline.owned_usd_per_busy_gpu_hour:.2f} USD per busy GPU-hour at "
        f"{headline.utilization:.0%} utilisation vs rent {headline.rent_usd_per_busy_gpu_hour:.2f}.",
    ]
    if break_even.utilization is not None:
        parts.append(f"Owning is cheaper {break_even.own_cheaper} {break_even.utilization:.0%} utilisation.")
    else:
        parts.append(f"Owning is {break_even.own_cheaper} cheaper at any utilisation.")
    month = headline.break_even_month
    parts.append(
        f"Cumulative cost of owning falls to renting's in month {month}."
        if month is not None
        else "Cumulative cost of owning stays above renting's over the whole horizon."
    )
    return Recommendation(choice=choice, reason=" ".join(parts))


def _schedule(
    comparison: Comparison, values: list[MonthValue], hybrid_flows: list[float] | None
) -> list[MonthRow]:
    """The monthly rows with their running totals (the hybrid's where there is a demand profile),
    present values, depreciation and book value."""
    rows: list[MonthRow] = []
    cum_own = cum_rent = cum_hybrid = 0.0
    for flow, value in zip(comparison.months, values, strict=True):
        cum_own += flow.own_usd
        cum_rent += flow.rent_usd
        hybrid_usd = hybrid_flows[flow.month] if hybrid_flows is not None else None
        cum_hybrid += hybrid_usd or 0.0
        rows.append(
            MonthRow(
                month=flow.month,
                own_capital_usd=flow.own_capital_usd,
                own_opex_usd=flow.own_opex_usd,
                own_residual_usd=flow.own_residual_usd,
                own_usd=flow.own_usd,
                rent_usd=flow.rent_usd,
                cumulative_own_usd=cum_own,
                cumulative_rent_usd=cum_rent,
                hybrid_usd=hybrid_usd,
                cumulative_hybrid_usd=cum_hybrid if hybrid_usd is not None else None,
                **msgspec.structs.asdict(value),
            )
        )
    return rows


def _sensitivity(scenario: Scenario, comparison: Comparison) -> Sensitivity:
    return Sensitivity(
        measure="own advantage = NPV of renting − NPV of owning (USD; positive: owning saves)",
        base_own_advantage_usd=comparison.npv_rent_usd - comparison.npv_own_usd,
        grid=sensitivity_grid(scenario),
        tornado=tornado(scenario),
    )


_PEAK_GPUS: Final = Assumption(
    name="gpu_count",
    value=0.0,
    unit="GPUs",
    source="derived",
    citation="enough GPUs for the peak month: ⌈max demand / 730⌉",
)


def buy_vs_rent(snapshot: CatalogSnapshot, request: BuyVsRentRequest) -> BuyVsRentResponse:
    """Own vs rent (and the hybrid for a demand profile) for one GPU type."""
    gpu = snapshot.gpus[resolve_gpu(snapshot, request.gpu)]
    gpus, busy, is_profile = resolve_demand(request)
    sheets = sheet_rows(snapshot, gpu.gpu_id)
    inputs, assumptions = resolve_inputs(request, sheets.prices, sheets.defaults, gpu.tdp_w)
    rent, offer, rent_assumptions = rent_price(request, sheets.defaults, sheets.offers)
    billing: RentBilling = "per_busy_hour" if request.rent.commitment == "on_demand" else "reserved"
    scenario = Scenario(
        inputs=inputs, gpus=gpus, busy_gpu_hours=busy, rent_usd_per_gpu_hour=rent, billing=billing
    )
    comparison = compare(**msgspec.structs.asdict(scenario))
    # a utilization the user gave is reported as given (busy hours / GPU-hours only round-trips it
    # to 0.6999999999999998); from a demand profile it is derived
    given = request.utilization is not None
    utilization = scenario.mean_utilization if request.utilization is None else request.utilization
    break_even = break_even_utilization(inputs, rent, billing)
    hybrid, hybrid_flows = _hybrid(inputs, busy, rent, billing) if is_profile else (None, None)
    headline = Headline(
        npv_own_usd=comparison.npv_own_usd,
        npv_rent_usd=comparison.npv_rent_usd,
        horizon_months=request.horizon_months,
        discount_rate=inputs.discount_rate,
        owned_usd_per_busy_gpu_hour=owned_usd_per_busy_gpu_hour(inputs, utilization),
        rent_usd_per_busy_gpu_hour=rent if billing == "per_busy_hour" else rent / utilization,
        utilization=utilization,
        break_even_month=comparison.break_even_month,
    )
    if request.gpu_count is None:
        assumptions.append(msgspec.structs.replace(_PEAK_GPUS, value=float(gpus)))
    return BuyVsRentResponse(
        gpu_id=gpu.gpu_id,
        gpu_name=gpu.name,
        gpu_count=gpus,
        horizon_months=request.horizon_months,
        utilization=utilization,
        commitment=request.rent.commitment,
        rent_billing=billing,
        owned_usd_per_busy_gpu_hour=headline.owned_usd_per_busy_gpu_hour,
        rent_usd_per_gpu_hour=rent,
        rent_usd_per_busy_gpu_hour=headline.rent_usd_per_busy_gpu_hour,
        break_even_utilization=break_even.utilization,
        break_even_own_cheaper=break_even.own_cheaper,
        break_even_month=comparison.break_even_month,
        npv_own_usd=comparison.npv_own_usd,
        npv_rent_usd=comparison.npv_rent_usd,
        total_own_usd=comparison.total_own_usd,
        total_rent_usd=comparison.total_rent_usd,
        **msgspec.structs.asdict(investment_returns(comparison, inputs.discount_rate)),
        recommendation=_recommend(headline, gpu.name, gpus, hybrid, break_even),
        monthly=_schedule(comparison, schedule_values(comparison, inputs, gpus), hybrid_flows),
        sensitivity=_sensitivity(scenario, comparison),
        hybrid=hybrid,
        rent_offer=offer,
        ownership_sheet_versions=sorted(
            {p.sheet_version for p in sheets.prices} | {d.sheet_version for d in sheets.defaults}
        ),
        assumptions=[*assumptions, *rent_assumptions, *_derived(inputs, utilization, given=given)],
    )
