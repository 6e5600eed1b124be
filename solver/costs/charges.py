"""The complete charge of a configuration: every dollar it takes to finish the work, not only the
compute hours.

For ``units`` instances (``gpus`` GPUs) at ``price`` per instance-hour that need ``H`` hours of
compute (the throughput model's answer), the run also spends, per the seller's terms
(:class:`SupplyTerms`) and the job's data (:class:`JobTerms`):

- **setup**: the instance start plus downloading the model and the dataset at the download rate;
- **data staging** (:func:`_staged_once`): the dataset is staged once to the seller's shared storage
  (network volume or filesystem), before the instances start, where the seller has one (not a
  marketplace: separate hosts share no storage) and that is cheaper than a copy per instance — the
  instances then neither wait for it (its download hours are elapsed, not billed) nor each pay its
  ingress and storage; otherwise every instance downloads and keeps its own copy;
- **checkpoints**: a training job writes a checkpoint of ``δ`` hours every ``τ`` hours of work
  (``H/τ`` of them), at the interval that minimises the expected total (:mod:`solver.costs.reliability`)
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
from scipy.special import ndtri, pdtr

from solver.costs.reliability import optimal_checkpoint_interval

__all__ = [
    "CHARGES",
    "CHARGE_NAMES",
    "COMPUTE_ONLY_TERMS",
    "DEADLINE_CONFIDENCE",
    "HOURS_PER_MONTH",
    "NOTHING_MOVED",
    "Charge",
    "ChargeSummary",
    "Charges",
    "JobTerms",
    "SupplyTerms",
    "complete_charges",
    "failure_rates",
    "preemption_rates",
    "supply_rates",
]

_Floats = npt.NDArray[np.float64]

HOURS_PER_MONTH: Final = 730.0
"""Hours in a billing month (8,760 / 12), as the clouds bill storage."""

DEADLINE_CONFIDENCE: Final = 0.9
"""The deadline holds with this probability over the number of interruptions (Poisson)."""


class Charge(msgspec.Struct, frozen=True):
    """One part of a total, declared once: its key in every ``breakdown`` (API, CLI, pages), a short
    label and what it charges. The explanation of a plan's figures (``cost.assumptions``) is keyed by
    the same names."""

    name: str
    label: str
    what: str


CHARGES: Final = (
    Charge("compute_usd", "compute", "the instances' price per hour × the compute hours of the work"),
    Charge("setup_usd", "setup", "starting the instances and downloading the model and the dataset"),
    Charge("checkpoint_usd", "checkpoints", "writing checkpoints at the interval that minimises the total"),
    Charge("failures_usd", "failures", "expected interruptions × (restart + half an interval of lost work)"),
    Charge(
        "preemption_usd", "preemption", "spot preemptions × (a new instance's start + restart + lost work)"
    ),
    Charge("billing_rounding_usd", "billing rounding", "the wall time billed up to whole increments"),
    Charge("storage_usd", "storage", "the dataset and the kept checkpoints for the wall time, per GB-month"),
    Charge(
        "data_transfer_usd",
        "data transfer",
        "downloads at the ingress price per instance, results out at egress",
    ),
)
"""The parts of a total, in the order a plan lists them."""

CHARGE_NAMES: Final = tuple(charge.name for charge in CHARGES)
"""The ``breakdown`` keys, in order."""


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
    shared_storage: bool = False
    """Whether the seller has storage its instances share, so a dataset can be staged once."""


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

    parts: dict[str, _Floats]
    """Per :data:`CHARGE_NAMES` entry, its charge on every row."""
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
    staging_hours: _Floats
    """Hours staging the dataset once to shared storage before the instances start (elapsed, not billed)."""
    shared_staging: _Floats
    """1 where the dataset is staged once to shared storage, 0 where each instance downloads a copy."""
    staging_saving_usd: _Floats
    """What a copy per instance would cost more than staging once (0 without a dataset)."""


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
    staging_hours: float = 0.0
    shared_staging: bool = False
    staging_saving_usd: float = 0.0

    @classmethod
    def of(cls, charges: Charges, row: int) -> ChargeSummary:
        return cls.many(charges, [row])[0]

    @classmethod
    def many(cls, charges: Charges, rows: list[int]) -> list[ChargeSummary]:
        """The summaries of ``rows``, taking each array's values at once (a plan keeps hundreds)."""
        parts = [charges.parts[name][rows].tolist() for name in CHARGE_NAMES]
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
                staging_hours=staging,
                shared_staging=shared > 0,
                staging_saving_usd=saving,
            )
            for values, (total, wall, deadline, billable, setup, checkpoint, interval, interruptions, preemptions,
                         lost, staging, shared, saving) in zip(zip(*parts, strict=True), zip(*other, strict=True),
                                                               strict=True)
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
    "staging_hours",
    "shared_staging",
    "staging_saving_usd",
)

_TERM_FIELDS: Final = {name: i for i, name in enumerate(SupplyTerms.__struct_fields__)}


def _poisson_quantile(mean: _Floats, q: float) -> _Floats:
    """The ``q`` quantile of Poisson counts of these means (the least ``k`` whose CDF reaches ``q``):
    0 wherever P(0) = e^-mean reaches ``q`` (most rows: few interruptions). The rest start at the
    Cornish-Fisher estimate and step to the exact count on the CDF: the same answer as
    ``scipy.stats.poisson.ppf`` (a test compares them), about 4x faster on a plan's thousand rows, since
    ``ppf`` inverts the incomplete gamma function iteratively per row."""
    found = np.zeros_like(mean)
    rest = mean > -np.log(q)
    if not rest.any():
        return found
    means = mean[rest]
    z = float(ndtri(q))
    counts = np.maximum(np.floor(means + z * np.sqrt(means) + (z * z - 1.0) / 6.0), 0.0)
    while (short := pdtr(counts, means) < q).any():  # never more than a few steps
        counts += short
    while (over := (counts > 0) & (pdtr(counts - 1.0, means) >= q)).any():
        counts -= over
    found[rest] = counts
    return found


def failure_rates(
    supply_rate: _Floats, network_share: _Floats, units: _Floats, gpus: _Floats, job: JobTerms
) -> _Floats:
    """Interruptions per hour of a job on ``gpus`` GPUs in ``units`` instances: the workload's own rate
    per GPU-hour, else the supply's, less the network's share when the job stays inside one instance."""
    if job.interruptions_per_gpu_hour is not None:
        return job.interruptions_per_gpu_hour * gpus
    inside_one = np.where(units > 1, 1.0, 1.0 - network_share)
    return supply_rate * gpus * inside_one


def preemption_rates(supply_rate: _Floats, units: _Floats, job: JobTerms) -> _Floats:
    """Preemptions per hour of ``units`` instances: the workload's own rate replaces a spot supply's
    (capacity that is never preempted stays at 0)."""
    if job.preemptions_per_hour is None:
        return supply_rate * units
    return np.where(supply_rate > 0, job.preemptions_per_hour * units, 0.0)


def supply_rates(terms: SupplyTerms, units: int, job: JobTerms) -> tuple[float, float]:
    """(interruptions per GPU-hour, preemptions per instance-hour) one configuration sees: the rules
    of :func:`failure_rates` and :func:`preemption_rates` for one GPU of one instance count."""
    one, count = np.ones(1), np.full(1, float(units))
    failures = failure_rates(
        one * terms.interruptions_per_gpu_hour, one * terms.network_interruption_share, count, one, job
    )
    preemptions = preemption_rates(one * terms.preemptions_per_hour, one, job)
    return float(failures[0]), float(preemptions[0])


class _Rows:
    """The supplies' terms repeated over their rows, one column per :class:`SupplyTerms` field."""

    def __init__(self, terms: list[SupplyTerms], sizes: npt.NDArray[np.int64]) -> None:
        per_supply = np.asarray([msgspec.structs.astuple(t) for t in terms], dtype=np.float64)
        self._rows = np.repeat(per_supply.reshape(len(terms), len(_TERM_FIELDS)), sizes, axis=0)

    def __call__(self, field: str) -> _Floats:
        return self._rows[:, _TERM_FIELDS[field]]


class _Time(NamedTuple):
    """Where a configuration's wall hours go besides compute."""

    setup: _Floats
    checkpoint: _Floats
    interval: _Floats
    interruptions: _Floats
    preemptions: _Floats
    failures: _Floats
    """Hours lost to interruptions (restarts and lost work)."""
    preemption: _Floats
    """Hours lost to preemptions."""

    def wall(self, hours: _Floats) -> _Floats:
        return hours + self.setup + self.checkpoint + self.failures + self.preemption

    def at_deadline_confidence(self, hours: _Floats) -> _Floats:
        """Wall hours with the :data:`DEADLINE_CONFIDENCE` quantile of the interruptions' number."""
        expected = self.interruptions + self.preemptions
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_loss = np.where(expected > 0, (self.failures + self.preemption) / expected, 0.0)
        quantile = _poisson_quantile(np.nan_to_num(expected), DEADLINE_CONFIDENCE)
        return hours + self.setup + self.checkpoint + quantile * mean_loss


def _interval(job: JobTerms, write: _Floats, rate: _Floats, hours: _Floats) -> _Floats:
    """Hours of work between checkpoints: none (inf) without checkpoints, the job's own, or the
    optimum for the write time and the mean time between interruptions."""
    if job.checkpoint_gb <= 0:
        return np.full_like(hours, np.inf)
    if job.checkpoint_every_hours is not None:
        return np.full_like(hours, job.checkpoint_every_hours)
    with np.errstate(divide="ignore"):
        mean_between = np.where(rate > 0, 1.0 / rate, np.inf)
    return optimal_checkpoint_interval(write, mean_between)


def _time(hours: _Floats, units: _Floats, gpus: _Floats, col: _Rows, job: JobTerms) -> _Time:
    hours_per_gb = 8.0 / 3600.0  # hours per GB at 1 Gbit/s
    setup = col("startup_hours") + job.download_gb * hours_per_gb / col("download_gbps")
    write = job.checkpoint_gb * hours_per_gb / (col("checkpoint_write_gbps") * units)
    failure_rate = failure_rates(
        col("interruptions_per_gpu_hour"), col("network_interruption_share"), units, gpus, job
    )
    preemption_rate = preemption_rates(col("preemptions_per_hour"), units, job)
    interval = _interval(job, write, failure_rate + preemption_rate, hours)
    with np.errstate(invalid="ignore"):
        checkpoint = np.where(np.isfinite(interval), hours / interval * write, 0.0)
        lost_work = np.minimum(interval, hours) / 2 if job.loses_work else np.zeros_like(hours)
    exposed = hours + checkpoint
    interruptions, preemptions = failure_rate * exposed, preemption_rate * exposed
    restart = col("restart_hours") if job.restart_hours is None else np.full_like(hours, job.restart_hours)
    return _Time(
        setup=setup,
        checkpoint=checkpoint,
        interval=interval,
        interruptions=interruptions,
        preemptions=preemptions,
        failures=interruptions * (restart + lost_work),
        preemption=preemptions * (restart + col("startup_hours") + lost_work),
    )


class _Staging(NamedTuple):
    shared: _Floats
    hours: _Floats
    saving: _Floats
    copies: _Floats
    ingress_gb: _Floats


def _staged_once(job: JobTerms, col: _Rows, units: _Floats, per_hour: _Floats, wall: _Floats) -> _Staging:
    """Where the dataset is staged once to shared storage and where each instance keeps a copy.

    A copy per instance costs, over staging once: the instances' wait while each downloads it
    (dataset ÷ download rate, at their hourly price) and the other ``units − 1`` copies' ingress and
    storage for the wall time. The wall time is the same either way (the staging precedes the
    instances instead of delaying them). Staging once needs the seller's shared storage."""
    hours_per_gb = 8.0 / 3600.0
    dataset_hours = job.dataset_gb * hours_per_gb / col("download_gbps")
    extra_copies = (units - 1.0) * job.dataset_gb
    saving = per_hour * dataset_hours + extra_copies * (
        col("ingress_usd_per_gb") + col("storage_usd_per_gb_month") * wall / HOURS_PER_MONTH
    )
    shared = np.where((col("shared_storage") > 0) & (saving > 0), 1.0, 0.0)
    model_gb = job.download_gb - job.dataset_gb
    return _Staging(
        shared=shared,
        hours=shared * dataset_hours,
        saving=saving,
        copies=np.where(shared > 0, 1.0, units),
        ingress_gb=units * model_gb + np.where(shared > 0, 1.0, units) * job.dataset_gb,
    )


def _billable(wall: _Floats, increment_s: _Floats) -> _Floats:
    """Wall hours billed up to whole increments (no increment: as they are)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.ceil(wall * 3600 / increment_s - 1e-9) * increment_s / 3600
    return np.where(increment_s > 0, whole, wall)


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
    col = _Rows(terms, sizes)
    hours, units, gpus = (np.asarray(a, dtype=np.float64) for a in (hours, units, gpus))
    time = _time(hours, units, gpus, col, job)
    wall = time.wall(hours)
    per_hour = price * units
    staging = _staged_once(job, col, units, per_hour, wall)
    billed_wall = wall - staging.hours  # the instances start once the dataset is staged
    billable = _billable(billed_wall, increment_s)
    storage_gb = staging.copies * job.dataset_gb + job.checkpoints_kept * job.checkpoint_gb
    transfer = staging.ingress_gb * col("ingress_usd_per_gb") + job.egress_gb * col("egress_usd_per_gb")
    parts = {
        "compute_usd": per_hour * hours,
        "setup_usd": per_hour * (time.setup - staging.hours),
        "checkpoint_usd": per_hour * time.checkpoint,
        "failures_usd": per_hour * time.failures,
        "preemption_usd": per_hour * time.preemption,
        "billing_rounding_usd": per_hour * np.maximum(billable - billed_wall, 0.0),
        "storage_usd": storage_gb * col("storage_usd_per_gb_month") * wall / HOURS_PER_MONTH,
        "data_transfer_usd": transfer,
    }
    assert tuple(parts) == CHARGE_NAMES, "every declared charge is computed, in order"
    return Charges(
        parts=parts,
        total_usd=sum(parts.values(), np.zeros_like(hours)),
        wall_hours=wall,
        deadline_hours=time.at_deadline_confidence(hours),
        billable_hours=billable,
        setup_hours=time.setup,
        checkpoint_hours=time.checkpoint,
        checkpoint_interval_hours=time.interval,
        interruptions=time.interruptions,
        preemptions=time.preemptions,
        lost_hours=time.failures + time.preemption,
        staging_hours=staging.hours,
        shared_staging=staging.shared,
        staging_saving_usd=np.where(job.dataset_gb > 0, staging.saving, 0.0),
    )
