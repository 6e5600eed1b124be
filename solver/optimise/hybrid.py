"""Buy + rent: how many GPUs to own for a monthly demand profile, renting the rest (a MILP).

Pure: the costs come in as present values (``pricing.ownership.tco.hybrid_coefficients`` computes them), so the
model is linear. With d_m the demand of month m (GPU-hours), c the hours one GPU gives in a month:

* ``n`` (integer, 0..peak) owned GPUs; ``s_m`` ≥ 0 the GPU-hours they serve in month m (s_m ≤ c·n,
  s_m ≤ d_m); ``r_m`` = d_m − s_m the GPU-hours rented (solved as shares of d_m, so every row is
  scaled alike whatever the month's demand).
* Hourly (on-demand) rent: minimise F·n + Σ_m (e_m·s_m + p_m·r_m), with F the fixed cost of an owned
  GPU over the horizon (capital, replacements, terminal credit, colocation, maintenance, idle energy),
  e_m the extra energy of a busy owned GPU-hour and p_m the rent of a GPU-hour.
* Reserved rent (a 1- or 3-year commitment billed every hour): an integer ``k`` of reserved GPUs
  with r_m ≤ c·k, and K·k (K: one GPU reserved for the horizon) replaces Σ p_m·r_m.
* ``peak`` = ⌈max_m d_m / c⌉; all-own is n = peak (k = 0), all-rent is n = 0 (k = peak).

``enumerate_hybrid`` tries every n (and k) with the best split per month: the test oracle the MILP
must agree with.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec
import pulp

from solver.errors import SolverError
from solver.optimise.mip import SolveOutcome, solve

__all__ = ["FleetCost", "HybridProblem", "HybridResult", "enumerate_hybrid", "evaluate_fleet", "solve_hybrid"]

_TOLERANCE = 1e-9
"""GPU-months of demand a fleet may fall short by (float noise): ``g`` GPUs serve ``d`` GPU-hours when
``d ≤ c·(g + tolerance)``, in the peak, the oracle and the MILP alike."""


_EXACT: Final = {"mip_rel_gap": 1e-9, "mip_abs_gap": 1e-9}
"""HiGHS stops at a relative gap of 1e-4 by default, which can keep a fleet costing a few dollars more
in a million (731 vs 1,462 GPU-hours a month: two owned GPUs at $1,462.99999 against one at
$1,462.99268); one or two integers close at any gap in microseconds."""


class HybridProblem(msgspec.Struct, frozen=True, kw_only=True):
    """A monthly demand profile and the present-value cost coefficients of owning and renting."""

    demand_gpu_hours: list[float]
    hours_per_gpu_month: float
    owned_fixed_usd_per_gpu: float
    owned_busy_usd_per_hour: list[float]
    rent_usd_per_hour: list[float]
    rent_billing: Literal["per_busy_hour", "reserved"]
    reserved_usd_per_gpu: float = 0.0

    @property
    def peak_gpus(self) -> int:
        peak = max(self.demand_gpu_hours, default=0.0)
        return math.ceil(peak / self.hours_per_gpu_month - _TOLERANCE) if peak > 0 else 0


class FleetCost(msgspec.Struct, frozen=True, kw_only=True):
    """One fleet choice: owned and reserved GPUs, the monthly split and its present-value cost."""

    owned_gpus: int
    reserved_gpus: int
    served_gpu_hours: list[float]
    rented_gpu_hours: list[float]
    cost_usd: float


class HybridResult(msgspec.Struct, frozen=True, kw_only=True):
    """The optimal hybrid, the all-own and all-rent fleets, and how the solve went."""

    best: FleetCost
    all_own: FleetCost
    all_rent: FleetCost
    outcome: SolveOutcome | None


def evaluate_fleet(problem: HybridProblem, owned: int, reserved: int = 0) -> FleetCost | None:
    """The cheapest monthly split for a fixed fleet; None if it cannot serve the demand."""
    cap = problem.hours_per_gpu_month
    served: list[float] = []
    rented: list[float] = []
    cost = problem.owned_fixed_usd_per_gpu * owned
    for m, demand in enumerate(problem.demand_gpu_hours):
        busy_cost = problem.owned_busy_usd_per_hour[m]
        if problem.rent_billing == "per_busy_hour":
            own_first = busy_cost <= problem.rent_usd_per_hour[m]
            s = min(demand, cap * owned) if own_first else 0.0
            r = demand - s
            cost += busy_cost * s + problem.rent_usd_per_hour[m] * r
        else:
            reserved_cap = cap * reserved
            if demand > cap * (owned + reserved + _TOLERANCE):  # the tolerance peak_gpus uses
                return None
            # reserved hours are paid for already: serve with owned GPUs only what they must, or all
            # they can when a busy owned hour costs less than nothing extra (never, in practice)
            s = max(0.0, demand - reserved_cap) if busy_cost >= 0 else min(demand, cap * owned)
            r = demand - s
            cost += busy_cost * s
        served.append(s)
        rented.append(r)
    if problem.rent_billing == "reserved":
        cost += problem.reserved_usd_per_gpu * reserved
    return FleetCost(
        owned_gpus=owned,
        reserved_gpus=reserved,
        served_gpu_hours=served,
        rented_gpu_hours=rented,
        cost_usd=cost,
    )


def _all_own(problem: HybridProblem) -> FleetCost:
    fleet = evaluate_fleet(problem, problem.peak_gpus, 0)
    assert fleet is not None
    return fleet


def _all_rent(problem: HybridProblem) -> FleetCost:
    reserved = problem.peak_gpus if problem.rent_billing == "reserved" else 0
    fleet = evaluate_fleet(problem, 0, reserved)
    assert fleet is not None
    return fleet


def enumerate_hybrid(problem: HybridProblem) -> HybridResult:
    """Every owned count 0..peak (and reserved count, for reserved rent): the oracle."""
    peak = problem.peak_gpus
    candidates: list[FleetCost] = []
    for owned in range(peak + 1):
        if problem.rent_billing == "reserved":
            needed = [max(0.0, d - problem.hours_per_gpu_month * owned) for d in problem.demand_gpu_hours]
            least = math.ceil(max(needed, default=0.0) / problem.hours_per_gpu_month - _TOLERANCE)
            choices = range(max(least, 0), peak - owned + 1)
        else:
            choices = range(1)
        for reserved in choices:
            fleet = evaluate_fleet(problem, owned, reserved)
            if fleet is not None:
                candidates.append(fleet)
    best = min(candidates, key=lambda f: (f.cost_usd, f.owned_gpus, f.reserved_gpus))
    return HybridResult(best=best, all_own=_all_own(problem), all_rent=_all_rent(problem), outcome=None)


def solve_hybrid(problem: HybridProblem, *, time_limit_s: float = 5.0) -> HybridResult:
    """The MILP above on HiGHS (through ``solver.optimise.mip.solve``)."""
    peak = problem.peak_gpus
    cap = problem.hours_per_gpu_month
    model = pulp.LpProblem("buy_plus_rent", pulp.LpMinimize)
    owned = model.add_variable("owned_gpus", 0, peak, "Integer")
    reserved = (
        model.add_variable("reserved_gpus", 0, peak, "Integer")
        if problem.rent_billing == "reserved"
        else None
    )
    objective = [problem.owned_fixed_usd_per_gpu * owned]
    for m, demand in enumerate(problem.demand_gpu_hours):
        if demand <= 0:
            continue
        # The month's split as shares of its demand (owned σ, rented ρ; σ + ρ = 1), each capacity row
        # divided by the demand: every coefficient then lies in [0, 1] and HiGHS's absolute feasibility
        # tolerance (1e-7) is relative to the demand, so a small demand cannot ride on zero GPUs. With
        # GPU-hours as variables a demand of 1e-6 had bounds of 1e-6 and rows scaled by 1e6, and HiGHS's
        # presolve proved a fleet one GPU short optimal. One GPU's share min(1, c/d) admits for integer
        # counts exactly what c·n ≥ d·σ does; c·tolerance/d ≥ 1 (a demand under the fleet tolerance)
        # needs no GPU, as in ``peak_gpus``.
        owned_share = model.add_variable(f"owned_share_{m + 1}", 0, 1, "Continuous")
        rented_share = model.add_variable(f"rented_share_{m + 1}", 0, 1, "Continuous")
        model += owned_share + rented_share == 1, f"demand_{m + 1}"
        if demand > cap * _TOLERANCE:  # else no GPU is needed (and 5e-324 would make the slack infinite)
            per_gpu, slack = min(1.0, cap / demand), cap * _TOLERANCE / demand
            model += owned_share - per_gpu * owned <= slack, f"owned_capacity_{m + 1}"
            if reserved is not None:
                model += rented_share - per_gpu * reserved <= slack, f"reserved_capacity_{m + 1}"
        busy = problem.owned_busy_usd_per_hour[m] * demand * owned_share
        if reserved is not None:
            objective.append(busy)
        else:
            objective.append(busy + problem.rent_usd_per_hour[m] * demand * rented_share)
    if reserved is not None:
        objective.append(problem.reserved_usd_per_gpu * reserved)
    model += pulp.lpSum(objective)
    outcome = solve(model, time_limit_s=time_limit_s, options=_EXACT)
    if outcome.status not in ("optimal", "time_limited"):
        raise SolverError(
            f"the buy + rent model could not be solved: {outcome.status} {outcome.message}".strip()
        )
    n = round(owned.value() or 0.0)
    k = round(reserved.value() or 0.0) if reserved is not None else 0
    # Re-evaluate the integer fleet exactly (the LP split is optimal for it; this removes float noise).
    best = evaluate_fleet(problem, n, k)
    if best is None:
        raise SolverError("the buy + rent model returned a fleet that cannot serve the demand")
    return HybridResult(best=best, all_own=_all_own(problem), all_rent=_all_rent(problem), outcome=outcome)
