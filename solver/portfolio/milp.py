"""The portfolio MILP on PuLP + HiGHS: one placement per job, serving instances per bucket, purchase units.

Variables: a binary per job placement (option × start bucket, :mod:`solver.portfolio.placements`), an
integer count of instances per serving demand × option × bucket, and an integer count of purchase units
per buyable GPU type. A job that may split also has, per option, a binary ``z`` (it runs split on that
option) and per bucket of its window a binary ``u`` (a stage runs there, holding the option's GPUs for
the bucket) and a share ``w`` in [0, 1] of its work: ``Σ w = z``, ``u ≤ z`` and
``w·span_hours ≤ room·u`` (the window's hours in the bucket less the restart); a stage costs
``w·cost_usd`` plus its restart. With ``droppable`` each job has a binary ``d`` (left out).
Constraints: each job placed once (or dropped); each bucket's serving rate met; owned GPUs
held per type and bucket within those owned plus those bought; rented instances per availability cap
and bucket within the cap; spend per bucket within its budget. Objective: the total cost over the
horizon (job charges, serving instance-hours, owned running hours, bought capital).

The *elastic* model adds a non-negative slack to every cap, budget and owned capacity, each at a
penalty far above any cost: it always has a solution when every job has a placement, and its slacks
are the smallest change (by the penalty's measure) that makes an infeasible portfolio feasible.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

import pulp

from solver.optimise.mip import SolveOutcome, solve
from solver.portfolio.model import AvailabilityCap, JobOption, PortfolioProblem, ServingOption
from solver.portfolio.placements import Placement, Room, placements, rooms

__all__ = ["PENALTY", "Built", "build", "cap_matches", "dropped_value", "solve_built", "total_cost"]

PENALTY = 1e7
"""Cost of one unit of slack in the elastic model (an instance, a GPU, a dollar of budget × 1e-3)."""


def cap_matches(cap: AvailabilityCap, option: JobOption | ServingOption) -> bool:
    """Whether a rented option counts against ``cap``."""
    if option.acquisition != "rent":
        return False
    if cap.scope == "offer":  # an offer id, or one price kind of it (a supply id: offer:pricing)
        return option.supply_id == cap.key or option.supply_id.rsplit(":", 1)[0] == cap.key
    if cap.scope == "provider":
        return option.provider == cap.key
    return option.gpu_id == cap.key


class Built:
    """A built model: the PuLP problem and its variables, by what they stand for."""

    def __init__(self, problem: PortfolioProblem, elastic: bool, droppable: bool = False) -> None:
        self.problem = problem
        self.elastic = elastic
        self.droppable = droppable
        self.lp = pulp.LpProblem("portfolio", pulp.LpMinimize)
        self.x: list[tuple[Placement, pulp.LpVariable]] = []
        self.z: dict[tuple[int, int], pulp.LpVariable] = {}
        """A split run of (job, option)."""
        self.stages: list[tuple[int, int, Room, pulp.LpVariable, pulp.LpVariable]] = []
        """(job, option, room, u, w) of every possible stage."""
        self.drop: dict[int, pulp.LpVariable] = {}
        self.r: dict[tuple[int, int, int], pulp.LpVariable] = {}
        self.y: dict[str, pulp.LpVariable] = {}
        self.slack: dict[tuple[str, str, int], pulp.LpVariable] = {}
        self.spend: dict[int, list[pulp.LpAffineExpression]] = defaultdict(list)
        self.build_ms = 0.0

    def var(
        self, name: str, ub: float | None, cat: Literal["Continuous", "Integer", "Binary"]
    ) -> pulp.LpVariable:
        return self.lp.add_variable(name, 0, ub, cat)

    def relax(self, kind: str, name: str, bucket: int, ub: float | None = None) -> pulp.LpAffineExpression:
        """The slack of one constraint (zero in the strict model)."""
        if not self.elastic:
            return pulp.lpSum([])
        cat: Literal["Continuous", "Integer"] = "Continuous" if kind == "budget" else "Integer"
        v = self.var(f"slack_{kind}_{len(self.slack)}", ub, cat)
        self.slack[(kind, name, bucket)] = v
        return pulp.lpSum([v])


def _add_stages(b: Built, j: int) -> list[pulp.LpVariable]:
    """The split runs of job ``j`` (none unless it may split): one ``z`` per option, returned."""
    p = b.problem
    job, found = p.jobs[j], rooms(p, j)
    if not found:
        return []
    zs = []
    for o, option in enumerate(job.options):
        z = b.z[(j, o)] = b.var(f"z_{j}_{o}", 1, "Binary")
        zs.append(z)
        rate = option.cost_usd / option.hours if option.hours > 0 else 0.0
        ws = []
        for room in found:
            u = b.var(f"u_{j}_{o}_{room.bucket}", 1, "Binary")
            w = b.var(f"w_{j}_{o}_{room.bucket}", 1, "Continuous")
            b.stages.append((j, o, room, u, w))
            ws.append(w)
            b.lp += option.span_hours * w <= room.hours * u, f"room_{j}_{o}_{room.bucket}"
            b.lp += u <= z, f"stage_{j}_{o}_{room.bucket}"
            b.spend[room.bucket].append(option.cost_usd * w + rate * job.restart_hours * u)
        b.lp += pulp.lpSum(ws) == z, f"work_{j}_{o}"
    return zs


def _add_jobs(b: Built) -> None:
    p = b.problem
    for j, job in enumerate(p.jobs):
        mine = []
        for place in placements(p, j):
            v = b.var(f"x_{j}_{place.option}_{place.bucket}", 1, "Binary")
            b.x.append((place, v))
            mine.append(v)
            cost = job.options[place.option].cost_usd
            for t, share in zip(place.held, place.shares, strict=True):
                if share > 0:
                    b.spend[t].append(cost * share * v)
        mine.extend(_add_stages(b, j))
        if b.droppable:
            b.drop[j] = b.var(f"d_{j}", 1, "Binary")
            mine.append(b.drop[j])
        b.lp += pulp.lpSum(mine) == 1, f"place_{j}"


def _holding(b: Built) -> list[tuple[JobOption, int, pulp.LpVariable]]:
    """(option, bucket, binary) for every way a job may hold an option's GPUs in a bucket."""
    p = b.problem
    held = [(p.jobs[place.job].options[place.option], t, v) for place, v in b.x for t in place.held]
    held.extend((p.jobs[j].options[o], room.bucket, u) for j, o, room, u, _w in b.stages)
    return held


def _add_serving(b: Built) -> None:
    p = b.problem
    for d, demand in enumerate(p.serving):
        for t in range(p.buckets):
            rate = demand.requests_per_s[t]
            terms = []
            for k, option in enumerate(demand.options):
                ub = math.ceil(rate / option.requests_per_s) if option.requests_per_s > 0 else 0
                v = b.var(f"r_{d}_{k}_{t}", ub, "Integer")
                b.r[(d, k, t)] = v
                terms.append(option.requests_per_s * v)
                b.spend[t].append(option.usd_per_instance_hour * p.bucket_hours * v)
            b.lp += pulp.lpSum(terms) >= rate, f"serve_{d}_{t}"


def _add_buy(b: Built) -> None:
    p = b.problem
    for option in p.buy:
        v = b.var(f"buy_{len(b.y)}", option.max_units, "Integer")
        b.y[option.gpu_id] = v
        for t in range(p.buckets):
            b.spend[t].append(option.usd_per_unit / p.buckets * v)


def _owned_use(b: Built) -> dict[tuple[str, int], list[pulp.LpAffineExpression]]:
    p = b.problem
    use: dict[tuple[str, int], list[pulp.LpAffineExpression]] = defaultdict(list)
    for option, t, v in _holding(b):
        if option.acquisition == "own":
            use[(option.gpu_id, t)].append(option.gpu_count * v)
    for (d, k, t), v in b.r.items():
        serving = p.serving[d].options[k]
        if serving.acquisition == "own":
            use[(serving.gpu_id, t)].append(serving.gpus_per_instance * v)
    return use


def _add_owned(b: Built) -> None:
    p = b.problem
    owned = {pool.gpu_id: pool.gpus for pool in p.owned}
    units = {option.gpu_id: option.unit_gpus for option in p.buy}
    for (gpu, t), terms in sorted(_owned_use(b).items()):
        have = pulp.lpSum([]) + owned.get(gpu, 0)
        if gpu in b.y:
            have += units[gpu] * b.y[gpu]
        b.lp += pulp.lpSum(terms) <= have + b.relax("owned_capacity", gpu, t), f"owned_{gpu}_{t}"


def _rented_use(b: Built, cap: AvailabilityCap) -> dict[int, list[pulp.LpAffineExpression]]:
    p = b.problem
    use: dict[int, list[pulp.LpAffineExpression]] = defaultdict(list)
    for option, t, v in _holding(b):
        if cap_matches(cap, option):
            use[t].append(option.instances * v)
    for (d, k, t), v in b.r.items():
        if cap_matches(cap, p.serving[d].options[k]):
            use[t].append(pulp.lpSum([v]))
    return use


def _add_caps(b: Built) -> None:
    for c, cap in enumerate(b.problem.caps):
        name = f"{cap.scope}:{cap.key}"
        for t, terms in sorted(_rented_use(b, cap).items()):
            b.lp += pulp.lpSum(terms) <= cap.max_instances + b.relax("availability", name, t), f"cap_{c}_{t}"


def _add_budgets(b: Built) -> None:
    p = b.problem
    for t, budget in enumerate(p.budgets[: p.buckets]):
        if budget is not None:
            slack = b.relax("budget", "budget", t)
            b.lp += pulp.lpSum(b.spend[t]) <= budget + slack, f"budget_{t}"


def total_cost(b: Built) -> pulp.LpAffineExpression:
    """The total cost over the horizon (the strict model's objective)."""
    return pulp.lpSum(term for terms in b.spend.values() for term in terms)


def dropped_value(b: Built) -> pulp.LpAffineExpression:
    """The jobs left out, each weighing its ``priority + 1`` (a droppable model)."""
    return pulp.lpSum((b.problem.jobs[j].priority + 1) * d for j, d in b.drop.items())


def _objective(b: Built) -> None:
    cost = total_cost(b)
    penalties: Sequence[pulp.LpAffineExpression] = [
        (PENALTY * 1e-3 if kind == "budget" else PENALTY) * v for (kind, _n, _t), v in b.slack.items()
    ]
    b.lp += cost + pulp.lpSum(penalties)


def build(problem: PortfolioProblem, *, elastic: bool = False, droppable: bool = False) -> Built:
    """The model of ``problem`` (see the module docstring); ``elastic`` adds the penalised slacks,
    ``droppable`` a binary per job that leaves it out (the caller sets the objective that weighs it)."""
    started = time.perf_counter()
    b = Built(problem, elastic, droppable)
    _add_jobs(b)
    _add_serving(b)
    _add_buy(b)
    _add_owned(b)
    _add_caps(b)
    _add_budgets(b)
    _objective(b)
    b.build_ms = (time.perf_counter() - started) * 1000
    return b


def solve_built(b: Built) -> SolveOutcome:
    """Solve on HiGHS with the problem's time limit and relative MIP gap."""
    return solve(
        b.lp,
        time_limit_s=b.problem.time_limit_s,
        options={"mip_rel_gap": b.problem.mip_gap, "mip_allow_restart": False},
    )
