"""The GPU counts one supply shape (GPU, unit size, interconnect, network) can run a job at.

For each count of units (:func:`gpu_counts`) the layout search
(:func:`~solver.throughput.layout_search.search_layout`) chooses the fastest parallel layout that fits
every rank's memory (within the plan's memory headroom) and meets the job's global batch; the
throughput model then rates it on the shape's links. A count that cannot run leaves its reason:
``memory``, ``global_batch`` (its data-parallel ranks would exceed the global batch), ``host`` (CPU
offload or paged state beyond the offer's host memory, or too few vCPUs to decode an image job's
JPEGs at its rate: :mod:`solver.throughput.data_loading`), ``network`` (instances that cannot
synchronise) or ``throughput``. Supplies of one shape differ only in price and billing, so this is
worked out once per shape (and kept in the :class:`~solver.optimise.plan_cache.PlanCache`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, NamedTuple

from solver.catalog.gpus import GpuSpec
from solver.catalog.network import spans_instances
from solver.errors import InvalidWorkload, RejectionReason, ThroughputUnavailable
from solver.spec.workload import ResolvedWorkload
from solver.throughput.calibration import ProfileIndex
from solver.throughput.data_loading import decode_shortfall
from solver.throughput.estimate import ThroughputEstimate, Topology
from solver.throughput.layout_search import LayoutCache, LayoutChoice, LayoutFailure, search_layout

__all__ = [
    "EXACT_COUNTS_UP_TO",
    "ShapeStep",
    "StepContext",
    "StepTable",
    "failure_rank",
    "gpu_counts",
    "shape_steps",
]

EXACT_COUNTS_UP_TO: Final = 512
"""GPU counts up to this are tried at every 8 (and 1, 2, 4); beyond, four per doubling (×1, ×1.25,
×1.5, ×1.75 of a power of two units): a 65,536-GPU plan tries ~90 counts, not 8,192."""

ThroughputFn = Callable[[ResolvedWorkload, GpuSpec, int, Topology], ThroughputEstimate]


def gpu_counts(gpus_per_unit: int, max_gpus: int) -> list[int]:
    """Unit counts to try: one unit, counts giving 2, 4, 8 or a multiple of 8 GPUs up to
    :data:`EXACT_COUNTS_UP_TO`, then four unit counts per doubling."""
    counts = []
    for units in range(1, max_gpus // gpus_per_unit + 1):
        n = units * gpus_per_unit
        if n <= EXACT_COUNTS_UP_TO:
            if units == 1 or n in (2, 4, 8) or n % 8 == 0:
                counts.append(units)
        elif (
            n % 8 == 0 and units >> max(units.bit_length() - 3, 0) << max(units.bit_length() - 3, 0) == units
        ):
            counts.append(units)
    return counts


class ShapeStep(NamedTuple):
    """One GPU count of a supply shape: its layout and throughput, or why it cannot run."""

    units: int
    gpu_count: int
    choice: LayoutChoice | None
    rate: ThroughputEstimate | None
    rejection: tuple[RejectionReason, str] | None
    need_gib: float = 0.0
    """For a ``memory`` rejection: the least per-GPU memory any layout at this count needs."""
    edge: LayoutChoice | None = None
    """A faster layout that fits only below the plan's memory headroom (the layout search's
    :attr:`~solver.throughput.layout_search.LayoutChoice.edge`), when the throughput model and the
    host agree it runs faster; with :attr:`edge_rate`, what the headroom costs at this count."""
    edge_rate: ThroughputEstimate | None = None


class StepContext(NamedTuple):
    """What every count of every shape of one plan shares."""

    template: ResolvedWorkload
    throughput: ThroughputFn
    profiles: ProfileIndex | None
    layouts: LayoutCache
    memory_headroom: float
    uses_host: bool
    decodes_images: bool = False
    """Whether the job trains on JPEGs its hosts decode (vision training), so vCPUs per GPU matter."""


def _failed(units: int, n: int, reason: RejectionReason, detail: str, need_gib: float = 0.0) -> ShapeStep:
    return ShapeStep(units, n, None, None, (reason, detail), need_gib)


def _step(
    context: StepContext,
    gpu: GpuSpec,
    topology: Topology,
    units: int,
    host: float | None,
    vcpus: float | None = None,
) -> ShapeStep:
    n = units * topology.gpus_per_instance
    try:
        found = search_layout(context.template, gpu, n, topology, context.profiles, cache=context.layouts,
                              memory_headroom=context.memory_headroom)  # fmt: skip
    except InvalidWorkload as exc:
        return _failed(units, n, "memory", exc.message)
    if isinstance(found, LayoutFailure):
        reason: RejectionReason = "network" if found.reason == "network" else found.reason
        return _with_edge(context, gpu, topology, _failed(units, n, reason, found.detail, found.need_gib),
                          found.edge, host, vcpus)  # fmt: skip
    if host is not None and context.uses_host and found.memory.host_ram_gib > host:
        detail = (f"needs {found.memory.host_ram_gib:,.1f} GiB of host memory per GPU (offloaded or paged "
                  f"state); the offer has {host:g} GiB per GPU")  # fmt: skip
        return _failed(units, n, "host", detail)
    try:
        rate = context.throughput(found.workload, gpu, n, topology)
    except (ThroughputUnavailable, InvalidWorkload) as exc:
        return _failed(units, n, "throughput", str(exc))
    if vcpus is not None and context.decodes_images:
        short = decode_shortfall(rate.value / n, vcpus)
        if short is not None:
            return _failed(units, n, "host", short)
    return _with_edge(context, gpu, topology, ShapeStep(units, n, found, rate, None), found.edge, host, vcpus)


def _with_edge(
    context: StepContext,
    gpu: GpuSpec,
    topology: Topology,
    step: ShapeStep,
    edge: LayoutChoice | None,
    host: float | None,
    vcpus: float | None,
) -> ShapeStep:
    """``step`` with the layout that fits only below the headroom, rated, when it runs on this shape
    (host memory, vCPUs) faster than the step's own layout; else ``step`` as it is."""
    if edge is None or (host is not None and context.uses_host and edge.memory.host_ram_gib > host):
        return step
    try:
        rate = context.throughput(edge.workload, gpu, step.gpu_count, topology)
    except (ThroughputUnavailable, InvalidWorkload):
        return step
    if step.rate is not None and rate.value <= step.rate.value:
        return step
    if vcpus is not None and context.decodes_images and decode_shortfall(rate.value / step.gpu_count, vcpus):
        return step
    return step._replace(edge=edge, edge_rate=rate)


def shape_steps(
    context: StepContext,
    gpu: GpuSpec,
    topology: Topology,
    max_gpus: int,
    host: float | None,
    vcpus: float | None = None,
) -> list[ShapeStep]:
    """The counts a shape can run at, with their layouts and throughputs (module docstring). The
    first count that cannot synchronise or has no throughput ends the list (more fare no better)."""
    steps: list[ShapeStep] = []
    training = not context.template.is_inference
    for units in gpu_counts(topology.gpus_per_instance, max_gpus):
        n = units * topology.gpus_per_instance
        if units > 1 and training and not spans_instances(topology.network):
            steps.append(_failed(units, n, "network",
                                 f"{units} instances cannot synchronise training: {topology.network.rule}"))  # fmt: skip
            break
        step = _step(context, gpu, topology, units, host, vcpus)
        steps.append(step)
        if step.rejection is not None and step.rejection[0] in ("throughput", "network"):
            break
    return steps


class StepTable(NamedTuple):
    """A shape's steps as grid columns for one amount of work (hours NaN where a step cannot run), and
    the hours of their layouts that fit only below the headroom (``edge_hours``, NaN where none)."""

    hours: list[float]
    units: list[int]
    gpu_counts: list[int]
    failed: list[ShapeStep]
    """Per reason a count fails for, the most telling failing step (the least memory needed for
    ``memory``, else the fewest GPUs; the first on a tie), in the order the reasons first appear: all
    a plan's rejections keep of the shape (:class:`~solver.optimise.candidates._Rejections`)."""
    edge_hours: list[float]
    has_edges: bool
    """Whether any step has an edge layout (an ``edge_hours`` entry that is not NaN)."""

    @classmethod
    def of(cls, steps: list[ShapeStep], amount: Callable[[str], float]) -> StepTable:
        edge_hours = [_hours(s.edge_rate, amount) for s in steps]
        return cls(
            hours=[_hours(s.rate, amount) for s in steps],
            units=[step.units for step in steps],
            gpu_counts=[step.gpu_count for step in steps],
            failed=_most_telling_failures(steps),
            edge_hours=edge_hours,
            has_edges=any(not math.isnan(h) for h in edge_hours),
        )


def failure_rank(step: ShapeStep) -> float:
    """How close a failing step came: the memory it needs for ``memory``, else its GPU count."""
    assert step.rejection is not None
    return step.need_gib if step.rejection[0] == "memory" else float(step.gpu_count)


def _most_telling_failures(steps: list[ShapeStep]) -> list[ShapeStep]:
    kept: dict[RejectionReason, ShapeStep] = {}
    for step in steps:
        if step.rejection is not None:
            held = kept.get(step.rejection[0])
            if held is None or failure_rank(step) < failure_rank(held):
                kept[step.rejection[0]] = step
    return list(kept.values())


def _hours(rate: ThroughputEstimate | None, amount: Callable[[str], float]) -> float:
    return math.nan if rate is None else amount(rate.unit) / rate.value / 3600
