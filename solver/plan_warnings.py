"""What a plan should warn about, with a stable code each, and the band its hours and cost span.

The MILP optimises the central estimate; these say how far to trust it:

- ``memory_band_exceeds_capacity``: the high end of the memory band is above the GPU's memory (the
  central estimate fits, but a stack that allocates more would run out);
- ``long_run``: the job runs longer than :data:`LONG_RUN_DAYS` (failures, preemptions and price changes
  start to matter; checkpoint it);
- ``low_confidence_throughput``: the throughput rests on hardware factors alone, a proxied peak or a
  prior efficiency (``confidence`` low);
- ``multi_instance_ethernet``: training spans instances over an ethernet-class network, where gradient
  synchronisation is slow and the estimate least certain;
- ``low_confidence_capacity`` (serving): a replica's capacity is derived with low confidence;
- ``host_unknown``: the chosen rental offer does not state a host number the job needs (host memory
  for CPU offload here; the service adds the request's ``host`` numbers), so it could not be checked;
- ``price_sheet_stale`` is raised by the service, which knows the sheets' ages.

:func:`hours_band` turns the throughput band into the band of compute hours; :func:`complete_bands`
adds setup, checkpoints and interruptions to give the bands of wall hours and complete cost.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from solver.candidates import Candidate
from solver.throughput import ThroughputEstimate
from solver.workclass import TRAINING_CLASSES

__all__ = [
    "ETHERNET_CLASSES",
    "LONG_RUN_DAYS",
    "PlanWarning",
    "WarningCode",
    "candidate_warnings",
    "complete_bands",
    "hours_band",
]

WarningCode = Literal[
    "memory_band_exceeds_capacity",
    "long_run",
    "low_confidence_throughput",
    "multi_instance_ethernet",
    "low_confidence_capacity",
    "price_sheet_stale",
    "host_unknown",
]
LONG_RUN_DAYS: Final = 30
ETHERNET_CLASSES: Final = frozenset({"ethernet"})


class PlanWarning(msgspec.Struct, frozen=True, kw_only=True):
    """A reason to doubt or watch a plan, with a stable ``code``."""

    code: WarningCode
    message: str


def hours_band(work: float, throughput: ThroughputEstimate) -> tuple[float, float]:
    """(low, high) hours to finish ``work`` units at the throughput's band (the faster end first)."""
    return work / throughput.band.high / 3600.0, work / throughput.band.low / 3600.0


def _billable(hours: float, increment_s: int) -> float:
    if increment_s <= 0:
        return hours
    return math.ceil(hours * 3600 / increment_s - 1e-9) * increment_s / 3600


def complete_bands(candidate: Candidate) -> tuple[tuple[float, float], tuple[float, float]]:
    """(low, high) wall hours and (low, high) complete cost of a candidate.

    The compute hours move with the throughput band, and so do the checkpoint time and the work lost;
    the low end has no interruption, the high end the 90th-percentile number of them (a spot supply's
    band widens by its preemptions). Billing increments apply to both ends; storage follows the wall
    hours; setup and data transfer do not move."""
    c = candidate.charges
    work = candidate.compute_hours * candidate.throughput.value * 3600
    compute_low, compute_high = hours_band(work, candidate.throughput)
    scale_low = compute_low / candidate.compute_hours if candidate.compute_hours > 0 else 1.0
    scale_high = compute_high / candidate.compute_hours if candidate.compute_hours > 0 else 1.0
    base = candidate.compute_hours + c.setup_hours + c.checkpoint_hours
    p90_loss = max(c.deadline_hours - base, c.lost_hours)  # never below the expected loss
    low = compute_low + c.setup_hours + c.checkpoint_hours * scale_low
    high = compute_high + c.setup_hours + (c.checkpoint_hours + p90_loss) * scale_high
    increment = candidate.supply.billing_increment_s
    storage_per_hour = c.breakdown["storage_usd"] / c.wall_hours if c.wall_hours > 0 else 0.0
    fixed = c.breakdown["data_transfer_usd"]

    def cost(hours: float) -> float:
        return candidate.usd_per_hour * _billable(hours, increment) + storage_per_hour * hours + fixed

    return (low, high), (cost(low), cost(high))


def candidate_warnings(candidate: Candidate) -> list[PlanWarning]:
    """The warnings a chosen job candidate raises (codes in the module docstring)."""
    found: list[PlanWarning] = []
    memory = candidate.memory
    if memory.band.high_gib > candidate.capacity_gib:
        found.append(
            PlanWarning(
                code="memory_band_exceeds_capacity",
                message=(
                    f"memory per GPU is {memory.per_gpu_gib:,.1f} GiB (band up to {memory.band.high_gib:,.1f} GiB) "
                    f"on {candidate.capacity_gib:g} GiB GPUs: a stack that allocates more than estimated would run "
                    "out of memory; leave headroom (recompute, sharding, a smaller micro-batch)"
                ),
            )
        )
    if candidate.hours > LONG_RUN_DAYS * 24:
        found.append(
            PlanWarning(
                code="long_run",
                message=(
                    f"the job runs {candidate.hours / 24:,.0f} days, longer than {LONG_RUN_DAYS}: plan for "
                    "failures and restarts (checkpoint), and for price changes over the run"
                ),
            )
        )
    throughput = candidate.throughput
    if throughput.confidence == "low":
        found.append(
            PlanWarning(
                code="low_confidence_throughput",
                message=(
                    f"the throughput is a low-confidence derivation ({throughput.workload_class}/"
                    f"{throughput.stack}, efficiency {throughput.efficiency.basis}); the hours band is wide: "
                    "a measured row for this GPU and model would narrow it"
                ),
            )
        )
    network = candidate.supply.network
    if (
        candidate.units > 1
        and throughput.workload_class in TRAINING_CLASSES  # inference replicas share nothing
        and network.network_class in ETHERNET_CLASSES
        and candidate.gpu_count > candidate.tp
    ):
        scaling = throughput.scaling
        kept = f"{scaling.efficiency:.0%}" if scaling else "an unknown share"
        found.append(
            PlanWarning(
                code="multi_instance_ethernet",
                message=(
                    f"training spans {candidate.units} instances over {network.network_class} "
                    f"({network.gbps:g} Gbit/s): the job keeps {kept} of linear scaling, and gradient "
                    "synchronisation over such networks varies a lot"
                ),
            )
        )
    supply = candidate.supply
    if memory.host_ram_gib > 0 and supply.acquisition == "rent" and supply.host_ram_gib_per_gpu is None:
        found.append(
            PlanWarning(
                code="host_unknown",
                message=(
                    f"the job keeps {memory.host_ram_gib:,.1f} GiB per GPU in host memory (offloaded or paged "
                    f"state), and {supply.instance_type} does not state its host memory: check it holds that"
                ),
            )
        )
    return found
