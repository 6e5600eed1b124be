"""Enumerate the configurations that could run a job: supply × units × parallel layout.

A *supply* is one way to get GPUs: a rental offer (one instance type at an on-demand, spot or
reserved price; a reservation bills whole terms, :mod:`solver.costs.price_kinds`) or owned GPUs
(priced per busy hour). For each supply shape the enumeration tries GPU counts up to
``max_gpus`` (:func:`~solver.optimise.shape_steps.gpu_counts`: every 8 up to 512, four per doubling
beyond, so 65,536-GPU plans stay small) and, for each count, the layout the search chooses
(:mod:`solver.throughput.layout_search`: tensor parallelism inside the NVLink domain, pipeline stages,
context parallelism, data parallelism with ZeRO 0–3, checkpointing and micro-batch; the fastest that
fits every rank within the memory headroom and meets the global batch), then prices the hours the
throughput model predicts for the whole job on the supply's links. Every dropped configuration leaves
a :class:`Rejection` with its reason (``global_batch`` when its data-parallel ranks would exceed the
job's batch, ``network`` when the instances cannot talk to each other at all).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Final, Literal

import msgspec

from solver.catalog.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.catalog.network import Network
from solver.costs.charges import (
    COMPUTE_ONLY_TERMS,
    DEADLINE_CONFIDENCE,
    NOTHING_MOVED,
    ChargeSummary,
    JobTerms,
    SupplyTerms,
)
from solver.costs.price_kinds import PriceKind
from solver.errors import Rejection, RejectionReason
from solver.memory.peak import MemoryEstimate
from solver.optimise.config_grid import ConfigGrid, Selection, select
from solver.optimise.plan_cache import PlanCache
from solver.optimise.shape_steps import (
    ShapeStep,
    StepContext,
    StepTable,
    ThroughputFn,
    failure_rank,
    gpu_counts,
    shape_steps,
)
from solver.spec.workload import TRAINING_KINDS, Recompute, Sharding, Workload, resolve_workload
from solver.throughput.calibration import ProfileIndex
from solver.throughput.estimate import ThroughputEstimate, Topology
from solver.throughput.step import Layout

__all__ = [
    "Candidate",
    "Enumeration",
    "PlanCache",
    "Rejection",
    "RejectionReason",
    "Supply",
    "ThroughputFn",
    "WorkAmount",
    "enumerate_candidates",
    "gpu_counts",
]

_PAGED: Final = frozenset({"paged_adamw", "paged_adamw_8bit"})
"""Optimizers whose state may page to host memory (with CPU offload, the memory model's host terms)."""


class Supply(msgspec.Struct, frozen=True, kw_only=True):
    """One way to get GPUs of one type, with the price of one unit (instance or owned node) per hour."""

    supply_id: str
    acquisition: Literal["rent", "own"]
    pricing: PriceKind
    gpu_id: str
    gpus_per_unit: int
    interconnect: Interconnect
    network: Network
    """How units reach each other (the offer's network; for owned GPUs, the ownership assumption)."""
    usd_per_unit_hour: float
    billing_increment_s: int
    terms: SupplyTerms = COMPUTE_ONLY_TERMS
    """What the seller charges beyond the hour, and how often its capacity is interrupted."""
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    country: str | None = None
    """ISO 3166-1 alpha-2 code of the region's country, where the seller's region names one."""
    price_source: str = ""
    sheet_version: int | None = None
    host_ram_gib_per_gpu: float | None = None
    """The offer's host memory per GPU (None: not stated, or owned: the buyer sizes it)."""
    vcpus_per_gpu: float | None = None
    """The offer's vCPUs per GPU (None: not stated, or owned: the buyer sizes it)."""
    max_units: int | None = None
    """The most units that can be had at once (a sheet's ``available_instances``; None: no cap)."""


class WorkAmount(msgspec.Struct, frozen=True, kw_only=True):
    """The work to finish, in the unit a throughput is measured in (``tokens_per_s`` → tokens …)."""

    amount: float
    unit: str


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A priced configuration: ``units`` of ``supply`` (``gpu_count`` GPUs) in one parallel layout."""

    supply: Supply
    units: int
    gpu_count: int
    tp: int
    sharding: Sharding
    recompute: Recompute
    layout: Layout
    """The parallel layout the search chose for this count (tp, pp, vpp, cp, dp, ZeRO, micro-batch,
    accumulation, recompute, global batch)."""
    memory: MemoryEstimate
    capacity_gib: float
    throughput: ThroughputEstimate
    """The whole job's throughput on ``gpu_count`` GPUs (its ``scaling`` says what the links cost)."""
    compute_hours: float
    """Hours of computing the work takes (the throughput model's answer)."""
    hours: float
    """Expected wall hours: compute plus setup, checkpoints and interruptions (``charges``)."""
    usd_per_hour: float
    cost_usd: float
    """The complete charge (``charges.total_usd``)."""
    charges: ChargeSummary

    @property
    def billable_hours(self) -> float:
        return self.charges.billable_hours


class Enumeration(msgspec.Struct, frozen=True, kw_only=True):
    """The candidates that can matter, the most telling rejections, and how many configurations were
    looked at.

    ``candidates`` keeps every configuration that no other beats on both cost and hours, and the best
    of each (GPU, seller, kind of price) group by cost and by hours: the optimum under any objective,
    deadline and budget, every alternative a plan lists, and the optimum of each kind of price on its
    own (a plan's ``pricing_options``: the on-demand one must be the plan spot-free would give, even
    where a spot row of the same seller beats it on both counts) are among them. ``rejections`` holds one per GPU type
    and reason: the one that tried the most GPUs (the first found on a tie). ``feasible`` counts all
    configurations that passed.
    """

    candidates: list[Candidate]
    rejections: list[Rejection]
    configurations_tried: int
    feasible: int = 0
    below_headroom: list[Candidate] = msgspec.field(default_factory=list)
    """Configurations that fit only below the memory headroom (a layout whose peak fits the GPU's
    memory but not within ``1 − memory_headroom`` of it, faster than what the headroom allows at that
    count), within the deadline and budget: the Pareto rows and each group's best, as for
    ``candidates``. They are never chosen; they show what the headroom costs."""


class _Rejections:
    """The most telling rejection per (GPU type, reason): the one with the least ``rank`` — how close
    that configuration came (the fastest past a deadline, the cheapest over a budget, the least memory
    needed, the fewest GPUs that fail on the batch or the network) — the first found on a tie. A
    detail is formatted only when it is kept (most are not)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, RejectionReason], tuple[float, Rejection]] = {}

    def add(
        self,
        supply: Supply,
        reason: RejectionReason,
        gpu_count: int,
        detail: str,
        *args: object,
        rank: float | None = None,
        admit_at: float | None = None,
    ) -> None:
        """Record a rejection; ``rank`` defaults to ``gpu_count`` (the fewest GPUs that fail)."""
        rank = float(gpu_count) if rank is None else rank
        held = self._kept.get((supply.gpu_id, reason))
        if held is None or rank < held[0]:
            rejection = Rejection(
                gpu_id=supply.gpu_id,
                reason=reason,
                detail=detail.format(*args) if args else detail,
                supply_id=supply.supply_id,
                gpu_count=gpu_count,
                admit_at=admit_at,
            )
            self._kept[supply.gpu_id, reason] = (rank, rejection)

    def kept(self) -> list[Rejection]:
        return [rejection for _, rejection in self._kept.values()]


def _candidate(
    supply: Supply,
    step: ShapeStep,
    hours: float,
    charges: ChargeSummary,
    gpus: Mapping[str, GpuSpec],
    *,
    edge: bool = False,
) -> Candidate:
    """The priced configuration of a grid row (``edge``: its layout that fits only below the headroom)."""
    choice, rate = (step.edge, step.edge_rate) if edge else (step.choice, step.rate)
    assert choice is not None and rate is not None
    return Candidate(
        supply=supply,
        units=step.units,
        gpu_count=step.gpu_count,
        tp=choice.layout.tp,
        sharding=choice.layout.zero,
        recompute=choice.layout.recompute,
        layout=choice.layout,
        memory=choice.memory,
        capacity_gib=gpus[supply.gpu_id].memory_gib,
        throughput=rate,
        compute_hours=hours,
        hours=charges.wall_hours,
        usd_per_hour=supply.usd_per_unit_hour * step.units,
        cost_usd=charges.total_usd,
        charges=charges,
    )


def _admitted(
    supply: Supply, gpu: GpuSpec, rejections: _Rejections, require_ecc: bool, least: Interconnect | None
) -> bool:
    """Whether the supply passes the ECC and interconnect limits (else its rejection is recorded)."""
    if require_ecc and gpu.ecc is not True:
        rejections.add(supply, "ecc", 0, "no ECC memory")
        return False
    if least is not None and INTERCONNECT_RANK[supply.interconnect] < INTERCONNECT_RANK[least]:
        rejections.add(supply, "interconnect", 0, "{} inside the instance, below the required {}",
                       supply.interconnect, least)  # fmt: skip
        return False
    return True


class _Enumerator:
    """One enumeration: the shared step context, the cache, the grid of priced rows and what was rejected."""

    def __init__(
        self, context: StepContext, cache: PlanCache, work: Callable[[str], WorkAmount], key: bytes
    ) -> None:
        self.context, self.cache, self.work, self.key = context, cache, work, key
        self.amounts: dict[str, float] = {}
        self.rejections = _Rejections()
        self.grid = ConfigGrid()
        self.added: list[tuple[Supply, list[ShapeStep]]] = []
        self.edges = ConfigGrid()
        """The same rows at the layouts that fit only below the headroom (shapes that have any)."""
        self.edges_added: list[tuple[Supply, list[ShapeStep]]] = []
        self.groups: dict[tuple[str, str, str], int] = {}
        self.gpu_numbers: dict[str, int] = {}
        self.told: set[Hashable] = set()  # shapes whose failing counts were reported

    def amount(self, unit: str) -> float:
        found = self.amounts.get(unit)
        if found is None:
            found = self.amounts[unit] = self.work(unit).amount
        return found

    def add(self, supply: Supply, gpu: GpuSpec, max_gpus: int) -> None:
        host = supply.host_ram_gib_per_gpu if self.context.uses_host else None
        vcpus = supply.vcpus_per_gpu if self.context.decodes_images else None
        shape = (supply.gpu_id, gpu.memory_gib, supply.gpus_per_unit, supply.interconnect,
                 supply.network.network_class, supply.network.gbps, host, vcpus)  # fmt: skip
        steps, unit = self.cache.get("steps", (self.key, shape, max_gpus),
                                     lambda: _with_unit(shape_steps(self.context, gpu, _topology(supply), max_gpus, host, vcpus)))  # fmt: skip
        if not steps:
            self.rejections.add(supply, "quota", 0, "one unit has {} GPUs, above max_gpus {}",
                                supply.gpus_per_unit, max_gpus, admit_at=supply.gpus_per_unit)  # fmt: skip
            return
        amount = None if unit is None else self.amount(unit)
        table = self.cache.get("hours", (self.key, shape, max_gpus, amount),
                               lambda: StepTable.of(steps, self.amount))  # fmt: skip
        if supply.max_units is not None:
            table = _capped(supply, table, self.rejections)
        if shape not in self.told:  # a later supply of the shape fails at the same counts
            self.told.add(shape)
            for step in table.failed:
                assert step.rejection is not None
                reason, detail = step.rejection
                self.rejections.add(supply, reason, step.gpu_count, "{}", detail, rank=failure_rank(step))
        # per kind of price too: each kind's own optimum must survive the pruning (pricing_options)
        seller = (supply.gpu_id, supply.provider or supply.acquisition, supply.pricing)
        group = self.groups.setdefault(seller, len(self.groups))
        gpu_number = self.gpu_numbers.setdefault(supply.gpu_id, len(self.gpu_numbers))
        for grid, hours in (
            (self.grid, table.hours),
            *([(self.edges, table.edge_hours)] if table.has_edges else []),
        ):
            grid.add(hours, table.units, table.gpu_counts, price=supply.usd_per_unit_hour,
                     increment_s=supply.billing_increment_s, group=group, gpu=gpu_number, terms=supply.terms)  # fmt: skip
            (self.added if grid is self.grid else self.edges_added).append((supply, steps))

    def at(self, row: int, *, edge: bool = False) -> tuple[Supply, ShapeStep]:
        grid, added = (self.edges, self.edges_added) if edge else (self.grid, self.added)
        position = grid.supply_of(row)
        supply, steps = added[position]
        return supply, steps[row - grid.starts[position]]

    def below_headroom(
        self,
        job: JobTerms,
        gpus: Mapping[str, GpuSpec],
        deadline_hours: float | None,
        budget_usd: float | None,
    ) -> list[Candidate]:
        """The configurations that fit only below the headroom and can matter (within the limits)."""
        picked = select(self.edges, job, deadline_hours=deadline_hours, budget_usd=budget_usd)
        summaries = [] if picked.charges is None else ChargeSummary.many(picked.charges, picked.kept)
        return [
            _candidate(*self.at(i, edge=True), self.edges.hours[i], summary, gpus, edge=True)
            for i, summary in zip(picked.kept, summaries, strict=True)
        ]


def _with_unit(steps: list[ShapeStep]) -> tuple[list[ShapeStep], str | None]:
    """A shape's steps with the unit their rates are in (``None`` when no count runs): the hours depend
    on the amount of work, so they are keyed by it, even where only an edge layout runs."""
    rate = next((r for step in steps for r in (step.rate, step.edge_rate) if r is not None), None)
    return steps, None if rate is None else rate.unit


def _topology(supply: Supply) -> Topology:
    return Topology(gpus_per_instance=supply.gpus_per_unit, interconnect=supply.interconnect,
                    network=supply.network)  # fmt: skip


def _capped(supply: Supply, table: StepTable, rejections: _Rejections) -> StepTable:
    """The steps needing more units than the seller has available marked as not runnable (NaN hours),
    with one ``availability`` rejection naming the first of them and the cap."""
    cap = supply.max_units
    assert cap is not None
    over = [i for i, units in enumerate(table.units) if units > cap and not math.isnan(table.hours[i])]
    if not over:
        return table
    first, count = over[0], table.gpu_counts[over[0]]
    if supply.acquisition == "own":
        rejections.add(supply, "availability", count, "{} GPUs are more than the {} owned (owned_inventory)",
                       count, cap * supply.gpus_per_unit)  # fmt: skip
    else:
        rejections.add(supply, "availability", count,
                       "{} GPUs need {} instances of {} {} ({}), which publishes {} available (available_instances): "
                       "at most {} GPUs there", count, table.units[first], supply.provider, supply.instance_type,
                       supply.pricing, cap, cap * supply.gpus_per_unit)  # fmt: skip
    hours = [math.nan if units > cap else h for h, units in zip(table.hours, table.units, strict=True)]
    return table._replace(hours=hours)


def _seller(supply: Supply) -> str:
    return supply.provider or "owned"


def _limit_rejections(
    found: _Enumerator, picked: Selection, deadline_hours: float | None, budget_usd: float | None
) -> None:
    """For each GPU type only the deadline or the budget ruled out: the configuration that came closest
    (the fastest, the cheapest), in the hours and dollars a plan restricted to that GPU would show,
    and the limit that would admit it."""
    charges = picked.charges
    for i in picked.deadline_rejections:
        assert charges is not None
        supply, step = found.at(i)
        found.rejections.add(supply, "deadline", step.gpu_count,
                             "the fastest configuration tried, {} GPU(s) on {}, needs {:,.1f} h ({:,.1f} h at "
                             "{:.0%} confidence), over the {:g} h deadline; a deadline of {:,.0f} h or a "
                             "larger max_gpus would admit it",
                             step.gpu_count, _seller(supply), charges.wall_hours[i], charges.deadline_hours[i],
                             DEADLINE_CONFIDENCE, deadline_hours, math.ceil(charges.deadline_hours[i]),
                             rank=float(charges.wall_hours[i]),
                             admit_at=math.ceil(charges.deadline_hours[i]))  # fmt: skip
    for i in picked.budget_rejections:
        assert charges is not None
        supply, step = found.at(i)
        found.rejections.add(supply, "budget", step.gpu_count,
                             "the cheapest configuration tried, {} GPU(s) on {}, costs ${:,.2f}, over the "
                             "${:,.2f} budget; a budget of ${:,.0f} would admit it",
                             step.gpu_count, _seller(supply), charges.total_usd[i], budget_usd,
                             math.ceil(charges.total_usd[i]), rank=float(charges.total_usd[i]),
                             admit_at=math.ceil(charges.total_usd[i]))  # fmt: skip


def _context(
    template: Workload,
    throughput: ThroughputFn,
    index: ProfileIndex | None,
    cache: PlanCache,
    headroom: float,
) -> StepContext:
    resolved = resolve_workload(template)
    uses_host = template.kind in TRAINING_KINDS and (
        template.offload != "none" or template.optimizer in _PAGED
    )
    decodes_images = template.kind in TRAINING_KINDS and resolved.arch.family == "vision"
    return StepContext(template=resolved, throughput=throughput, profiles=index, layouts=cache.layouts,
                       memory_headroom=headroom, uses_host=uses_host, decodes_images=decodes_images)  # fmt: skip


def enumerate_candidates(
    template: Workload,
    supplies: Sequence[Supply],
    gpus: Mapping[str, GpuSpec],
    throughput: ThroughputFn,
    work: Callable[[str], WorkAmount],
    *,
    job: JobTerms = NOTHING_MOVED,
    max_gpus: int,
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    min_interconnect: Interconnect | None = None,
    require_ecc: bool = False,
    cache: PlanCache | None = None,
    index: ProfileIndex | None = None,
    memory_headroom: float = 0.0,
) -> Enumeration:
    """Every feasible configuration of ``supplies`` for the job ``template`` (its stated layout fields
    held, the rest chosen by the layout search at each count).

    ``work(unit)`` converts the job's work into the unit of a throughput (e.g. tokens for tokens_per_s).
    ``cache`` (the service's, one per catalog snapshot) keeps layouts and what each supply shape can run
    at for the next plan; ``index`` rates layouts by the class model (``None``: by the roofline);
    ``memory_headroom`` is the share of each GPU's memory a layout must leave free.
    """
    cache = cache if cache is not None else PlanCache()
    context = _context(template, throughput, index, cache, memory_headroom)
    found = _Enumerator(context, cache, work, msgspec.json.encode(template) + repr(memory_headroom).encode())
    for supply in supplies:
        gpu = gpus[supply.gpu_id]
        if _admitted(supply, gpu, found.rejections, require_ecc, min_interconnect):
            found.add(supply, gpu, max_gpus)
    picked = select(found.grid, job, deadline_hours=deadline_hours, budget_usd=budget_usd)
    _limit_rejections(found, picked, deadline_hours, budget_usd)
    summaries = [] if picked.charges is None else ChargeSummary.many(picked.charges, picked.kept)
    candidates = [
        _candidate(*found.at(i), found.grid.hours[i], summary, gpus)
        for i, summary in zip(picked.kept, summaries, strict=True)
    ]
    return Enumeration(candidates=candidates, rejections=found.rejections.kept(),
                       configurations_tried=len(found.grid.hours), feasible=picked.feasible,
                       below_headroom=found.below_headroom(job, gpus, deadline_hours, budget_usd))  # fmt: skip
