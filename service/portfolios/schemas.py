"""Request and response bodies of ``POST /v1/portfolios`` (msgspec Structs; OpenAPI comes from them).

A date is ``YYYY-MM-DD`` (UTC); a time given as a number is hours from the horizon's start. An
``earliest_start`` date means the start of that day, a ``deadline`` date the end of that day.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from solver import JobPlanRequest, ServingPlan

__all__ = [
    "AvailabilityIn",
    "BucketOut",
    "BuyIn",
    "BuyOut",
    "ConstraintOut",
    "DroppedOut",
    "HorizonIn",
    "JobIn",
    "JobOut",
    "OwnedIn",
    "PortfolioOut",
    "PortfolioRequest",
    "ServingIn",
    "ServingOut",
    "SolverOut",
    "StageOut",
]

_Name = Annotated[str, Meta(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._:/+-]*$")]
_When = Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$")] | Annotated[float, Meta(ge=0, le=1e6)]
_Gpu = Annotated[str, Meta(min_length=1, max_length=200, description="GPU id, name or alias")]


class HorizonIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    start: Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$", description="First day (UTC), YYYY-MM-DD")]
    buckets: Annotated[int, Meta(ge=1, le=104, description="How many time buckets the horizon has")]
    bucket: Annotated[Literal["day", "week"], Meta(description="The length of one bucket")] = "week"


class JobIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: _Name
    plan: Annotated[
        JobPlanRequest,
        Meta(description="The job as POST /v1/plans takes it (its deadline is ignored: use deadline here)"),
    ]
    earliest_start: _When | None = None
    deadline: _When | None = None
    priority: Annotated[
        int,
        Meta(
            ge=0,
            le=100,
            description="Higher is more important: with on_infeasible drop_lowest_priority the jobs kept "
            "are those whose priority + 1 adds up to the most",
        ),
    ] = 0
    splittable: Annotated[
        bool,
        Meta(
            description="May be preempted and run in stages: its work on one configuration spread over "
            "any buckets of its window, not necessarily adjacent, a share in each (it may still run whole)"
        ),
    ] = False
    restart_hours: Annotated[
        float,
        Meta(
            ge=0,
            le=168,
            description="Hours each stage of a split run spends restarting (checkpoint load, warm-up), "
            "reserved in its bucket and charged at the configuration's hourly cost",
        ),
    ] = 0.0


class ServingIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: _Name
    plan: Annotated[
        ServingPlan,
        Meta(description="The serving workload as POST /v1/plans takes it (its rate is bucket 0's)"),
    ]
    requests_per_s: (
        Annotated[list[Annotated[float, Meta(ge=0, le=1e7)]], Meta(min_length=1, max_length=104)] | None
    ) = None
    """The rate per bucket; omitted: the plan's rate grown by ``growth_per_bucket``."""
    growth_per_bucket: Annotated[float, Meta(ge=-0.5, le=10)] = 0.0


class OwnedIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    gpu: _Gpu
    count: Annotated[int, Meta(ge=1, le=100_000)]
    usd_per_gpu_hour: Annotated[float, Meta(ge=0, le=1000)] | None = None
    """The marginal running cost of one busy GPU-hour; omitted: the ownership sheet's busy energy."""


class BuyIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    gpu: _Gpu
    max_units: Annotated[int, Meta(ge=1, le=1000)] = 16


class AvailabilityIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    scope: Literal["offer", "provider", "gpu"]
    key: Annotated[str, Meta(min_length=1, max_length=200, description="Offer id, provider or GPU")]
    max_instances: Annotated[int, Meta(ge=0, le=1_000_000)]


class PortfolioRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    horizon: HorizonIn
    jobs: Annotated[list[JobIn], Meta(max_length=200)] = []
    serving: Annotated[list[ServingIn], Meta(max_length=20)] = []
    owned: Annotated[list[OwnedIn], Meta(max_length=50)] = []
    buy: Annotated[list[BuyIn], Meta(max_length=20)] = []
    availability: Annotated[list[AvailabilityIn], Meta(max_length=200)] = []
    budget: (
        Annotated[float, Meta(gt=0, le=1e12)]
        | Annotated[list[Annotated[float, Meta(gt=0, le=1e12)] | None], Meta(max_length=104)]
        | None
    ) = None
    """Spend allowed per bucket: one figure for every bucket, or one per bucket."""
    top_k: Annotated[int, Meta(ge=1, le=20, description="Options kept per job (plus its fastest)")] = 6
    on_infeasible: Annotated[
        Literal["explain", "drop_lowest_priority"],
        Meta(
            description="When no schedule meets every deadline, cap, budget and owned capacity: explain "
            "(a 422 naming the jobs and fixes) or drop_lowest_priority (schedule the jobs whose "
            "priority + 1 adds up to the most, at the least cost, and list the others in dropped)"
        ),
    ] = "explain"
    time_limit_s: Annotated[float, Meta(gt=0, le=120)] = 20.0


class StageOut(msgspec.Struct, frozen=True, kw_only=True):
    """A stretch of a job's run: one for a run without a break, one per bucket of a split run (every
    stage on the job's GPUs)."""

    bucket: int
    gpu: str
    gpu_count: int
    start: str
    end: str
    start_hour: float
    end_hour: float
    share: float
    """The share of the job's work done in the stage."""
    hours: float
    """Busy hours of the job's GPUs in the stage (its share of the work, plus its restart)."""
    cost_usd: float


class DroppedOut(msgspec.Struct, frozen=True, kw_only=True):
    job: str
    priority: int
    reason: str


class JobOut(msgspec.Struct, frozen=True, kw_only=True):
    job: str
    start: str
    end: str
    start_hour: float
    end_hour: float
    start_bucket: int
    gpu: str
    gpu_count: int
    instances: int
    source: Literal["rent", "own"]
    supply: str
    provider: str | None
    pricing: str
    layout: str
    hours: float
    cost_usd: float
    cheapest_alone_usd: float
    why: str
    split: bool
    """Whether it runs in stages (``stages`` has one per bucket)."""
    stages: list[StageOut]


class ServingOut(msgspec.Struct, frozen=True, kw_only=True):
    serving: str
    bucket: int
    start: str
    requests_per_s: float
    capacity_requests_per_s: float
    instances: dict[str, int]
    cost_usd: float


class BucketOut(msgspec.Struct, frozen=True, kw_only=True):
    bucket: int
    start: str
    owned_gpus: dict[str, int]
    owned_busy_gpus: dict[str, int]
    owned_utilization: dict[str, float]
    gpu_hours: dict[str, float]
    """Busy GPU-hours per GPU type, owned and rented: the work on each type (buy vs rent reads it)."""
    rented_gpus: int
    rented_usd: float
    owned_usd: float
    capital_usd: float
    total_usd: float
    budget_usd: float | None


class BuyOut(msgspec.Struct, frozen=True, kw_only=True):
    gpu: str
    units: int
    gpus: int
    usd: float
    rule: str


class ConstraintOut(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    name: str
    bucket: int | None
    detail: str


class SolverOut(msgspec.Struct, frozen=True, kw_only=True):
    backend: str
    status: Literal["optimal", "time_limited"]
    gap: float | None
    time_limit_s: float
    mip_gap: float
    variables: int
    constraints: int
    options_per_job: int
    options_ms: float
    """Time to turn the request into the MILP: the job planner's enumeration of each distinct job body
    and the serving types (fast once the plan cache holds the models' layouts and engine runs), then
    the pruning to each job's options."""
    build_ms: float
    solve_ms: float
    total_ms: float
    message: str


class PortfolioOut(msgspec.Struct, frozen=True, kw_only=True):
    portfolio_id: str
    created_at: str
    horizon: HorizonIn
    bucket_hours: float
    total_usd: float
    alone_usd: float
    """Each job and serving bucket planned alone on the rented market, one at a time."""
    saving_usd: float
    jobs: list[JobOut]
    serving: list[ServingOut]
    buckets: list[BucketOut]
    buy: list[BuyOut]
    binding: list[ConstraintOut]
    dropped: list[DroppedOut]
    """Jobs left out (on_infeasible drop_lowest_priority, when not all fit), lowest priority first."""
    solver: SolverOut
