"""Serving fleets: the cheapest, possibly mixed, set of replicas that serves a request rate (Mélange).

A :class:`ReplicaType` is an offer × tensor-parallel degree: an instance runs ``replicas_per_instance``
replicas of ``tp`` GPUs and costs ``usd_per_instance_hour``; ``capacities[c]`` is the max requests/s
of ONE replica serving only request class ``c``. With ``λ_c = rate × share_c``, headroom ``ρ =
max_utilization`` and ``a_tc = λ_c / (cap_tc · ρ · replicas_per_instance_t)`` (the instances of type
``t`` that class ``c`` alone would keep busy), :func:`solve_fleet` solves

    minimise   Σ_t price_t · n_t
    subject to Σ_t x_tc = 1                       for every class c
               Σ_c a_tc · x_tc ≤ (1 + ε) · (n_t − u_t)   for every type t   (load ≤ ρ on its replicas)
               Σ_t gpus_t · n_t ≤ max_gpus        (only when a GPU cap is given)
               Σ_t r_t · n_t ≥ min_replicas       (only when more than one replica is asked)
               n_t ∈ {0, 1, …, N_t},  x_tc ∈ [0, 1],  x_tc absent where cap_tc = 0

where ``u_t`` is 0 unless :class:`~solver.optimise.fleet_rules.FleetRules` asks for a spare instance;
then ``u_t`` is binary, ``x_tc ≤ u_t`` and ``n_t ≥ 2 u_t`` (a used type carries its load on all its
instances but one). ``N_t = min(fewest(⌈Σ_c a_tc / (1 + ε)⌉), ⌊max_gpus / gpus_t⌋, ⌊C₁ / price_t⌋)``
(``fewest`` adds the spare and the minimum replicas of a type alone), ``C₁`` the cost of the
best single-type fleet (an optimum costs no more). ``ε = COUNT_TOLERANCE`` absorbs float noise
(``ρ·cap·k`` requests/s need exactly ``k`` replicas). Each load row is scaled so that its smallest
``a_tc`` is at least 1: HiGHS's absolute feasibility tolerance (1e-7) then cannot let a small load
ride on zero instances (a share of at most 1e-7 can, and is dropped when shares are renormalised).
The scale is at most ``_MAX_ROW_SCALE``; a load still below 1 after it (a tiny rate or share) gets
the row ``x_tc ≤ n_t`` instead, which keeps it off a type with no instances.

**Pruning (exact).** Type ``u`` is dropped when ``k`` instances of another type ``v`` stand in for
one of ``u``: ``k`` is the fewest with ``k·r_v·cap_vc ≥ r_u·cap_uc`` for every class ``u`` serves
(``v`` must serve them all), and ``k·price_v ≤ price_u`` and, under a GPU cap, ``k·gpus_v ≤ gpus_u``
(and, under ``min_replicas`` above 1, ``k·r_v ≥ r_u``; a spare instance per type survives the swap:
``u``'s load fitted on ``n_u − 1`` instances, so it fits on ``k·(n_u − 1)`` of ``v``'s).
Any fleet can then swap each ``u`` instance for ``k`` instances of ``v``, carrying ``u``'s shares
over, without raising a load, the cost or the GPU count, so an optimum survives; mutual cases (exact
ties) keep the type listed first. Typical catches: a dearer offer of the same GPU, an 8-GPU instance
dearer than eight 1-GPU ones. A rule on the price per unit of capacity alone would not be exact:
integer instances make a cheap small type win at low rates even when it is dearer per request.

:func:`best_single_type` is the cheapest one-type fleet: ``n_t = fewest(⌈Σ_c a_tc / (1 + ε)⌉)``
instances (closed form), cross-checked by the MILP restricted to that type. The mixed fleet never costs more:
that fleet is feasible for the MILP, and a time-limited (or failed) MILP answer that is worse is
replaced by it, saying so in ``outcome.message``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt
import pulp

from solver.errors import InvalidWorkload, NoFeasiblePlan, Rejection, SolverError
from solver.optimise.fleet_rules import NO_RULES, FleetRules
from solver.optimise.mip import SMALL_MILP_OPTIONS, SolveOutcome, solve
from solver.spec.serving import RequestClass, validate_mix
from solver.throughput.capacity import Capacity

__all__ = [
    "COUNT_TOLERANCE",
    "FleetResult",
    "FleetRules",
    "ReplicaType",
    "best_single_type",
    "solve_fleet",
]

_BLOCK: Final = 256
"""Rows of the dominance matrix built at once (``_BLOCK × types × classes`` floats)."""

COUNT_TOLERANCE: Final = 1e-6
"""Relative slack on instance counts: ``n`` instances may carry ``n·(1 + ε)`` instances' worth of load,
so float noise in ``rate / capacity`` (``ρ·cap·k`` requests/s on exactly ``k`` replicas) costs no
extra instance."""


class ReplicaType(msgspec.Struct, frozen=True, kw_only=True):
    """An offer × tensor-parallel degree that fits the model: what one instance costs and serves.

    ``capacities`` has one entry per request class, in the mix's order (0 requests/s: cannot serve it).
    """

    type_id: str
    gpu_id: str
    tp: int
    replicas_per_instance: int
    usd_per_instance_hour: float
    capacities: list[Capacity]
    offer_ref: str | None = None

    @property
    def gpus_per_instance(self) -> int:
        """GPUs one instance holds: ``tp × replicas_per_instance``."""
        return self.tp * self.replicas_per_instance


class FleetResult(msgspec.Struct, frozen=True, kw_only=True):
    """A fleet: instances and replicas per chosen type, where each class goes, the load and the cost.

    Only types with at least one instance appear. ``shares[t][c]`` is the share of class ``c`` routed
    to type ``t`` (each class's shares sum to 1); ``load[t]`` the utilisation of ``t``'s replicas
    (≤ ``max_utilization``). ``pruned`` maps each dominated type dropped before the MILP to the type
    whose instances stand in for it.
    """

    instances: dict[str, int]
    replicas: dict[str, int]
    shares: dict[str, list[float]]
    load: dict[str, float]
    usd_per_hour: float
    outcome: SolveOutcome
    pruned: dict[str, str] = {}


class _Problem(msgspec.Struct, frozen=True):
    """Validated inputs: per-class rates and per-type instance needs ``a_tc`` (None: cannot serve)."""

    rates: list[float]
    types: list[ReplicaType]
    needs: list[list[float | None]]
    max_utilization: float
    max_gpus: int | None
    rules: FleetRules = NO_RULES


def _ceil(value: float) -> int:
    """Fewest instances ``n`` with ``value ≤ n·(1 + ε)`` (at least one for any positive load)."""
    return max(0, math.ceil(value / (1.0 + COUNT_TOLERANCE)))


def _need(rate: float, cap: Capacity, per_instance: float) -> float | None:
    """``a_tc``: the instances class ``c`` alone keeps busy; ``None`` when the type cannot serve it. A
    positive rate never needs less than the smallest normal float (an underflow to 0 would need none)."""
    if cap.requests_per_s <= 0:
        return None
    need = rate / (cap.requests_per_s * per_instance)
    return max(need, sys.float_info.min) if rate > 0 else need


def _validate(
    classes: Sequence[RequestClass],
    requests_per_s: float,
    types: Sequence[ReplicaType],
    max_utilization: float,
    max_gpus: int | None,
    rules: FleetRules = NO_RULES,
) -> _Problem:
    validate_mix(classes)
    if not (math.isfinite(requests_per_s) and requests_per_s >= 0):
        raise InvalidWorkload("requests_per_s", f"must be a finite number >= 0, got {requests_per_s!r}")
    if not (0 < max_utilization <= 1):
        raise InvalidWorkload("max_utilization", f"must be in (0, 1], got {max_utilization!r}")
    if max_gpus is not None and max_gpus < 1:
        raise InvalidWorkload("max_gpus", f"must be at least 1, got {max_gpus}")
    if rules.min_replicas < 1:
        raise InvalidWorkload("min_replicas", f"must be at least 1, got {rules.min_replicas}")
    seen: set[str] = set()
    for t in types:
        if t.type_id in seen:
            raise ValueError(f"duplicate replica type id {t.type_id!r}")
        seen.add(t.type_id)
        if len(t.capacities) != len(classes):
            raise ValueError(
                f"{t.type_id}: {len(t.capacities)} capacities for {len(classes)} request classes"
            )
        if t.tp < 1 or t.replicas_per_instance < 1:
            raise ValueError(f"{t.type_id}: tp and replicas_per_instance must be at least 1")
        if not (math.isfinite(t.usd_per_instance_hour) and t.usd_per_instance_hour >= 0):
            raise ValueError(f"{t.type_id}: price must be a finite number >= 0")
    rates = [requests_per_s * c.share for c in classes]
    needs: list[list[float | None]] = []
    for t in types:
        per_instance = max_utilization * t.replicas_per_instance
        needs.append([_need(rate, cap, per_instance) for rate, cap in zip(rates, t.capacities, strict=True)])
    return _Problem(rates, list(types), needs, max_utilization, max_gpus, rules)


def _require_servable(problem: _Problem, classes: Sequence[RequestClass]) -> None:
    """Raise :class:`NoFeasiblePlan` when some class with requests has no type able to serve it."""
    for c, klass in enumerate(classes):
        if problem.rates[c] <= 0 or any(need[c] is not None for need in problem.needs):
            continue
        rejected: dict[str, list[Rejection]] = {}
        for t in problem.types:
            detail = f"request_mix[{c}] on {t.type_id}: {t.capacities[c].method}"
            reason = Rejection(gpu_id=t.gpu_id, reason="no_capacity", detail=detail)
            if reason not in rejected.setdefault(t.gpu_id, []):
                rejected[t.gpu_id].append(reason)
        raise NoFeasiblePlan(
            f"no replica type can serve request_mix[{c}] ({klass.input_tokens} input / "
            f"{klass.output_tokens} output tokens)",
            rejected,
        )


def _dominance(problem: _Problem, kept: Sequence[int]) -> npt.NDArray[np.bool_]:
    """``D[i, j]``: whether ``k`` instances of type ``kept[i]`` can stand in for one of ``kept[j]`` at no
    more cost (and, under a GPU cap, no more GPUs); ``k`` is the fewest covering every class ``j``
    serves (see the module docstring). Built a block of rows at a time to bound memory."""
    served = [c for c, rate in enumerate(problem.rates) if rate > 0]
    needs = np.array(
        [[problem.needs[t][c] if problem.needs[t][c] is not None else np.inf for c in served] for t in kept],
        dtype=float,
    ).reshape(len(kept), len(served))
    price = np.array([problem.types[t].usd_per_instance_hour for t in kept])
    gpus = np.array([problem.types[t].gpus_per_instance for t in kept])
    replicas = np.array([problem.types[t].replicas_per_instance for t in kept])
    stands_in = np.zeros((len(kept), len(kept)), dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for lo in range(0, len(kept), _BLOCK):
            block = needs[lo : lo + _BLOCK, None, :]  # the stand-ins v, against every u
            ratio = np.where(np.isinf(needs[None, :, :]), 0.0, block / needs[None, :, :])
            copies = np.maximum(1.0, np.ceil(ratio.max(axis=2, initial=0.0) - 1e-9))  # inf: v cannot serve
            ok = copies * price[lo : lo + _BLOCK, None] <= price[None, :]
            if problem.max_gpus is not None:
                ok &= copies * gpus[lo : lo + _BLOCK, None] <= gpus[None, :]
            if problem.rules.min_replicas > 1:  # the stand-ins keep the replica count
                ok &= copies * replicas[lo : lo + _BLOCK, None] >= replicas[None, :]
            stands_in[lo : lo + _BLOCK] = ok & np.isfinite(copies)
    return stands_in


def _dominated(problem: _Problem) -> dict[int, int]:
    """Indices of dominated types → the index of a kept type dominating each (see the module docstring).

    Types with the same needs and GPUs per instance (offers of one GPU shape) are settled first: the
    cheapest (the earliest on a tie) stands in for the others. The rest are compared pairwise: ``u``
    goes when some ``v`` dominates it strictly, or on an exact tie (mutual) when ``v`` is listed first."""
    price = [t.usd_per_instance_hour for t in problem.types]
    dropped: dict[int, int] = {}
    kept_of_shape: dict[tuple[tuple[float | None, ...], int, int], int] = {}
    for t in sorted(range(len(price)), key=lambda t: (price[t], t)):
        shape = (
            tuple(problem.needs[t]),
            problem.types[t].gpus_per_instance,
            problem.types[t].replicas_per_instance,
        )
        if shape in kept_of_shape:
            dropped[t] = kept_of_shape[shape]
        else:
            kept_of_shape[shape] = t
    kept = sorted(kept_of_shape.values())
    if kept:
        stands_in = _dominance(problem, kept)
        index = np.arange(len(kept))
        wins = stands_in & (~stands_in.T | (index[:, None] < index[None, :]))
        np.fill_diagonal(wins, False)
        for j in np.flatnonzero(wins.any(axis=0)):
            dropped[kept[j]] = kept[int(np.argmax(wins[:, j]))]
    for u, v in dropped.items():  # point at a kept type (dominance is transitive; mutual cases were ties)
        while v in dropped:
            v = dropped[v]
        dropped[u] = v
    return dropped


def _single_count(problem: _Problem, t: int) -> int | None:
    """Instances of type ``t`` alone that serve every class (closed form); None if it cannot."""
    total = 0.0
    for c, need in enumerate(problem.needs[t]):
        if problem.rates[c] <= 0:
            continue
        if need is None:
            return None
        total += need
    return problem.rules.fewest(_ceil(total), problem.types[t].replicas_per_instance)


class _Fleet(msgspec.Struct, frozen=True, kw_only=True):
    instances: dict[str, int]
    replicas: dict[str, int]
    shares: dict[str, list[float]]
    load: dict[str, float]
    usd_per_hour: float

    def result(self, outcome: SolveOutcome, pruned: dict[str, str]) -> FleetResult:
        return FleetResult(
            instances=self.instances,
            replicas=self.replicas,
            shares=self.shares,
            load=self.load,
            usd_per_hour=self.usd_per_hour,
            outcome=outcome,
            pruned=pruned,
        )


def _fleet(problem: _Problem, counts: dict[int, int], x: dict[tuple[int, int], float]) -> _Fleet:
    """Instances, replicas, shares (renormalised per class over the chosen types) and loads."""
    chosen = [t for t, n in sorted(counts.items()) if n > 0]
    n_classes = len(problem.rates)
    shares = {t: [0.0] * n_classes for t in chosen}
    for c in range(n_classes):
        weights = {t: max(0.0, x.get((t, c), 0.0)) for t in chosen if problem.needs[t][c] is not None}
        total = math.fsum(weights.values())
        for t, weight in weights.items():
            shares[t][c] = weight / total if total > 0 else 0.0
    ids = [problem.types[t].type_id for t in chosen]
    return _Fleet(
        instances={i: counts[t] for i, t in zip(ids, chosen, strict=True)},
        replicas={
            i: counts[t] * problem.types[t].replicas_per_instance for i, t in zip(ids, chosen, strict=True)
        },
        shares={i: shares[t] for i, t in zip(ids, chosen, strict=True)},
        load={
            i: problem.max_utilization
            * math.fsum(shares[t][c] * (problem.needs[t][c] or 0.0) for c in range(n_classes))
            / counts[t]
            for i, t in zip(ids, chosen, strict=True)
        },
        usd_per_hour=math.fsum(counts[t] * problem.types[t].usd_per_instance_hour for t in chosen),
    )


_Solution = tuple[SolveOutcome, dict[int, int], dict[tuple[int, int], float]]

_MAX_ROW_SCALE: Final = 1e6
"""Most a load row is scaled by: beyond it HiGHS meets coefficients it cannot take (1e300 and up fail)."""


def _row_scale(smallest: float) -> float:
    """What a load row is multiplied by so that its smallest ``a_tc`` is at least 1, at most
    :data:`_MAX_ROW_SCALE` (a need that stays below 1 gets a linking row ``x_tc ≤ n_t`` instead)."""
    if smallest * _MAX_ROW_SCALE < 1.0:
        return _MAX_ROW_SCALE
    return max(1.0, 1.0 / smallest)


def _carrying(
    model: pulp.LpProblem, problem: _Problem, t: int, n: pulp.LpVariable, xs: Sequence[pulp.LpVariable]
) -> pulp.LpVariable | pulp.LpAffineExpression:
    """The instances of type ``t`` that carry its load: all of them, or with ``spare_instance`` all but
    one whenever the type is used (``u_t`` = 1 when any share goes to it, and then ``n_t ≥ 2``)."""
    if not problem.rules.spare_instance:
        return n
    used = model.add_variable(f"u_{t}", 0, 1, "Integer")
    for i, share in enumerate(xs):
        model += share <= used, f"used_{t}_{i}"
    model += n >= 2 * used, f"spare_{t}"
    return n - used


def _count_bound(problem: _Problem, t: int, served: Sequence[int], budget: float | None) -> int:
    """The most instances of type ``t`` an optimum can hold (module docstring)."""
    replica = problem.types[t]
    upper = problem.rules.fewest(
        _ceil(math.fsum(problem.needs[t][c] or 0.0 for c in served)), replica.replicas_per_instance
    )
    if problem.max_gpus is not None:
        upper = min(upper, problem.max_gpus // replica.gpus_per_instance)
    if budget is not None and replica.usd_per_instance_hour > 0:
        upper = min(upper, math.floor(budget / replica.usd_per_instance_hour * (1.0 + COUNT_TOLERANCE)))
    return upper


def _milp(problem: _Problem, allowed: Sequence[int], budget: float | None, time_limit_s: float) -> _Solution:
    """Build and solve the MILP over the ``allowed`` type indices; counts and shares by index.

    ``budget`` (the cost of a known feasible fleet) bounds every count: ``n_t ≤ ⌊budget / price_t⌋``.
    """
    model = pulp.LpProblem("serving_fleet", pulp.LpMinimize)
    n: dict[int, pulp.LpVariable] = {}
    x: dict[tuple[int, int], pulp.LpVariable] = {}
    served = [c for c, rate in enumerate(problem.rates) if rate > 0]
    for t in allowed:
        n[t] = model.add_variable(f"n_{t}", 0, _count_bound(problem, t, served, budget), "Integer")
        for c in served:
            if problem.needs[t][c] is not None:
                x[t, c] = model.add_variable(f"x_{t}_{c}", 0, 1, "Continuous")
    model += pulp.lpSum(problem.types[t].usd_per_instance_hour * n[t] for t in allowed)
    for c in served:
        model += pulp.lpSum(x[t, c] for t in allowed if (t, c) in x) == 1, f"serve_{c}"
    for t in allowed:
        row = {c: problem.needs[t][c] or 0.0 for c in served if (t, c) in x}
        if row:
            carrying = _carrying(model, problem, t, n[t], [x[t, c] for c in row])
            scale = _row_scale(min(row.values()))  # see the module docstring
            terms = [scale * need * x[t, c] for c, need in row.items()]
            model += pulp.lpSum(terms) <= scale * (1.0 + COUNT_TOLERANCE) * carrying, f"load_{t}"
            for c in (c for c, need in row.items() if scale * need < 1.0):
                model += x[t, c] <= n[t], f"link_{t}_{c}"
    if problem.max_gpus is not None:
        gpus = pulp.lpSum(problem.types[t].gpus_per_instance * n[t] for t in allowed)
        model += gpus <= problem.max_gpus, "max_gpus"
    if problem.rules.min_replicas > 1:
        replicas = pulp.lpSum(problem.types[t].replicas_per_instance * n[t] for t in allowed)
        model += replicas >= problem.rules.min_replicas, "min_replicas"
    outcome = solve(model, time_limit_s=time_limit_s, options=SMALL_MILP_OPTIONS)
    if outcome.status not in ("optimal", "time_limited"):
        return outcome, {}, {}
    counts = {t: round(var.value() or 0.0) for t, var in n.items()}
    return outcome, counts, {key: float(var.value() or 0.0) for key, var in x.items()}


def _best_single(problem: _Problem) -> tuple[int, int] | None:
    """(type index, instances) of the cheapest one-type fleet within the GPU cap.

    Ties go to fewer GPUs, then to the type listed first.
    """
    best: tuple[float, int, int, int] | None = None
    for t, replica in enumerate(problem.types):
        count = _single_count(problem, t)
        if count is None:
            continue
        gpus = count * replica.gpus_per_instance
        if problem.max_gpus is not None and gpus > problem.max_gpus:
            continue
        key = (count * replica.usd_per_instance_hour, gpus, t, count)
        if best is None or key < best:
            best = key
    return None if best is None else (best[2], best[3])


def _no_fleet(problem: _Problem) -> NoFeasiblePlan:
    rejected: dict[str, list[Rejection]] = {}
    for t, replica in enumerate(problem.types):
        count = _single_count(problem, t)
        detail = (
            f"{replica.type_id} cannot serve every class alone"
            if count is None
            else f"{replica.type_id} alone needs {count} × {replica.gpus_per_instance} GPUs"
        )
        rejected.setdefault(replica.gpu_id, []).append(
            Rejection(gpu_id=replica.gpu_id, reason="max_gpus", detail=detail)
        )
    return NoFeasiblePlan(
        f"no fleet serves the request rate within max_gpus = {problem.max_gpus} "
        f"(min_replicas {problem.rules.min_replicas}"
        f"{', one spare instance per type' if problem.rules.spare_instance else ''})",
        rejected,
    )


def _solve(
    problem: _Problem, allowed: Sequence[int], pruned: dict[str, str], time_limit_s: float
) -> FleetResult:
    single = _best_single(problem) if len(allowed) > 1 else None
    alone = None
    if single is not None:
        t, count = single
        alone = _fleet(problem, {t: count}, {(t, c): 1.0 for c in range(len(problem.rates))})
    outcome, counts, x = _milp(problem, allowed, None if alone is None else alone.usd_per_hour, time_limit_s)
    fleet = _fleet(problem, counts, x) if outcome.status in ("optimal", "time_limited") else None
    if alone is not None and (fleet is None or alone.usd_per_hour < fleet.usd_per_hour):
        note = "the best single-type fleet beat the MILP's answer (time-limited or none) and is returned"
        outcome = msgspec.structs.replace(outcome, message="; ".join(filter(None, [outcome.message, note])))
        fleet = alone
    if fleet is None and outcome.status == "infeasible":
        raise _no_fleet(problem)
    if fleet is None:
        raise SolverError(f"serving MILP failed: {outcome.message}")
    return fleet.result(outcome, pruned)


def solve_fleet(
    classes: list[RequestClass],
    requests_per_s: float,
    types: list[ReplicaType],
    *,
    max_utilization: float,
    max_gpus: int | None = None,
    time_limit_s: float = 5.0,
    rules: FleetRules = NO_RULES,
) -> FleetResult:
    """The cheapest fleet of ``types`` serving ``requests_per_s`` split as ``classes`` (see the module doc).

    Raises :class:`~solver.errors.InvalidWorkload` for a bad mix, rate or utilisation and
    :class:`~solver.errors.NoFeasiblePlan` (with per-GPU reasons) when no type can serve some class or
    no fleet fits ``max_gpus``.
    """
    problem = _validate(classes, requests_per_s, types, max_utilization, max_gpus, rules)
    _require_servable(problem, classes)
    dropped = _dominated(problem)
    pruned = {types[u].type_id: types[v].type_id for u, v in sorted(dropped.items())}
    allowed = [t for t in range(len(types)) if t not in dropped]
    return _solve(problem, allowed, pruned, time_limit_s)


def best_single_type(
    classes: list[RequestClass],
    requests_per_s: float,
    types: list[ReplicaType],
    *,
    max_utilization: float,
    max_gpus: int | None = None,
    time_limit_s: float = 5.0,
    rules: FleetRules = NO_RULES,
) -> FleetResult | None:
    """The cheapest fleet of ONE type, in closed form: ``⌈Σ_c a_tc / (1 + ε)⌉`` instances of each type
    (every class on it), the cheapest within the GPU cap (the tests check it against the MILP on that
    type alone). Ties go to fewer GPUs, then to the type listed first.
    """
    started = time.perf_counter()
    problem = _validate(classes, requests_per_s, types, max_utilization, max_gpus, rules)
    single = _best_single(problem)
    if single is None:
        return None
    t, count = single
    fleet = _fleet(problem, {t: count}, {(t, c): 1.0 for c in range(len(problem.rates))})
    outcome = SolveOutcome(
        status="optimal",
        objective=fleet.usd_per_hour,
        best_bound=fleet.usd_per_hour,
        gap=0.0,
        solve_ms=(time.perf_counter() - started) * 1000,
        backend="closed form",
    )
    return fleet.result(outcome, {})
