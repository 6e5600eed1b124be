"""Turn a portfolio request into the solver's :class:`~solver.PortfolioProblem`, on one catalog snapshot.

Jobs and serving workloads go through the plan pipeline's own validation and enumeration
(:meth:`~service.plans.pipeline.PlanService.job_candidates`, ``serving_types``), so a portfolio job means
what the same body means to ``POST /v1/plans`` and reuses the per-snapshot plan cache. Owned GPUs are
priced at their marginal running cost (the capital is spent): the given ``usd_per_gpu_hour``, else the
ownership sheet's energy of a busy hour. A GPU type that may be bought costs its purchase unit's fixed
cost per provisioned hour (capital annualised over its life with the discount rate, maintenance,
colocation: ``pricing.fixed_usd_per_gpu_hour``) over the horizon's hours. Every error names its field
(``jobs[2].plan.tokens``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import msgspec

from pricing import (
    OwnershipInputs,
    busy_energy_usd_per_hour,
    choose_defaults,
    fixed_usd_per_gpu_hour,
    purchase_unit,
)
from service.catalog.gpu_names import one_gpu
from service.db.snapshot import CatalogSnapshot
from service.errors import InvalidParameter
from service.plans.pipeline import PlanService
from service.plans.supply import SupplySet
from service.portfolios.schemas import JobIn, PortfolioRequest, ServingIn
from solver import (
    NODE_GPUS,
    AvailabilityCap,
    BuyOption,
    Candidate,
    InfeasibleJob,
    InfeasiblePortfolio,
    InvalidWorkload,
    JobPlanRequest,
    NoFeasiblePlan,
    OptionPool,
    OwnedPool,
    PortfolioJob,
    PortfolioProblem,
    ReplicaType,
    ServingDemand,
    ServingOption,
    ServingPlan,
    Supply,
)

__all__ = ["BUCKET_HOURS", "Horizon", "build_problem", "owned_at_marginal", "ownership_inputs"]

BUCKET_HOURS: Final = {"day": 24.0, "week": 168.0}
_SERVING_TYPES: Final = 6
"""Rented serving types kept per workload (the cheapest per request/s; every owned one is kept too)."""
_INPUTS: Final = OwnershipInputs.__struct_fields__
_PARTS: Final = (1, 2, 4)
"""The parts of an owned 8-GPU board a portfolio job may hold."""


class Horizon(msgspec.Struct, frozen=True, kw_only=True):
    start: dt.date
    buckets: int
    bucket_hours: float

    def hours(self, when: str | float | None, field: str, *, end_of_day: bool) -> float | None:
        """Hours from the start of a date (its start, or its end) or of a number of hours."""
        if when is None or isinstance(when, float | int):
            return None if when is None else float(when)
        try:
            day = dt.date.fromisoformat(when)
        except ValueError as exc:
            raise InvalidParameter(field, f"{when!r} is not a date (YYYY-MM-DD)") from exc
        return ((day - self.start).days + (1 if end_of_day else 0)) * 24.0

    def at(self, hour: float) -> str:
        """The UTC time ``hour`` hours after the start, ISO 8601."""
        moment = dt.datetime.combine(self.start, dt.time(), dt.UTC) + dt.timedelta(hours=hour)
        return moment.isoformat().replace("+00:00", "Z")


def ownership_inputs(snapshot: CatalogSnapshot, gpu_id: str) -> OwnershipInputs | None:
    """What prices one owned GPU of ``gpu_id`` from the ownership sheets (``None``: a value is missing)."""
    gpu = snapshot.gpus[gpu_id]
    choice = choose_defaults(
        snapshot.ownership.prices.get(gpu_id, []),
        snapshot.ownership.defaults,
        gpu_tdp_w=gpu.tdp_w,
        user_price=False,
    )
    values = {name: getattr(choice, name) for name in _INPUTS}
    if any(value is None for value in values.values()):
        return None
    return OwnershipInputs(**{name: value.value for name, value in values.items()})


@contextmanager
def _field(prefix: str) -> Iterator[None]:
    """Name a nested request's errors by their place in the portfolio (``jobs[2].plan.tokens``)."""
    try:
        yield
    except InvalidParameter as exc:
        raise InvalidParameter(f"{prefix}.{exc.field}", exc.message) from exc
    except InvalidWorkload as exc:
        raise InvalidParameter(f"{prefix}.{exc.field}", exc.message) from exc


def _owned(request: PortfolioRequest, snapshot: CatalogSnapshot) -> list[OwnedPool]:
    pools: dict[str, OwnedPool] = {}
    for i, owned in enumerate(request.owned):
        gpu = one_gpu(snapshot, owned.gpu, f"owned[{i}].gpu").gpu_id
        rate = owned.usd_per_gpu_hour
        if rate is None:
            inputs = ownership_inputs(snapshot, gpu)
            if inputs is None:
                raise InvalidParameter(
                    f"owned[{i}].usd_per_gpu_hour", f"the ownership sheet cannot price {gpu}; give it"
                )
            rate = busy_energy_usd_per_hour(inputs)
        if gpu in pools:
            raise InvalidParameter(f"owned[{i}].gpu", f"{gpu} is listed twice")
        pools[gpu] = OwnedPool(gpu_id=gpu, gpus=owned.count, usd_per_gpu_hour=rate)
    return list(pools.values())


def _buy(
    request: PortfolioRequest, snapshot: CatalogSnapshot, horizon: Horizon
) -> tuple[list[BuyOption], dict[str, str]]:
    options, rules = [], {}
    for i, buy in enumerate(request.buy):
        gpu = one_gpu(snapshot, buy.gpu, f"buy[{i}].gpu")
        inputs = ownership_inputs(snapshot, gpu.gpu_id)
        if inputs is None:
            raise InvalidParameter(
                f"buy[{i}].gpu", f"the ownership sheet has no purchase price for {gpu.gpu_id}"
            )
        unit = purchase_unit(gpu)
        size = unit.sizes[0]
        hours = horizon.buckets * horizon.bucket_hours
        options.append(
            BuyOption(
                gpu_id=gpu.gpu_id,
                unit_gpus=size,
                usd_per_unit=fixed_usd_per_gpu_hour(inputs) * size * hours,
                usd_per_gpu_hour=busy_energy_usd_per_hour(inputs),
                max_units=buy.max_units,
            )
        )
        rules[gpu.gpu_id] = unit.rule
    return options, rules


def _acquiring[P: JobPlanRequest | ServingPlan](plan: P, ctx: _Context) -> P:
    """A plan that rents may also run on the portfolio's owned and buyable GPUs."""
    return (
        msgspec.structs.replace(plan, acquisition="either")
        if ctx.rates and plan.acquisition == "rent"
        else plan
    )


def _job(i: int, job: JobIn, ctx: _Context) -> PortfolioJob:
    prefix = f"jobs[{i}]"
    plan = _acquiring(job.plan, ctx)
    with _field(f"{prefix}.plan"):
        try:
            pool = _pool(plan, ctx)
        except NoFeasiblePlan as exc:
            raise _no_options(job.name, str(exc)) from exc
    start = ctx.horizon.hours(job.earliest_start, f"{prefix}.earliest_start", end_of_day=False) or 0.0
    deadline = ctx.horizon.hours(job.deadline, f"{prefix}.deadline", end_of_day=True)
    if deadline is not None and deadline <= start:
        raise InvalidParameter(f"{prefix}.deadline", "is not after earliest_start")
    if job.restart_hours > 0 and not job.splittable:
        raise InvalidParameter(f"{prefix}.restart_hours", "applies only to a job that is splittable")
    end = ctx.horizon.buckets * ctx.horizon.bucket_hours if deadline is None else deadline
    options = pool.pick(max_span_hours=end - start, top_k=ctx.top_k) or pool.pick(top_k=1, per_group=1)
    if not options:
        raise _no_options(job.name, "no GPU configuration that is rented, owned or may be bought can run it")
    return PortfolioJob(
        name=job.name,
        options=options,
        earliest_start_hour=start,
        deadline_hour=deadline,
        priority=job.priority,
        splittable=job.splittable,
        restart_hours=job.restart_hours,
    )


def _pool(plan: JobPlanRequest, ctx: _Context) -> OptionPool:
    """The job's candidates, enumerated (and grouped for picking options) once per distinct plan body in
    a portfolio: jobs often repeat one with another window or priority."""
    key = msgspec.json.encode(plan)
    if key not in ctx.enumerated:
        _inputs, enumeration = ctx.plans.job_candidates(plan, ctx.snapshot, owned_at_marginal(ctx.rates))
        ctx.enumerated[key] = enumeration.candidates
        ctx.pools[key] = OptionPool(enumeration.candidates, ctx.rates)
    return ctx.pools[key]


def owned_at_marginal(rates: dict[str, float]) -> Callable[[SupplySet], SupplySet]:
    """The supplies of a portfolio job: owned ones only of the GPU types owned or buyable, priced at their
    marginal running cost per busy GPU-hour (so the enumeration keeps what is cheap at that price), and
    each owned 8-GPU board also as its halves, quarters and single GPUs — in a portfolio a job may hold
    part of an owned server while other work holds the rest (the MILP counts owned GPUs, not boards)."""

    def adjust(supplies: SupplySet) -> SupplySet:
        kept: list[Supply] = []
        for supply in supplies.supplies:
            if supply.acquisition != "own":
                kept.append(supply)
                continue
            rate = rates.get(supply.gpu_id)
            if rate is None:
                continue
            sizes = (
                (supply.gpus_per_unit, *_PARTS)
                if supply.gpus_per_unit == NODE_GPUS
                else (supply.gpus_per_unit,)
            )
            kept.extend(
                msgspec.structs.replace(
                    supply,
                    supply_id=f"own:{supply.gpu_id}:{size}",
                    gpus_per_unit=size,
                    usd_per_unit_hour=rate * size,
                    interconnect=supply.interconnect if size > 1 else "none",
                    price_source=f"owned at its marginal running cost, ${rate:,.2f} per busy GPU-hour",
                )
                for size in sizes
            )
        return msgspec.structs.replace(supplies, supplies=kept)

    return adjust


def _no_options(name: str, why: str) -> InfeasiblePortfolio:
    return InfeasiblePortfolio(f"job {name}: {why}", [InfeasibleJob(job=name, reason=why, fixes=[])])


def _serving_option(
    rtype: ReplicaType, supply: Supply, shares: list[float], utilization: float, rates: dict[str, float]
) -> ServingOption | None:
    """One instance of a replica type: requests/s for the mix at the target utilisation, and its price."""
    if any(c.requests_per_s <= 0 for c, share in zip(rtype.capacities, shares, strict=True) if share > 0):
        return None
    per_replica = 1.0 / sum(
        share / c.requests_per_s for c, share in zip(rtype.capacities, shares, strict=True)
    )
    own = supply.acquisition == "own"
    if own and rtype.gpu_id not in rates:
        return None
    usd = rtype.gpus_per_instance * rates[rtype.gpu_id] if own else rtype.usd_per_instance_hour
    return ServingOption(
        option_id=rtype.type_id,
        acquisition=supply.acquisition,
        gpu_id=rtype.gpu_id,
        gpus_per_instance=rtype.gpus_per_instance,
        requests_per_s=per_replica * rtype.replicas_per_instance * utilization,
        usd_per_instance_hour=usd,
        supply_id=supply.supply_id,
        provider=supply.provider,
    )


def _rates(serving: ServingIn, horizon: Horizon, prefix: str) -> list[float]:
    if serving.requests_per_s is not None:
        if len(serving.requests_per_s) != horizon.buckets:
            raise InvalidParameter(
                f"{prefix}.requests_per_s",
                f"has {len(serving.requests_per_s)} rates for {horizon.buckets} buckets",
            )
        return list(serving.requests_per_s)
    return [
        serving.plan.requests_per_s * (1.0 + serving.growth_per_bucket) ** t for t in range(horizon.buckets)
    ]


def _serving(i: int, serving: ServingIn, ctx: _Context) -> ServingDemand:
    prefix = f"serving[{i}]"
    plan = _acquiring(serving.plan, ctx)
    with _field(f"{prefix}.plan"):
        inputs, found = ctx.plans.serving_types(plan, ctx.snapshot)
    shares = [c.share for c in inputs.spec.classes]
    built = [
        _serving_option(t, found.supply_of[t.type_id], shares, plan.max_utilization, ctx.rates)
        for t in found.types
    ]
    usable = [o for o in built if o is not None]
    rented = sorted(
        (o for o in usable if o.acquisition == "rent"),
        key=lambda o: o.usd_per_instance_hour / o.requests_per_s,
    )
    options = [*(o for o in usable if o.acquisition == "own"), *rented[:_SERVING_TYPES]]
    if not options:
        raise _no_options(serving.name, "no GPU can serve it")
    return ServingDemand(
        name=serving.name, requests_per_s=_rates(serving, ctx.horizon, prefix), options=options
    )


def _caps(request: PortfolioRequest, snapshot: CatalogSnapshot) -> list[AvailabilityCap]:
    caps = []
    for i, cap in enumerate(request.availability):
        key = one_gpu(snapshot, cap.key, f"availability[{i}].key").gpu_id if cap.scope == "gpu" else cap.key
        caps.append(AvailabilityCap(scope=cap.scope, key=key, max_instances=cap.max_instances))
    return caps


def _published_caps(ctx: _Context) -> list[AvailabilityCap]:
    """An offer cap for every offer among the jobs' candidates whose sheet publishes its available instances."""
    caps = {
        c.supply.supply_id.rsplit(":", 1)[0]: c.supply.max_units
        for candidates in ctx.enumerated.values()
        for c in candidates
        if c.supply.acquisition == "rent" and c.supply.max_units is not None
    }
    return [AvailabilityCap(scope="offer", key=offer, max_instances=n) for offer, n in sorted(caps.items())]


def _budgets(request: PortfolioRequest, buckets: int) -> list[float | None]:
    if request.budget is None:
        return []
    if isinstance(request.budget, list):
        if len(request.budget) != buckets:
            raise InvalidParameter("budget", f"has {len(request.budget)} figures for {buckets} buckets")
        return list(request.budget)
    return [request.budget] * buckets


class _Context(msgspec.Struct, frozen=True, kw_only=True):
    plans: PlanService
    snapshot: CatalogSnapshot
    horizon: Horizon
    rates: dict[str, float]
    top_k: int
    enumerated: dict[bytes, list[Candidate]] = {}
    pools: dict[bytes, OptionPool] = {}


def build_problem(
    request: PortfolioRequest, plans: PlanService, snapshot: CatalogSnapshot
) -> tuple[PortfolioProblem, Horizon, dict[str, str]]:
    """The solver's problem, the horizon's calendar and the purchase-unit rule of each buyable GPU."""
    try:
        start = dt.date.fromisoformat(request.horizon.start)
    except ValueError as exc:
        raise InvalidParameter("horizon.start", f"{request.horizon.start!r} is not a date") from exc
    horizon = Horizon(
        start=start, buckets=request.horizon.buckets, bucket_hours=BUCKET_HOURS[request.horizon.bucket]
    )
    if not request.jobs and not request.serving:
        raise InvalidParameter("jobs", "a portfolio needs at least one job or serving workload")
    _unique([j.name for j in request.jobs] + [s.name for s in request.serving])
    owned = _owned(request, snapshot)
    buy, rules = _buy(request, snapshot, horizon)
    rates = {o.gpu_id: o.usd_per_gpu_hour for o in buy} | {p.gpu_id: p.usd_per_gpu_hour for p in owned}
    ctx = _Context(
        plans=plans,
        snapshot=snapshot,
        horizon=horizon,
        rates=rates,
        top_k=request.top_k,
        enumerated={},
        pools={},
    )
    problem = PortfolioProblem(
        bucket_hours=horizon.bucket_hours,
        buckets=horizon.buckets,
        jobs=[_job(i, job, ctx) for i, job in enumerate(request.jobs)],
        serving=[_serving(i, s, ctx) for i, s in enumerate(request.serving)],
        owned=owned,
        buy=buy,
        caps=[*_caps(request, snapshot), *_published_caps(ctx)],
        budgets=_budgets(request, horizon.buckets),
        time_limit_s=request.time_limit_s,
        on_infeasible=request.on_infeasible,
    )
    return problem, horizon, rules


def _unique(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidParameter("jobs", f"the name {name!r} is used twice (jobs and serving share names)")
        seen.add(name)
