"""What a portfolio MILP takes and returns: jobs with their options, serving demand, owned and buyable GPUs,
availability caps and budgets over a horizon of equal time buckets.

Conventions (all the room's code keeps them):

* Time runs in hours from the horizon's start; bucket ``t`` is ``[t·B, (t+1)·B)`` with ``B`` the bucket's
  hours. A job starts at the start of a bucket and runs without a break for its option's ``span_hours``
  (the planner's 90 %-confidence wall hours), so it must end by its deadline and inside the horizon.
* A ``splittable`` job may instead run in *stages* on one option: any set of buckets of its window, not
  necessarily adjacent, each doing a share ``w`` of the work (the shares add up to 1). A stage in bucket
  ``t`` takes ``restart_hours + w·span_hours`` of the window's hours in ``t`` (the stage starts at the
  bucket's start, or the earliest start; every stage, the first included, pays ``restart_hours`` to
  load its checkpoint and warm up); it costs ``w·cost_usd`` plus ``restart_hours`` at the option's
  hourly rate (``cost_usd ÷ hours``). A job that may split may still run without a break.
* A running job holds all its GPUs (and rented instances) in every bucket its run touches, even one it
  touches for an hour: capacity and caps are checked per bucket, never finer.
* A job's cost (the planner's complete charge, or its owned running cost) is spread over the buckets it
  runs in by the hours it runs in each; bought capital is spread evenly over the buckets.
* Owned GPUs are priced at their marginal running cost per busy GPU-hour (the capital is spent);
  a bought purchase unit adds its GPUs to every bucket and costs its capital amortised over the
  horizon's hours.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from solver.errors import SolverError

__all__ = [
    "AvailabilityCap",
    "BindingConstraint",
    "BucketUse",
    "BuyOption",
    "CapScope",
    "DroppedJob",
    "InfeasibleJob",
    "InfeasiblePortfolio",
    "JobOption",
    "JobSchedule",
    "OwnedPool",
    "PortfolioJob",
    "PortfolioProblem",
    "PortfolioResult",
    "Relaxation",
    "ServingBucket",
    "ServingDemand",
    "ServingOption",
    "Stage",
]

CapScope = Literal["offer", "provider", "gpu"]


class JobOption(msgspec.Struct, frozen=True, kw_only=True):
    """One way to run a job: ``instances`` units of one supply (``gpu_count`` GPUs) for ``span_hours``.

    ``acquisition`` ``own`` runs on the owned (or bought) GPUs of ``gpu_id`` at ``cost_usd`` (their
    running cost); ``rent`` rents ``instances`` of the offer ``supply_id`` from ``provider``."""

    option_id: str
    acquisition: Literal["rent", "own"]
    gpu_id: str
    gpu_count: int
    instances: int
    supply_id: str
    provider: str | None = None
    pricing: str = "on_demand"
    hours: float
    """Expected wall hours (what the GPUs are busy for)."""
    span_hours: float
    """The hours the schedule reserves: the 90 %-confidence wall hours, at least ``hours``."""
    cost_usd: float
    layout: str = ""


class PortfolioJob(msgspec.Struct, frozen=True, kw_only=True):
    """A job to schedule once, on one of its ``options``, between ``earliest_start_hour`` and its deadline."""

    name: str
    options: list[JobOption]
    earliest_start_hour: float = 0.0
    deadline_hour: float | None = None
    """The hour (from the horizon's start) by which it must end; ``None``: by the horizon's end."""
    priority: int = 0
    """Higher is more important: an infeasible portfolio names the lower-priority jobs first, and
    ``drop_lowest_priority`` keeps the subset of jobs with the largest sum of ``priority + 1``."""
    splittable: bool = False
    """Whether the job may be preempted and run in stages (see the module docstring)."""
    restart_hours: float = 0.0
    """The hours each stage of a split run spends restarting (checkpoint load, warm-up), charged."""


class ServingOption(msgspec.Struct, frozen=True, kw_only=True):
    """One instance type that serves: ``requests_per_s`` per instance (at the target utilisation)."""

    option_id: str
    acquisition: Literal["rent", "own"]
    gpu_id: str
    gpus_per_instance: int
    requests_per_s: float
    usd_per_instance_hour: float
    supply_id: str
    provider: str | None = None


class ServingDemand(msgspec.Struct, frozen=True, kw_only=True):
    """A serving workload: the request rate to meet in each bucket, and the instance types that serve it."""

    name: str
    requests_per_s: list[float]
    options: list[ServingOption]


class OwnedPool(msgspec.Struct, frozen=True, kw_only=True):
    """GPUs of one type already owned, and what one busy hour of one of them costs to run."""

    gpu_id: str
    gpus: int
    usd_per_gpu_hour: float


class BuyOption(msgspec.Struct, frozen=True, kw_only=True):
    """A GPU type that may be bought now, in whole purchase units of ``unit_gpus``."""

    gpu_id: str
    unit_gpus: int
    usd_per_unit: float
    """The capital of one unit amortised over the horizon (plus its fixed costs for the horizon)."""
    usd_per_gpu_hour: float
    """The running cost of one busy GPU-hour once bought (energy)."""
    max_units: int = 64


class AvailabilityCap(msgspec.Struct, frozen=True, kw_only=True):
    """At most ``max_instances`` rented instances at once of one offer, provider or GPU type."""

    scope: CapScope
    key: str
    max_instances: int


class PortfolioProblem(msgspec.Struct, frozen=True, kw_only=True):
    bucket_hours: float
    buckets: int
    jobs: list[PortfolioJob]
    serving: list[ServingDemand] = []
    owned: list[OwnedPool] = []
    buy: list[BuyOption] = []
    caps: list[AvailabilityCap] = []
    budgets: list[float | None] = []
    """Spend allowed per bucket (empty or ``None``: no budget)."""
    time_limit_s: float = 10.0
    mip_gap: float = 1e-4
    on_infeasible: Literal["explain", "drop_lowest_priority"] = "explain"
    """``explain``: no schedule is an error naming the jobs and fixes; ``drop_lowest_priority``: schedule
    the jobs whose ``priority + 1`` adds up to the most (then the cheapest such schedule), leaving the
    others out, each with why."""

    @property
    def horizon_hours(self) -> float:
        return self.bucket_hours * self.buckets


class Stage(msgspec.Struct, frozen=True, kw_only=True):
    """One stretch of a job's run: in ``bucket``, from ``start_hour`` to ``end_hour``, doing ``share`` of
    the work (a run without a break is one stage of share 1, which may cross buckets)."""

    bucket: int
    start_hour: float
    end_hour: float
    share: float
    hours: float
    """Busy hours of the GPUs in the stage (its share of the expected hours, plus its restart)."""
    cost_usd: float


class JobSchedule(msgspec.Struct, frozen=True, kw_only=True):
    job: str
    option: JobOption
    start_bucket: int
    start_hour: float
    end_hour: float
    cost_usd: float
    stages: list[Stage]
    """One stage for a run without a break; a split run's stages in bucket order."""
    cheapest_alone_usd: float
    """What the job's cheapest option meeting its own deadline costs, with nothing else to schedule."""
    why: str = ""
    """Why a dearer option than the cheapest alone (a cap, owned capacity, a budget), or empty."""


class ServingBucket(msgspec.Struct, frozen=True, kw_only=True):
    demand: str
    bucket: int
    requests_per_s: float
    instances: dict[str, int]
    """Instances per serving option id."""
    capacity_rps: float
    cost_usd: float


class BucketUse(msgspec.Struct, frozen=True, kw_only=True):
    bucket: int
    owned_gpus: dict[str, int]
    """GPUs owned (and bought) per type."""
    owned_busy_gpus: dict[str, int]
    """GPUs of each owned type held by jobs and serving in the bucket."""
    owned_utilization: dict[str, float]
    """Busy GPU-hours ÷ owned GPU-hours per type."""
    gpu_hours: dict[str, float]
    """Busy GPU-hours per type, owned and rented together: the work the bucket holds on each type."""
    rented_gpus: int
    rented_usd: float
    owned_usd: float
    capital_usd: float
    budget_usd: float | None

    @property
    def total_usd(self) -> float:
        return self.rented_usd + self.owned_usd + self.capital_usd


class BindingConstraint(msgspec.Struct, frozen=True, kw_only=True):
    kind: Literal["owned_capacity", "availability", "budget", "deadline"]
    name: str
    bucket: int | None
    detail: str


class Relaxation(msgspec.Struct, frozen=True, kw_only=True):
    """The smallest change found that makes an infeasible portfolio feasible, one constraint at a time."""

    kind: Literal["availability", "budget", "owned_capacity", "deadline"]
    name: str
    bucket: int | None
    current: float
    needed: float
    detail: str


class DroppedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A job ``drop_lowest_priority`` left out of the schedule, and why."""

    job: str
    priority: int
    reason: str


class InfeasibleJob(msgspec.Struct, frozen=True, kw_only=True):
    job: str
    reason: str
    fixes: list[Relaxation]


class PortfolioResult(msgspec.Struct, frozen=True, kw_only=True):
    status: Literal["optimal", "time_limited"]
    backend: str
    objective_usd: float
    gap: float | None
    solve_ms: float
    build_ms: float
    variables: int
    constraints: int
    message: str
    schedules: list[JobSchedule]
    serving: list[ServingBucket]
    buckets: list[BucketUse]
    bought: dict[str, int]
    """Purchase units bought per GPU type."""
    bought_usd: float
    alone_usd: float
    """Each job and each serving bucket planned alone on the rented market (no owned GPUs, no caps
    between them): what planning one job at a time would spend."""
    binding: list[BindingConstraint]
    dropped: list[DroppedJob] = []
    """Jobs left out (``drop_lowest_priority`` only, when not all fit), lowest priority first."""


class InfeasiblePortfolio(SolverError):
    """No schedule meets every deadline, cap, budget and owned capacity: ``jobs`` names the jobs that
    cannot fit, each with the smallest changes found that would let it."""

    def __init__(self, message: str, jobs: list[InfeasibleJob]) -> None:
        super().__init__(message)
        self.jobs = jobs
