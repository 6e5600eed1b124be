"""What a plan request asks: the job, the work to finish, how to acquire GPUs, and the limits.

The planner chooses the GPU type, count, offer and parallel layout, so a request carries a
:class:`~solver.workload.JobSpec` (no ``gpu_count``/``tp``/``sharding``) plus the work and constraints.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from solver.gpus import Interconnect
from solver.host import HostSpec
from solver.job_terms import DataSpec, ReliabilitySpec
from solver.serving_spec import MAX_REQUEST_CLASSES, RequestClass, ServingSlo
from solver.software import SoftwareSpec
from solver.workload import JobSpec

__all__ = [
    "DEFAULT_FLEET_HOURS",
    "DEFAULT_MAX_GPUS",
    "Acquisition",
    "Objective",
    "PlanConstraints",
    "PlanRequest",
]

DEFAULT_MAX_GPUS = 64
"""GPUs a plan may use when ``constraints.max_gpus`` is not given."""

DEFAULT_FLEET_HOURS = 730.0
"""How long a serving fleet runs when ``hours`` is not given: one month (8,760 h / 12)."""

Acquisition = Literal["rent", "own", "either"]
Objective = Literal["cost", "time"]
_Names = Annotated[list[Annotated[str, Meta(min_length=1, max_length=200)]], Meta(max_length=100)]


class PlanConstraints(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Limits every chosen configuration must respect; each is optional."""

    deadline_hours: (
        Annotated[float, Meta(gt=0, le=1_000_000, description="Finish within this many hours.")] | None
    ) = None
    budget_usd: Annotated[float, Meta(gt=0, le=1e12, description="Total cost at most this.")] | None = None
    max_gpus: Annotated[
        int, Meta(ge=1, le=4096, description=f"GPUs at most (default {DEFAULT_MAX_GPUS}).")
    ] = DEFAULT_MAX_GPUS
    providers: Annotated[_Names, Meta(description="Rent only from these providers.")] | None = None
    regions: Annotated[_Names, Meta(description="Rent only in these regions.")] | None = None
    gpus: Annotated[_Names, Meta(description="Only these GPUs (ids, names or aliases).")] | None = None
    exclude_gpus: Annotated[_Names, Meta(description="Never these GPUs.")] | None = None
    interconnect: (
        Annotated[Interconnect, Meta(description="At least this class inside an instance.")] | None
    ) = None
    ecc: Annotated[bool, Meta(description="true: only GPUs with ECC memory.")] | None = None
    spot: Annotated[bool, Meta(description="Allow spot (interruptible) prices.")] = False


class PlanRequest(JobSpec, forbid_unknown_fields=True, kw_only=True):
    """A job, the work to complete, and how to choose: POST /v1/plans."""

    tokens: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=10**16,
                description=(
                    "Work in tokens: trained on (train, fine_tune, summed over epochs) or generated "
                    "(batch_inference: output tokens; each request is seq_len tokens, output_len of them "
                    "generated)."
                ),
            ),
        ]
        | None
    ) = None
    samples: (
        Annotated[int, Meta(ge=1, le=10**13, description="Work in samples (images, sequences) per epoch.")]
        | None
    ) = None
    epochs: Annotated[float, Meta(gt=0, le=100_000, description="Passes over `samples` (default 1).")] = 1.0
    output_len: (
        Annotated[
            int, Meta(ge=1, le=10_000_000, description="batch_inference: tokens generated per request.")
        ]
        | None
    ) = None
    acquisition: Annotated[Acquisition, Meta(description="rent (default), own, or either.")] = "rent"
    objective: Annotated[Objective, Meta(description="Minimise total cost (default) or hours.")] = "cost"
    top_k: Annotated[int, Meta(ge=0, le=50, description="Alternatives to return.")] = 5
    owned_utilization: Annotated[
        float,
        Meta(
            gt=0,
            le=1,
            description="Owned GPUs: the share of hours they are busy over their life (prices a busy hour).",
        ),
    ] = 0.85
    requests_per_s: (
        Annotated[float, Meta(gt=0, le=10_000_000, description="serving: requests per second to serve.")]
        | None
    ) = None
    request_mix: (
        Annotated[
            list[RequestClass],
            Meta(
                min_length=1,
                max_length=MAX_REQUEST_CLASSES,
                description="serving: request sizes (input/output tokens) and their shares (summing to 1).",
            ),
        ]
        | None
    ) = None
    slo: Annotated[ServingSlo, Meta(description="serving: latency targets (optional).")] | None = None
    max_utilization: Annotated[
        float,
        Meta(gt=0, le=1, description="serving: load on each replica type at most this share of capacity."),
    ] = 0.85
    hours: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=1_000_000,
                description=f"serving: how long the fleet runs (default {DEFAULT_FLEET_HOURS:g}).",
            ),
        ]
        | None
    ) = None
    data: (
        Annotated[
            DataSpec,
            Meta(
                description="Jobs: dataset, checkpoint and egress sizes (defaults derived from the workload)."
            ),
        ]
        | None
    ) = None
    reliability: (
        Annotated[
            ReliabilitySpec,
            Meta(description="Jobs: interruption and preemption rates replacing the cited defaults."),
        ]
        | None
    ) = None
    constraints: PlanConstraints = msgspec.field(default_factory=PlanConstraints)
    host: (
        Annotated[
            HostSpec,
            Meta(
                description="What each GPU needs from its host: vCPUs, host memory, storage reads (rentals)."
            ),
        ]
        | None
    ) = None
    software: (
        Annotated[
            SoftwareSpec,
            Meta(description="The stack (cuda, rocm, any) and the libraries or kernels the job needs."),
        ]
        | None
    ) = None
