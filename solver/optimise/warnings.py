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
- ``country_unknown``: with ``constraints.countries``, offers whose region names no country were
  excluded (raised by the service, which derives the countries);
- ``price_sheet_stale`` is raised by the service, which knows the sheets' ages;
- ``deadline_at_risk``: the deadline does not hold with :data:`DEADLINE_CONFIDENCE` over the
  interruptions (their 90th percentile) *and* the throughput band (:func:`deadline_probability`: the
  chance the lognormal throughput is fast enough, its spread from the band), with that chance.

:func:`hours_band` turns the throughput band into the band of compute hours; :func:`complete_bands`
adds setup, checkpoints and interruptions to give the bands of wall hours and complete cost.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from solver.costs.charges import DEADLINE_CONFIDENCE
from solver.optimise.candidates import Candidate
from solver.throughput.estimate import ThroughputEstimate
from solver.throughput.workclass import TRAINING_CLASSES

__all__ = [
    "ETHERNET_CLASSES",
    "LONG_RUN_DAYS",
    "PlanWarning",
    "WarningCode",
    "candidate_warnings",
    "complete_bands",
    "deadline_probability",
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
    "deadline_at_risk",
    "country_unknown",
    "availability_cap",
]
LONG_RUN_DAYS: Final = 30
ETHERNET_CLASSES: Final = frozenset({"ethernet"})
_Z90: Final = 1.2816  # the 90th percentile of a standard normal


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
        billed = hours - c.staging_hours  # staging precedes the instances: elapsed, not billed
        return candidate.usd_per_hour * _billable(billed, increment) + storage_per_hour * hours + fixed

    return (low, high), (cost(low), cost(high))


def _memory_band_warning(candidate: Candidate) -> PlanWarning | None:
    memory = candidate.memory
    if memory.band.high_gib <= candidate.capacity_gib:
        return None
    return PlanWarning(
        code="memory_band_exceeds_capacity",
        message=(
            f"memory per GPU is {memory.per_gpu_gib:,.1f} GiB (band up to {memory.band.high_gib:,.1f} GiB) "
            f"on {candidate.capacity_gib:g} GiB GPUs: a stack that allocates more than estimated would run "
            "out of memory; leave headroom (recompute, sharding, a smaller micro-batch)"
        ),
    )


def _long_run_warning(candidate: Candidate) -> PlanWarning | None:
    if candidate.hours <= LONG_RUN_DAYS * 24:
        return None
    return PlanWarning(
        code="long_run",
        message=(
            f"the job runs {candidate.hours / 24:,.0f} days, longer than {LONG_RUN_DAYS}: plan for "
            "failures and restarts (checkpoint), and for price changes over the run"
        ),
    )


def _low_confidence_warning(candidate: Candidate) -> PlanWarning | None:
    throughput = candidate.throughput
    if throughput.confidence != "low":
        return None
    return PlanWarning(
        code="low_confidence_throughput",
        message=(
            f"the throughput is a low-confidence derivation ({throughput.workload_class}/"
            f"{throughput.stack}, efficiency {throughput.efficiency.basis}); the hours band is wide: "
            "a measured row for this GPU and model would narrow it"
        ),
    )


def _ethernet_warning(candidate: Candidate) -> PlanWarning | None:
    throughput, network = candidate.throughput, candidate.supply.network
    if not (
        candidate.units > 1
        and throughput.workload_class in TRAINING_CLASSES  # inference replicas share nothing
        and network.network_class in ETHERNET_CLASSES
        and candidate.gpu_count > candidate.tp
    ):
        return None
    scaling = throughput.scaling
    kept = f"{scaling.efficiency:.0%}" if scaling else "an unknown share"
    return PlanWarning(
        code="multi_instance_ethernet",
        message=(
            f"training spans {candidate.units} instances over {network.network_class} "
            f"({network.gbps:g} Gbit/s): the job keeps {kept} of linear scaling, and gradient "
            "synchronisation over such networks varies a lot"
        ),
    )


def _host_unknown_warning(candidate: Candidate) -> PlanWarning | None:
    memory, supply = candidate.memory, candidate.supply
    if not (memory.host_ram_gib > 0 and supply.acquisition == "rent" and supply.host_ram_gib_per_gpu is None):
        return None
    return PlanWarning(
        code="host_unknown",
        message=(
            f"the job keeps {memory.host_ram_gib:,.1f} GiB per GPU in host memory (offloaded or paged "
            f"state), and {supply.instance_type} does not state its host memory: check it holds that"
        ),
    )


def deadline_probability(candidate: Candidate, deadline_hours: float) -> float:
    """The chance ``candidate`` finishes within ``deadline_hours``: the interruptions at their 90th
    percentile, the throughput lognormal around its value with the spread of its 10-90 % band (the
    compute, checkpoint and lost hours move with it; setup does not)."""
    c, throughput = candidate.charges, candidate.throughput
    base = candidate.compute_hours + c.setup_hours + c.checkpoint_hours
    moving = candidate.compute_hours + c.checkpoint_hours + max(c.deadline_hours - base, c.lost_hours)
    room = deadline_hours - c.setup_hours
    if moving <= 0:
        return 1.0 if room >= 0 else 0.0
    if room <= 0:
        return 0.0
    sigma = (
        math.log(throughput.band.high / throughput.value) / _Z90
        if throughput.band.high > throughput.value
        else 0.0
    )
    slack = math.log(room / moving)  # how much slower than its value the throughput may run
    if sigma <= 0:
        return 1.0 if slack >= 0 else 0.0
    return 0.5 * (1.0 + math.erf(slack / sigma / math.sqrt(2.0)))


def _deadline_warning(candidate: Candidate, deadline_hours: float | None) -> PlanWarning | None:
    if deadline_hours is None:
        return None
    chance = deadline_probability(candidate, deadline_hours)
    if chance >= DEADLINE_CONFIDENCE:
        return None
    return PlanWarning(
        code="deadline_at_risk",
        message=(
            f"the {deadline_hours:g} h deadline holds with {chance:.0%} confidence over interruptions and the "
            f"throughput band (below {DEADLINE_CONFIDENCE:.0%}): expected {candidate.hours:,.1f} h, likely up to "
            f"{complete_bands(candidate)[0][1]:,.1f} h; more GPUs or a longer deadline would secure it"
        ),
    )


_CANDIDATE_CHECKS: Final = (
    _memory_band_warning,
    _long_run_warning,
    _low_confidence_warning,
    _ethernet_warning,
    _host_unknown_warning,
)


def candidate_warnings(candidate: Candidate, deadline_hours: float | None = None) -> list[PlanWarning]:
    """The warnings a chosen job candidate raises (codes in the module docstring), in that order."""
    found = [w for check in _CANDIDATE_CHECKS if (w := check(candidate)) is not None]
    deadline = _deadline_warning(candidate, deadline_hours)
    return found if deadline is None else [*found, deadline]
