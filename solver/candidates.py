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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import msgspec

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
    "filter", "ecc", "interconnect", "network", "quota", "memory", "throughput", "deadline", "budget"
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
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    price_source: str = ""
    sheet_version: int | None = None


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
    hours: float
    billable_hours: float
    usd_per_hour: float
    cost_usd: float


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """Why a supply (or all of a GPU's supplies) could not be used."""

    gpu_id: str
    reason: RejectionReason
    detail: str
    supply_id: str | None = None
    gpu_count: int = 0


class Enumeration(msgspec.Struct, frozen=True, kw_only=True):
    candidates: list[Candidate]
    rejections: list[Rejection]
    configurations_tried: int


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


class _MemoryCache:
    """Memory depends on the layout, not on the GPU type: estimate each (count, tp, sharding,
    recompute) once."""

    def __init__(self, template: Workload) -> None:
        self._template = template
        self._cache: dict[tuple[int, int, str, str], tuple[ResolvedWorkload, MemoryEstimate] | None] = {}

    def recomputes(self) -> tuple[Recompute, ...]:
        """The checkpointing levels to try: the stated one, or all (least first) when left out."""
        stated = self._template.recompute
        return RECOMPUTE_LEVELS if stated is None else (stated,)

    def get(
        self, gpu_count: int, tp: int, sharding: Sharding, recompute: Recompute
    ) -> tuple[ResolvedWorkload, MemoryEstimate] | None:
        key = (gpu_count, tp, sharding, recompute)
        if key not in self._cache:
            workload = msgspec.structs.replace(
                self._template, gpu_count=gpu_count, tp=tp, sharding=sharding, recompute=recompute
            )
            try:
                resolved = resolve_workload(workload)
            except InvalidWorkload:
                self._cache[key] = None
            else:
                self._cache[key] = (resolved, estimate_memory(resolved))
        return self._cache[key]


def _billable(hours: float, increment_s: int) -> float:
    if increment_s <= 0:
        return hours
    seconds = math.ceil(hours * 3600 / increment_s - 1e-9) * increment_s
    return seconds / 3600


def enumerate_candidates(
    template: Workload,
    supplies: Sequence[Supply],
    gpus: Mapping[str, GpuSpec],
    throughput: ThroughputFn,
    work: Callable[[str], WorkAmount],
    *,
    max_gpus: int,
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    min_interconnect: Interconnect | None = None,
    require_ecc: bool = False,
) -> Enumeration:
    """Every feasible configuration of ``supplies`` for the job ``template`` (layout fields ignored).

    ``work(unit)`` converts the job's work into the unit of a throughput (e.g. tokens for tokens_per_s).
    """
    memory = _MemoryCache(template)
    fits: dict[tuple[int, int, str, float], list[_Layout] | str] = {}
    rates: dict[tuple[str, int, int, str, int, str, str], ThroughputEstimate | str] = {}
    candidates: list[Candidate] = []
    rejections: list[Rejection] = []
    tried = 0
    for supply in supplies:
        gpu = gpus[supply.gpu_id]

        def reject(reason: RejectionReason, detail: str, gpu_count: int = 0, supply: Supply = supply) -> None:
            rejections.append(
                Rejection(
                    gpu_id=supply.gpu_id,
                    reason=reason,
                    detail=detail,
                    supply_id=supply.supply_id,
                    gpu_count=gpu_count,
                )
            )

        if require_ecc and gpu.ecc is not True:
            reject("ecc", "no ECC memory")
            continue
        if (
            min_interconnect is not None
            and INTERCONNECT_RANK[supply.interconnect] < INTERCONNECT_RANK[min_interconnect]
        ):
            reject(
                "interconnect",
                f"{supply.interconnect} inside the instance, below the required {min_interconnect}",
            )
            continue
        unit_counts = gpu_counts(supply.gpus_per_unit, max_gpus)
        if not unit_counts:
            reject("quota", f"one unit has {supply.gpus_per_unit} GPUs, above max_gpus {max_gpus}")
            continue
        for units in unit_counts:
            tried += 1
            gpu_count = units * supply.gpus_per_unit
            fit_key = (gpu_count, supply.gpus_per_unit, supply.interconnect, gpu.memory_gib)
            if fit_key not in fits:
                fits[fit_key] = _fit(
                    memory, gpu_count, supply.gpus_per_unit, supply.interconnect, gpu.memory_gib
                )
            options = fits[fit_key]
            if isinstance(options, str):
                reject("memory", options, gpu_count)
                continue
            if units > 1 and not options[0].resolved.is_inference and not spans_instances(supply.network):
                reject(
                    "network",
                    f"{units} instances cannot synchronise training: {supply.network.rule}",
                    gpu_count,
                )
                break
            found = [
                (option, _rate(rates, throughput, option.resolved, supply, gpu, gpu_count))
                for option in options
            ]
            rated = [(option, rate) for option, rate in found if not isinstance(rate, str)]
            if not rated:
                reject("throughput", str(found[0][1]), gpu_count)
                break
            layout, rate = max(rated, key=lambda pair: pair[1].value)  # the fastest layout that fits
            tp, sharding, mem = layout.resolved.tp, layout.resolved.sharding, layout.memory
            value = rate.value
            amount = work(rate.unit)
            hours = amount.amount / value / 3600
            billable = _billable(hours, supply.billing_increment_s)
            usd_per_hour = supply.usd_per_unit_hour * units
            cost = usd_per_hour * billable
            if deadline_hours is not None and hours > deadline_hours:
                reject(
                    "deadline",
                    f"{gpu_count} GPU(s) need {hours:,.1f} h, over the {deadline_hours:g} h deadline",
                    gpu_count,
                )
                continue
            if budget_usd is not None and cost > budget_usd:
                reject(
                    "budget",
                    f"{gpu_count} GPU(s) cost ${cost:,.2f}, over the ${budget_usd:,.2f} budget",
                    gpu_count,
                )
                continue
            candidates.append(
                Candidate(
                    supply=supply,
                    units=units,
                    gpu_count=gpu_count,
                    tp=tp,
                    sharding=sharding,
                    recompute=layout.resolved.recompute,
                    memory=mem,
                    capacity_gib=gpu.memory_gib,
                    throughput=rate,
                    hours=hours,
                    billable_hours=billable,
                    usd_per_hour=usd_per_hour,
                    cost_usd=cost,
                )
            )
    return Enumeration(candidates=candidates, rejections=rejections, configurations_tried=tried)


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


def _rate(
    cache: dict[tuple[str, int, int, str, int, str, str], ThroughputEstimate | str],
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
        f"{supply.interconnect}|{network.network_class}|{network.gbps:g}",
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
