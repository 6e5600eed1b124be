"""Enumerate the configurations that could run a job: supply × units × parallel layout.

A *supply* is one way to get GPUs: a rental offer (one instance type at an on-demand or spot price) or
owned GPUs (priced per busy hour). For each supply the enumeration tries 1, 2, … units up to
``max_gpus`` — keeping GPU counts of 1, 2, 4, 8 and multiples of 8 (data-parallel jobs use such
counts; a single unit of any size is always tried) — and, for each count, the first parallel layout
the memory model lets fit (tensor parallelism only inside a unit linked by NVLink or NVSwitch; then
ZeRO stages), then prices the hours the throughput model predicts for the whole job: its units linked
inside by the supply's interconnect and to each other by the supply's network, so a job spread over
several instances pays for the communication the network cannot hide (:mod:`solver.scaling`). Every
dropped configuration leaves a :class:`Rejection` with its reason (``network`` when the instances
cannot talk to each other at all).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Final, Literal, NamedTuple

import msgspec

from solver.charges import (
    COMPUTE_ONLY_TERMS,
    DEADLINE_CONFIDENCE,
    NOTHING_MOVED,
    ChargeSummary,
    JobTerms,
    SupplyTerms,
)
from solver.config_grid import ConfigGrid, select
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.memory import MemoryEstimate, estimate_memory
from solver.network import Network, spans_instances
from solver.throughput import RECOMPUTE_LEVELS, ThroughputEstimate, Topology
from solver.workload import Recompute, ResolvedWorkload, Sharding, Workload, resolve_workload

__all__ = [
    "Candidate",
    "Enumeration",
    "Rejection",
    "RejectionReason",
    "Supply",
    "ThroughputFn",
    "WorkAmount",
    "enumerate_candidates",
    "gpu_counts",
]

RejectionReason = Literal[
    "filter",
    "software",
    "host",
    "ecc",
    "interconnect",
    "network",
    "quota",
    "memory",
    "throughput",
    "deadline",
    "budget",
]
ThroughputFn = Callable[[ResolvedWorkload, GpuSpec, int, Topology], ThroughputEstimate]
"""Throughput of a workload on ``n`` GPUs of one type placed as ``topology`` says (total, all GPUs)."""


class Supply(msgspec.Struct, frozen=True, kw_only=True):
    """One way to get GPUs of one type, with the price of one unit (instance or owned node) per hour."""

    supply_id: str
    acquisition: Literal["rent", "own"]
    pricing: Literal["on_demand", "spot", "owned"]
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
    price_source: str = ""
    sheet_version: int | None = None
    host_ram_gib_per_gpu: float | None = None
    """The offer's host memory per GPU (None: not stated, or owned: the buyer sizes it)."""


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


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """Why a supply (or all of a GPU's supplies) could not be used."""

    gpu_id: str
    reason: RejectionReason
    detail: str
    supply_id: str | None = None
    gpu_count: int = 0


class Enumeration(msgspec.Struct, frozen=True, kw_only=True):
    """The candidates that can matter, the most telling rejections, and how many configurations were
    looked at.

    ``candidates`` keeps every configuration that no other beats on both cost and hours, and the best
    of each (GPU, seller) pair by cost and by hours: the optimum under any objective, deadline and
    budget, and every alternative a plan lists, are among them. ``rejections`` holds one per GPU type
    and reason: the one that tried the most GPUs (the first found on a tie). ``feasible`` counts all
    configurations that passed.
    """

    candidates: list[Candidate]
    rejections: list[Rejection]
    configurations_tried: int
    feasible: int = 0


def gpu_counts(gpus_per_unit: int, max_gpus: int) -> list[int]:
    """Unit counts to try: one unit, then counts giving 2, 4, 8 or a multiple of 8 GPUs."""
    counts = []
    for units in range(1, max_gpus // gpus_per_unit + 1):
        n = units * gpus_per_unit
        if units == 1 or n in (2, 4, 8) or n % 8 == 0:
            counts.append(units)
    return counts


def _layouts(
    job: ResolvedWorkload, gpu_count: int, per_unit: int, interconnect: Interconnect
) -> list[tuple[int, Sharding]]:
    """Layouts in order of preference: least tensor parallelism, then least sharding."""
    tps = [1]
    if INTERCONNECT_RANK[interconnect] >= INTERCONNECT_RANK["nvlink"] and job.arch.is_transformer:
        tps += [
            t for t in (2, 4, 8) if t <= per_unit and per_unit % t == 0 and job.arch.attention_heads % t == 0
        ]
    shardings: list[Sharding] = ["none"] if job.is_inference else ["none", "zero1", "zero2", "zero3"]
    layouts = []
    for tp in tps:
        for sharding in shardings:
            if sharding != "none" and gpu_count // tp < 2:
                continue  # one data-parallel rank: nothing to shard over
            layouts.append((tp, sharding))
    return layouts


_MemoryEntry = tuple[ResolvedWorkload, MemoryEstimate] | None
_SHARED_MEMORY: dict[tuple[bytes, int, int, str, str], _MemoryEntry] = {}
_SHARED_FITS: dict[tuple[bytes, int, int, str, float], list[_Layout] | str] = {}
_SHARED_MEMORY_LIMIT: Final = 50_000
_MEMO_LIMIT: Final = 20_000
_PAGED: Final = frozenset({"paged_adamw", "paged_adamw_8bit"})
"""Entries a caller's memo may hold before step tables stop being added to it."""


class _MemoryCache:
    """Memory depends on the layout, not on the GPU type: estimate each (count, tp, sharding,
    recompute) of a workload once — across requests too (a bounded table keyed by the workload's JSON,
    each operation one dict call, so threads may share it)."""

    def __init__(self, template: Workload) -> None:
        self._template = template
        self._key = msgspec.json.encode(template)
        self.uses_host = template.kind in ("train", "fine_tune") and (
            template.offload != "none" or template.optimizer in _PAGED
        )
        """Whether layouts may need host memory (``MemoryEstimate.host_ram_gib``): CPU offload and
        paged optimizer state are the memory model's only host-side terms, both training-only."""

    def recomputes(self) -> tuple[Recompute, ...]:
        """The checkpointing levels to try: the stated one, or all (least first) when left out."""
        stated = self._template.recompute
        return RECOMPUTE_LEVELS if stated is None else (stated,)

    def get(self, gpu_count: int, tp: int, sharding: Sharding, recompute: Recompute) -> _MemoryEntry:
        key = (self._key, gpu_count, tp, sharding, recompute)
        if key in _SHARED_MEMORY:
            return _SHARED_MEMORY[key]
        workload = msgspec.structs.replace(
            self._template, gpu_count=gpu_count, tp=tp, sharding=sharding, recompute=recompute
        )
        try:
            resolved = resolve_workload(workload)
        except InvalidWorkload:
            found: _MemoryEntry = None
        else:
            found = (resolved, estimate_memory(resolved))
        if len(_SHARED_MEMORY) >= _SHARED_MEMORY_LIMIT:
            _SHARED_MEMORY.clear()
        _SHARED_MEMORY[key] = found
        return found

    def fit(
        self, gpu_count: int, per_unit: int, interconnect: Interconnect, capacity_gib: float
    ) -> list[_Layout] | str:
        """:func:`_fit`, remembered per workload, count, unit shape and capacity (across requests)."""
        key = (self._key, gpu_count, per_unit, interconnect, capacity_gib)
        found = _SHARED_FITS.get(key)
        if found is None:
            found = _fit(self, gpu_count, per_unit, interconnect, capacity_gib)
            if len(_SHARED_FITS) >= _SHARED_MEMORY_LIMIT:
                _SHARED_FITS.clear()
            _SHARED_FITS[key] = found
        return found


class _Step(NamedTuple):
    """One GPU count of a supply shape: its layout and throughput, or why it cannot run."""

    units: int
    gpu_count: int
    layout: _Layout | None
    rate: ThroughputEstimate | None
    rejection: tuple[RejectionReason, str] | None


def _shape_steps(
    memory: _MemoryCache,
    rates: dict[_RateKey, ThroughputEstimate | str],
    throughput: ThroughputFn,
    supply: Supply,
    gpu: GpuSpec,
    max_gpus: int,
) -> list[_Step]:
    """The counts a supply's shape (GPU, unit size, interconnect, network) can run at, with their hours.

    Supplies of one shape differ only in price and billing, so this is worked out once per shape; the
    first count that cannot synchronise or has no throughput ends the list (more units fare no better).
    """
    steps: list[_Step] = []
    for units in gpu_counts(supply.gpus_per_unit, max_gpus):
        gpu_count = units * supply.gpus_per_unit
        options = memory.fit(gpu_count, supply.gpus_per_unit, supply.interconnect, gpu.memory_gib)
        if isinstance(options, str):
            steps.append(_Step(units, gpu_count, None, None, ("memory", options)))
            continue
        options = _host_fits(options, supply.host_ram_gib_per_gpu if memory.uses_host else None)
        if isinstance(options, str):
            steps.append(_Step(units, gpu_count, None, None, ("host", options)))
            continue
        if units > 1 and not options[0].resolved.is_inference and not spans_instances(supply.network):
            detail = f"{units} instances cannot synchronise training: {supply.network.rule}"
            steps.append(_Step(units, gpu_count, None, None, ("network", detail)))
            break
        chosen = _fastest(options, rates, throughput, supply, gpu, gpu_count)
        if isinstance(chosen, str):
            steps.append(_Step(units, gpu_count, None, None, ("throughput", chosen)))
            break
        layout, rate = chosen
        steps.append(_Step(units, gpu_count, layout, rate, None))
    return steps


def _host_fits(options: list[_Layout], host_ram_gib: float | None) -> list[_Layout] | str:
    """The layouts whose host memory per GPU (CPU offload, paged optimizer state) the supply's host
    holds, or why none does; ``None``: the host is not known or is sized by the buyer (owned)."""
    if host_ram_gib is None:
        return options
    fitting = [o for o in options if o.memory.host_ram_gib <= host_ram_gib]
    if fitting:
        return fitting
    need = min(o.memory.host_ram_gib for o in options)
    return f"needs {need:,.1f} GiB of host memory per GPU (offloaded or paged state); the offer has {host_ram_gib:g} GiB per GPU"


def _candidate(
    supply: Supply, step: _Step, hours: float, charges: ChargeSummary, gpus: Mapping[str, GpuSpec]
) -> Candidate:
    layout = step.layout
    assert layout is not None and step.rate is not None
    return Candidate(
        supply=supply,
        units=step.units,
        gpu_count=step.gpu_count,
        tp=layout.resolved.tp,
        sharding=layout.resolved.sharding,
        recompute=layout.resolved.recompute,
        memory=layout.memory,
        capacity_gib=gpus[supply.gpu_id].memory_gib,
        throughput=step.rate,
        compute_hours=hours,
        hours=charges.wall_hours,
        usd_per_hour=supply.usd_per_unit_hour * step.units,
        cost_usd=charges.total_usd,
        charges=charges,
    )


class _StepTable(NamedTuple):
    """A shape's steps as grid columns for one job (hours NaN where a step cannot run)."""

    hours: list[float]
    units: list[int]
    gpu_counts: list[int]
    failed: list[_Step]

    @classmethod
    def cached(
        cls,
        memo: MutableMapping[Any, Any],
        key: Hashable,
        steps: list[_Step],
        amounts: dict[str, float],
        work: Callable[[str], WorkAmount],
    ) -> _StepTable:
        """The table of ``steps`` for this job's amount of work, kept in ``memo`` beside the steps."""
        rate = next((step.rate for step in steps if step.rate is not None), None)
        amount = None if rate is None else _amount(rate.unit, amounts, work)
        table_key = ("table", key, amount)
        found: _StepTable | None = memo.get(table_key)
        if found is None:
            found = cls.of(steps, amounts, work)
            if len(memo) < _MEMO_LIMIT:  # many different amounts of work: compute, do not keep
                memo[table_key] = found
        return found

    @classmethod
    def of(
        cls, steps: list[_Step], amounts: dict[str, float], work: Callable[[str], WorkAmount]
    ) -> _StepTable:
        hours = [_hours(step, amounts, work) for step in steps]
        return cls(
            hours=[math.nan if h is None else h for h in hours],
            units=[step.units for step in steps],
            gpu_counts=[step.gpu_count for step in steps],
            failed=[step for step in steps if step.rejection is not None],
        )


def _hours(step: _Step, amounts: dict[str, float], work: Callable[[str], WorkAmount]) -> float | None:
    """Hours ``step`` needs for the job's work (None when it cannot run); one conversion per unit."""
    if step.rate is None:
        return None
    return _amount(step.rate.unit, amounts, work) / step.rate.value / 3600


def _amount(unit: str, amounts: dict[str, float], work: Callable[[str], WorkAmount]) -> float:
    """The job's work in ``unit`` (converted once per plan)."""
    found = amounts.get(unit)
    if found is None:
        found = amounts[unit] = work(unit).amount
    return found


class _Rejections:
    """The most telling rejection per (GPU type, reason): the one that tried the most GPUs, the first
    found on a tie. A detail is formatted only when it is kept (most are not)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, RejectionReason], Rejection] = {}

    def add(
        self, supply: Supply, reason: RejectionReason, gpu_count: int, detail: str, *args: object
    ) -> None:
        held = self._kept.get((supply.gpu_id, reason))
        if held is None or gpu_count > held.gpu_count:
            self._kept[supply.gpu_id, reason] = Rejection(
                gpu_id=supply.gpu_id,
                reason=reason,
                detail=detail.format(*args) if args else detail,
                supply_id=supply.supply_id,
                gpu_count=gpu_count,
            )

    def kept(self) -> list[Rejection]:
        return list(self._kept.values())


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
    memo: MutableMapping[Any, Any] | None = None,
) -> Enumeration:
    """Every feasible configuration of ``supplies`` for the job ``template`` (layout fields ignored).

    ``work(unit)`` converts the job's work into the unit of a throughput (e.g. tokens for tokens_per_s).
    ``memo`` keeps what each supply shape can run at (layouts and throughputs, not hours or prices) for
    the next plan of the same workload: the caller owns it, one per workload and catalog snapshot.
    """
    memory = _MemoryCache(template)
    rates: dict[_RateKey, ThroughputEstimate | str] = {}
    shapes: MutableMapping[Any, list[_Step]] = {} if memo is None else memo
    amounts: dict[str, float] = {}
    rejections = _Rejections()
    grid = ConfigGrid()
    added: list[tuple[Supply, list[_Step]]] = []  # each supply in the grid, with its steps
    groups: dict[tuple[str, str], int] = {}
    gpu_numbers: dict[str, int] = {}
    told: set[Hashable] = set()  # shapes whose failing counts were reported
    for supply in supplies:
        gpu = gpus[supply.gpu_id]
        if require_ecc and gpu.ecc is not True:
            rejections.add(supply, "ecc", 0, "no ECC memory")
            continue
        if (
            min_interconnect is not None
            and INTERCONNECT_RANK[supply.interconnect] < INTERCONNECT_RANK[min_interconnect]
        ):
            rejections.add(
                supply,
                "interconnect",
                0,
                "{} inside the instance, below the required {}",
                supply.interconnect,
                min_interconnect,
            )
            continue
        shape = (
            supply.gpu_id,
            supply.gpus_per_unit,
            supply.interconnect,
            supply.network.network_class,
            supply.network.gbps,
            supply.host_ram_gib_per_gpu if memory.uses_host else None,
        )
        steps = shapes.get((shape, max_gpus))
        if steps is None:
            steps = shapes[shape, max_gpus] = _shape_steps(memory, rates, throughput, supply, gpu, max_gpus)
        if not steps:
            rejections.add(
                supply, "quota", 0, "one unit has {} GPUs, above max_gpus {}", supply.gpus_per_unit, max_gpus
            )
            continue
        table = _StepTable.cached(shapes, (shape, max_gpus), steps, amounts, work)
        if shape not in told:  # a later supply of the shape fails at the same counts: never more telling
            told.add(shape)
            for step in table.failed:
                assert step.rejection is not None
                rejections.add(supply, step.rejection[0], step.gpu_count, "{}", step.rejection[1])
        seller = (supply.gpu_id, supply.provider or supply.acquisition)
        grid.add(
            table.hours,
            table.units,
            table.gpu_counts,
            price=supply.usd_per_unit_hour,
            increment_s=supply.billing_increment_s,
            group=groups.setdefault(seller, len(groups)),
            gpu=gpu_numbers.setdefault(supply.gpu_id, len(gpu_numbers)),
            terms=supply.terms,
        )
        added.append((supply, steps))

    def at(row: int) -> tuple[Supply, _Step]:
        position = grid.supply_of(row)
        supply, steps = added[position]
        return supply, steps[row - grid.starts[position]]

    picked = select(grid, job, deadline_hours=deadline_hours, budget_usd=budget_usd)
    charges = picked.charges
    for i in picked.deadline_rejections:
        assert charges is not None
        supply, step = at(i)
        template_ = "{} GPU(s) need {:,.1f} h ({:.0%} confidence), over the {:g} h deadline"
        rejections.add(
            supply,
            "deadline",
            step.gpu_count,
            template_,
            step.gpu_count,
            charges.deadline_hours[i],
            DEADLINE_CONFIDENCE,
            deadline_hours,
        )
    for i in picked.budget_rejections:
        assert charges is not None
        supply, step = at(i)
        template_ = "{} GPU(s) cost ${:,.2f}, over the ${:,.2f} budget"
        rejections.add(
            supply, "budget", step.gpu_count, template_, step.gpu_count, charges.total_usd[i], budget_usd
        )
    summaries = [] if charges is None else ChargeSummary.many(charges, picked.kept)
    candidates = [
        _candidate(*at(i), grid.hours[i], summary, gpus)
        for i, summary in zip(picked.kept, summaries, strict=True)
    ]
    return Enumeration(
        candidates=candidates,
        rejections=rejections.kept(),
        configurations_tried=len(grid.hours),
        feasible=picked.feasible,
    )


class _Layout(msgspec.Struct, frozen=True, kw_only=True):
    """A parallel layout that fits, with its resolved workload and memory estimate."""

    resolved: ResolvedWorkload
    memory: MemoryEstimate


def _fit(
    memory: _MemoryCache, gpu_count: int, per_unit: int, interconnect: Interconnect, capacity_gib: float
) -> list[_Layout] | str:
    """For each checkpointing level to try, the first layout (least tensor parallelism, then least
    sharding) that fits ``capacity_gib``; or why none does. The planner keeps the fastest of them."""
    probe = memory.get(gpu_count, 1, "none", memory.recomputes()[0])
    if probe is None:
        return "no valid parallel layout"
    smallest: float | None = None
    found: list[_Layout] = []
    for recompute in memory.recomputes():
        for tp, sharding in _layouts(probe[0], gpu_count, per_unit, interconnect):
            entry = memory.get(gpu_count, tp, sharding, recompute)
            if entry is None:
                continue
            need = entry[1].per_gpu_gib
            smallest = need if smallest is None else min(smallest, need)
            if need <= capacity_gib:
                resolved = msgspec.structs.replace(entry[0], recompute_auto=False)
                found.append(_Layout(resolved=resolved, memory=entry[1]))
                break
    if found:
        return found
    return f"needs {smallest or 0:,.1f} GiB per GPU in the best layout on {gpu_count} GPU(s); has {capacity_gib:g} GiB"


_RateKey = tuple[str, int, int, str, str, float, int, str, str]


def _plain(layout: _Layout) -> bool:
    """Whether a layout has nothing a costlier checkpointing level could save: no tensor parallelism
    and no ZeRO-3 gathers (more checkpointing then only adds compute)."""
    return layout.resolved.tp == 1 and layout.resolved.sharding != "zero3"


def _fastest(
    options: list[_Layout],
    rates: dict[_RateKey, ThroughputEstimate | str],
    throughput: ThroughputFn,
    supply: Supply,
    gpu: GpuSpec,
    gpu_count: int,
) -> tuple[_Layout, ThroughputEstimate] | str:
    """The fitting layout with the most throughput, or why none has one. The least checkpointing is
    taken at once when its layout is plain; otherwise every level's layout is rated."""
    if _plain(options[0]):
        options = options[:1]
    best: tuple[_Layout, ThroughputEstimate] | None = None
    reason = ""
    for option in options:
        rate = _rate(rates, throughput, option.resolved, supply, gpu, gpu_count)
        if isinstance(rate, str):
            reason = reason or rate
        elif best is None or rate.value > best[1].value:
            best = (option, rate)
    return best if best is not None else reason


def _rate(
    cache: dict[_RateKey, ThroughputEstimate | str],
    throughput: ThroughputFn,
    resolved: ResolvedWorkload,
    supply: Supply,
    gpu: GpuSpec,
    gpu_count: int,
) -> ThroughputEstimate | str:
    """Throughput of ``gpu_count`` GPUs of ``supply`` in the chosen layout (cached per GPU, unit shape,
    network, count and layout: offers that differ only in price share it)."""
    network = supply.network
    key = (
        gpu.gpu_id,
        supply.gpus_per_unit,
        gpu_count,
        supply.interconnect,
        network.network_class,
        network.gbps,
        resolved.tp,
        resolved.sharding,
        resolved.recompute,
    )
    if key not in cache:
        topology = Topology(
            gpus_per_instance=supply.gpus_per_unit, interconnect=supply.interconnect, network=network
        )
        try:
            cache[key] = throughput(resolved, gpu, gpu_count, topology)
        except (ThroughputUnavailable, InvalidWorkload) as exc:
            cache[key] = str(exc)
    return cache[key]


def by_gpu(rejections: Iterable[Rejection]) -> dict[str, list[Rejection]]:
    grouped: dict[str, list[Rejection]] = {}
    for rejection in rejections:
        grouped.setdefault(rejection.gpu_id, []).append(rejection)
    return grouped
