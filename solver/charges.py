"""The complete charge of a configuration: every dollar it takes to finish the work, not only the
compute hours.

For ``units`` instances (``gpus`` GPUs) at ``price`` per instance-hour that need ``H`` hours of
compute (the throughput model's answer), the run also spends, per the seller's terms
(:class:`SupplyTerms`) and the job's data (:class:`JobTerms`):

- **setup**: the instance start plus downloading the model and the dataset at the download rate;
- **checkpoints**: a training job writes a checkpoint of ``δ`` hours every ``τ`` hours of work
  (``H/τ`` of them), at the interval that minimises the expected total (:mod:`solver.reliability`)
  unless the job fixes it;
- **failures**: ``λ·n`` interruptions per hour of a job on ``n`` GPUs, each costing the restart time
  plus half an interval of lost work (inference loses no work: finished outputs are kept);
- **preemption** (spot only): ``p·units`` preemptions per hour, each costing a new instance's start,
  the restart and the lost work;
- **billing rounding**: the wall time (compute plus all of the above) billed up to whole increments;
- **storage**: the dataset and the kept checkpoints for the run's wall time at the seller's
  $/GB-month (730 hours a month);
- **data transfer**: the downloads at the seller's ingress price per instance, the results at its
  egress price.

Every term is computed on arrays (one row per configuration), so a plan prices thousands of
configurations at once; the deadline is checked against the wall time with the 90th percentile of a
Poisson number of interruptions, so a plan on interruptible capacity keeps its deadline with 90 %
confidence.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

import msgspec
import numpy as np
import numpy.typing as npt
from scipy.stats import poisson

from solver.reliability import optimal_checkpoint_interval

__all__ = [
    "CHARGE_NAMES",
    "COMPUTE_ONLY_TERMS",
    "DEADLINE_CONFIDENCE",
    "HOURS_PER_MONTH",
    "NOTHING_MOVED",
    "ChargeSummary",
    "Charges",
    "JobTerms",
    "SupplyTerms",
    "complete_charges",
]

_Floats = npt.NDArray[np.float64]

HOURS_PER_MONTH: Final = 730.0
"""Hours in a billing month (8,760 / 12), as the clouds bill storage."""

DEADLINE_CONFIDENCE: Final = 0.9
"""The deadline holds with this probability over the number of interruptions (Poisson)."""

CHARGE_NAMES: Final = (
    "compute_usd",
    "setup_usd",
    "checkpoint_usd",
    "failures_usd",
    "preemption_usd",
    "billing_rounding_usd",
    "storage_usd",
    "data_transfer_usd",
)
"""The parts of a total, in the order a plan lists them."""


class SupplyTerms(msgspec.Struct, frozen=True, kw_only=True):
    """What a seller charges or takes beyond the instance-hour, and how often its capacity fails."""

    startup_hours: float
    download_gbps: float
    checkpoint_write_gbps: float
    storage_usd_per_gb_month: float
    egress_usd_per_gb: float
    ingress_usd_per_gb: float
    preemptions_per_hour: float
    """Per instance-hour; 0 unless the supply is spot capacity."""
    interruptions_per_gpu_hour: float
    network_interruption_share: float
    """The share of interruptions a job inside one instance does not see (the network's)."""
    restart_hours: float


class JobTerms(msgspec.Struct, frozen=True, kw_only=True):
    """What the job moves and keeps: GB downloaded into each instance, kept on storage and sent out,
    the checkpoint size (0: the job does not checkpoint) and a fixed checkpoint interval if any."""

    download_gb: float
    dataset_gb: float
    checkpoint_gb: float
    checkpoints_kept: int
    egress_gb: float
    checkpoint_every_hours: float | None
    loses_work: bool
    """Whether an interruption loses the work since the last checkpoint (training) or only the restart."""
    interruptions_per_gpu_hour: float | None = None
    """The workload's own rate (replaces every supply's; no network share taken off)."""
    restart_hours: float | None = None
    preemptions_per_hour: float | None = None
    """The workload's own spot preemption rate per instance-hour (replaces the sellers' on spot supplies)."""


COMPUTE_ONLY_TERMS: Final = SupplyTerms(
    startup_hours=0.0,
    download_gbps=float("inf"),
    checkpoint_write_gbps=float("inf"),
    storage_usd_per_gb_month=0.0,
    egress_usd_per_gb=0.0,
    ingress_usd_per_gb=0.0,
    preemptions_per_hour=0.0,
    interruptions_per_gpu_hour=0.0,
    network_interruption_share=0.0,
    restart_hours=0.0,
)
"""A seller whose costs beyond the hour are unknown (no provider-costs sheet): compute hours only."""

NOTHING_MOVED: Final = JobTerms(
    download_gb=0.0,
    dataset_gb=0.0,
    checkpoint_gb=0.0,
    checkpoints_kept=0,
    egress_gb=0.0,
    checkpoint_every_hours=None,
    loses_work=False,
)
"""A job that moves, keeps and loses nothing besides its compute (the solver's default)."""


class Charges(NamedTuple):
    """The charges of each configuration (arrays of one length), with the figures behind them."""

    compute_usd: _Floats
    setup_usd: _Floats
    checkpoint_usd: _Floats
    failures_usd: _Floats
    preemption_usd: _Floats
    billing_rounding_usd: _Floats
    storage_usd: _Floats
    data_transfer_usd: _Floats
    total_usd: _Floats
    wall_hours: _Floats
    deadline_hours: _Floats
    """Wall hours with the :data:`DEADLINE_CONFIDENCE` quantile of interruptions."""
    billable_hours: _Floats
    setup_hours: _Floats
    checkpoint_hours: _Floats
    checkpoint_interval_hours: _Floats
    interruptions: _Floats
    preemptions: _Floats
    lost_hours: _Floats


class ChargeSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One configuration's charges (:data:`CHARGE_NAMES` in ``breakdown``) and the figures behind them."""

    breakdown: dict[str, float]
    total_usd: float
    wall_hours: float
    deadline_hours: float
    billable_hours: float
    setup_hours: float
    checkpoint_hours: float
    checkpoint_interval_hours: float | None
    """``None``: no checkpoint before the end (an inference job, or no interruptions expected)."""
    interruptions: float
    preemptions: float
    lost_hours: float

    @classmethod
    def of(cls, charges: Charges, row: int) -> ChargeSummary:
        return cls.many(charges, [row])[0]

    @classmethod
    def many(cls, charges: Charges, rows: list[int]) -> list[ChargeSummary]:
        """The summaries of ``rows``, taking each array's values at once (a plan keeps hundreds)."""
        parts = [getattr(charges, name)[rows].tolist() for name in CHARGE_NAMES]
        other = [getattr(charges, name)[rows].tolist() for name in _FIGURES]
        return [
            cls(
                breakdown=dict(zip(CHARGE_NAMES, values, strict=True)),
                total_usd=total,
                wall_hours=wall,
                deadline_hours=deadline,
                billable_hours=billable,
                setup_hours=setup,
                checkpoint_hours=checkpoint,
                checkpoint_interval_hours=interval if math.isfinite(interval) else None,
                interruptions=interruptions,
                preemptions=preemptions,
                lost_hours=lost,
            )
            for values, (total, wall, deadline, billable, setup, checkpoint, interval, interruptions, preemptions,
                         lost) in zip(zip(*parts, strict=True), zip(*other, strict=True), strict=True)
        ]  # fmt: skip


_FIGURES: Final = (
    "total_usd",
    "wall_hours",
    "deadline_hours",
    "billable_hours",
    "setup_hours",
    "checkpoint_hours",
    "checkpoint_interval_hours",
    "interruptions",
    "preemptions",
    "lost_hours",
)

_TERM_FIELDS: Final = {name: i for i, name in enumerate(SupplyTerms.__struct_fields__)}


def _poisson_quantile(mean: _Floats, q: float) -> _Floats:
    """The ``q`` quantile of Poisson counts of these means: 0 wherever P(0) = e^-mean reaches ``q``
    (most rows: few interruptions), scipy's exact quantile for the rest."""
    found = np.zeros_like(mean)
    rest = mean > -np.log(q)
    if rest.any():
        found[rest] = poisson.ppf(q, mean[rest])
    return found


def complete_charges(
    hours: _Floats,
    units: _Floats,
    gpus: _Floats,
    price: _Floats,
    increment_s: _Floats,
    terms: list[SupplyTerms],
    sizes: npt.NDArray[np.int64],
    job: JobTerms,
) -> Charges:
    """The charges of every row: ``hours`` of compute on ``units`` instances (``gpus`` GPUs) at
    ``price`` per instance-hour billed in ``increment_s``; ``terms`` per supply, repeated over the
    ``sizes`` rows of each."""

    per_supply = np.asarray([msgspec.structs.astuple(t) for t in terms], dtype=np.float64).reshape(
        len(terms), len(_TERM_FIELDS)
    )
    rows = np.repeat(per_supply, sizes, axis=0)

    def col(field: str) -> _Floats:
        return rows[:, _TERM_FIELDS[field]]

    hours, units, gpus = (np.asarray(a, dtype=np.float64) for a in (hours, units, gpus))

    seconds_per_gb = 8.0 / 3600.0  # hours per GB at 1 Gbit/s
    setup = col("startup_hours") + job.download_gb * seconds_per_gb / col("download_gbps")
    write = job.checkpoint_gb * seconds_per_gb / (col("checkpoint_write_gbps") * units)
    if job.interruptions_per_gpu_hour is None:
        inside_one = np.where(units > 1, 1.0, 1.0 - col("network_interruption_share"))
        failure_rate = col("interruptions_per_gpu_hour") * gpus * inside_one
    else:
        failure_rate = job.interruptions_per_gpu_hour * gpus
    preemption_rate = col("preemptions_per_hour") * units
    if job.preemptions_per_hour is not None:
        preemption_rate = np.where(preemption_rate > 0, job.preemptions_per_hour * units, 0.0)
    rate = failure_rate + preemption_rate
    with np.errstate(divide="ignore"):
        mean_between = np.where(rate > 0, 1.0 / rate, np.inf)
    if job.checkpoint_gb <= 0:
        interval = np.full_like(hours, np.inf)
    elif job.checkpoint_every_hours is not None:
        interval = np.full_like(hours, job.checkpoint_every_hours)
    else:
        interval = optimal_checkpoint_interval(write, mean_between)
    with np.errstate(invalid="ignore"):
        checkpoint_hours = np.where(np.isfinite(interval), hours / interval * write, 0.0)
        lost_work = np.minimum(interval, hours) / 2 if job.loses_work else np.zeros_like(hours)
    exposed = hours + checkpoint_hours
    interruptions, preemptions = failure_rate * exposed, preemption_rate * exposed
    restart = col("restart_hours") if job.restart_hours is None else np.full_like(hours, job.restart_hours)
    failure_loss, preemption_loss = restart + lost_work, restart + col("startup_hours") + lost_work
    failures_h, preemption_h = interruptions * failure_loss, preemptions * preemption_loss
    wall = hours + setup + checkpoint_hours + failures_h + preemption_h
    expected = interruptions + preemptions
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_loss = np.where(expected > 0, (failures_h + preemption_h) / expected, 0.0)
    quantile = _poisson_quantile(np.nan_to_num(expected), DEADLINE_CONFIDENCE)
    deadline = hours + setup + checkpoint_hours + quantile * mean_loss
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.ceil(wall * 3600 / increment_s - 1e-9) * increment_s / 3600
    billable = np.where(increment_s > 0, whole, wall)
    per_hour = price * units
    storage_gb = job.dataset_gb + job.checkpoints_kept * job.checkpoint_gb
    transfer = units * job.download_gb * col("ingress_usd_per_gb") + job.egress_gb * col("egress_usd_per_gb")
    parts = {
        "compute_usd": per_hour * hours,
        "setup_usd": per_hour * setup,
        "checkpoint_usd": per_hour * checkpoint_hours,
        "failures_usd": per_hour * failures_h,
        "preemption_usd": per_hour * preemption_h,
        "billing_rounding_usd": per_hour * np.maximum(billable - wall, 0.0),
        "storage_usd": storage_gb * col("storage_usd_per_gb_month") * wall / HOURS_PER_MONTH,
        "data_transfer_usd": transfer,
    }
    return Charges(
        **parts,
        total_usd=sum(parts.values(), np.zeros_like(hours)),
        wall_hours=wall,
        deadline_hours=deadline,
        billable_hours=billable,
        setup_hours=setup,
        checkpoint_hours=checkpoint_hours,
        checkpoint_interval_hours=interval,
        interruptions=interruptions,
        preemptions=preemptions,
        lost_hours=failures_h + preemption_h,
    )
