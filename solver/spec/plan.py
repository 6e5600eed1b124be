"""What a plan request asks: the job, the work to finish, how to acquire GPUs, and the limits.

The planner chooses the GPU type, count, offer and parallel layout, so a request carries the
:class:`~solver.spec.workload.JobFields` (no ``gpu_count``/``tp``/``sharding``) plus the work and constraints.
A request is one of four structs tagged by ``kind`` (:data:`PlanRequest`): the job kinds share the work
fields and data/reliability terms (:class:`JobPlanBase`), batch inference adds ``output_len``, serving has
its rate, request mix, SLO and hours instead.
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

import msgspec
from msgspec import Meta

from solver.catalog.gpus import Interconnect
from solver.errors import InvalidWorkload
from solver.spec.host import HostSpec
from solver.spec.serving import MAX_REQUEST_CLASSES, RequestClass, ServingSlo, validate_mix
from solver.spec.software import SoftwareSpec
from solver.spec.terms import DataSpec, ReliabilitySpec
from solver.spec.workload import JobFields, WorkloadKind, serving_refusal

__all__ = [
    "DEFAULT_FLEET_HOURS",
    "DEFAULT_MAX_GPUS",
    "DEFAULT_MEMORY_HEADROOM",
    "DEFAULT_MIN_REPLICAS",
    "DEFAULT_MIX_THRESHOLD",
    "PLAN_REQUEST_KINDS",
    "Acquisition",
    "BatchInferencePlan",
    "FineTunePlan",
    "JobPlanBase",
    "JobPlanRequest",
    "Objective",
    "OwnedInventory",
    "PlanBase",
    "PlanConstraints",
    "PlanRequest",
    "Quantisation",
    "ServingPlan",
    "TrainPlan",
]

DEFAULT_MAX_GPUS = 64
"""GPUs a plan may use when ``constraints.max_gpus`` is not given."""

DEFAULT_MEMORY_HEADROOM = 0.10
"""Share of each GPU's memory a plan leaves free when ``constraints.memory_headroom`` is not given:
allocator fragmentation, a longer batch, a library upgrade or a profiler can each add a few GiB, and a
run at 97 % of memory is one such change from an out-of-memory crash."""

DEFAULT_FLEET_HOURS = 730.0
"""How long a serving fleet runs when ``hours`` is not given: one month (8,760 h / 12)."""

DEFAULT_MIN_REPLICAS = 2
"""Replicas a serving fleet runs at least when ``min_replicas`` is not given: one has no redundancy."""

DEFAULT_MIX_THRESHOLD = 0.03
"""Share of the best single type's cost a mix must save to be recommended: a mix is more to run (two
images, two pools to watch), worth it only for a real saving."""

Acquisition = Literal["rent", "own", "either"]
Quantisation = Literal["fp8", "int8", "int4"]
"""Quantised weights a serving plan may try (``ServingPlan.quantisation``)."""
Objective = Literal["cost", "time"]
_Names = Annotated[list[Annotated[str, Meta(min_length=1, max_length=200)]], Meta(max_length=100)]
_Codes = Annotated[list[Annotated[str, Meta(min_length=2, max_length=2)]], Meta(max_length=300)]


class PlanConstraints(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Limits every chosen configuration must respect; each is optional."""

    deadline_hours: (
        Annotated[float, Meta(gt=0, le=1_000_000, description="Finish within this many hours.")] | None
    ) = None
    budget_usd: Annotated[float, Meta(gt=0, le=1e12, description="Total cost at most this.")] | None = None
    max_gpus: Annotated[
        int, Meta(ge=1, le=65_536, description=f"GPUs at most (default {DEFAULT_MAX_GPUS}).")
    ] = DEFAULT_MAX_GPUS
    providers: Annotated[_Names, Meta(description="Rent only from these providers.")] | None = None
    regions: Annotated[_Names, Meta(description="Rent only in these regions.")] | None = None
    countries: (
        Annotated[
            _Codes,
            Meta(
                description=(
                    "Rent only in these countries (ISO 3166-1 alpha-2 codes, e.g. US, DE), by the country"
                    " derived from each offer's region; offers whose country cannot be derived are excluded."
                )
            ),
        ]
        | None
    ) = None
    exclude_countries: (
        Annotated[
            _Codes,
            Meta(description="Never rent in these countries (ISO 3166-1 alpha-2 codes)."),
        ]
        | None
    ) = None
    gpus: (
        Annotated[
            _Names,
            Meta(
                description=(
                    "Only these GPUs (ids, names or aliases): whole GPUs, with their MIG slices only when "
                    "`mig` is true; a slice named by its own id or name is always admitted."
                )
            ),
        ]
        | None
    ) = None
    mig: Annotated[
        bool,
        Meta(description="Inference kinds: the MIG slices of the GPUs named in `gpus` are candidates too."),
    ] = False
    exclude_gpus: Annotated[_Names, Meta(description="Never these GPUs.")] | None = None
    interconnect: (
        Annotated[Interconnect, Meta(description="At least this class inside an instance.")] | None
    ) = None
    ecc: Annotated[bool, Meta(description="true: only GPUs with ECC memory.")] | None = None
    spot: Annotated[bool, Meta(description="Allow spot (interruptible) prices.")] = False
    reserved: Annotated[
        bool,
        Meta(
            description=(
                "Allow reserved (committed 1- or 3-year) prices where a price sheet states them. A "
                "commitment is billed for its whole term (8,760 or 26,280 hours per instance) whether used "
                "or not; off by default so that a one-off job is never put on a commitment unasked."
            )
        ),
    ] = False
    memory_headroom: Annotated[
        float,
        Meta(
            ge=0,
            le=0.5,
            description=(
                "Share of each GPU's memory the plan leaves free (default "
                f"{DEFAULT_MEMORY_HEADROOM:g}): every rank's estimated peak stays within "
                "(1 - memory_headroom) of the GPU's memory and, above 0, the high end of the memory "
                "estimate's band within the whole memory. 0 accepts layouts at the edge."
            ),
        ),
    ] = DEFAULT_MEMORY_HEADROOM


class OwnedInventory(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """GPUs of one type already owned: their capital is spent, so a plan pays their marginal running cost."""

    gpu: Annotated[str, Meta(min_length=1, max_length=200, description="GPU id, name or alias.")]
    count: Annotated[int, Meta(ge=1, le=100_000, description="How many are owned (and free for this work).")]
    usd_per_gpu_hour: (
        Annotated[
            float,
            Meta(
                ge=0,
                le=1000,
                description="Marginal cost of one busy GPU-hour (default: the ownership sheet's busy energy).",
            ),
        ]
        | None
    ) = None


class PlanBase(JobFields, tag_field="kind", forbid_unknown_fields=True, kw_only=True):
    """What every plan request says besides its work: how to acquire GPUs, what to optimise, the limits,
    and what each GPU needs from its host and software stack."""

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
    owned_inventory: Annotated[
        list[OwnedInventory],
        Meta(
            max_length=50,
            description="GPUs already owned, priced at their marginal running cost (not owned_utilization) and "
            "used up to their count, whatever acquisition says; other owned GPUs keep the full-cost basis.",
        ),
    ] = msgspec.field(default_factory=list)
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

    @property
    def kind(self) -> WorkloadKind:
        """The member's tag: train, fine_tune, batch_inference or serving."""
        return cast(WorkloadKind, self.__struct_config__.tag)

    def check(self) -> None:
        """The request's own cross-field rules (each an :class:`InvalidWorkload` naming its field)."""


class JobPlanBase(PlanBase, forbid_unknown_fields=True, kw_only=True):
    """A job with an amount of work to finish (train, fine-tune, batch inference)."""

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

    def check(self) -> None:
        """The work is ``tokens`` or ``samples`` (with ``epochs``), never both (one would be ignored)."""
        if self.tokens is None and self.samples is None:
            raise InvalidWorkload("tokens", "give the work: tokens, or samples (with epochs)")
        if self.tokens is not None and self.samples is not None:
            raise InvalidWorkload(
                "tokens", f"give tokens or samples, not both (tokens {self.tokens}, samples {self.samples})"
            )


class TrainPlan(JobPlanBase, tag="train", forbid_unknown_fields=True, kw_only=True):
    """Train a model from scratch: POST /v1/plans with ``kind: "train"``."""


class FineTunePlan(JobPlanBase, tag="fine_tune", forbid_unknown_fields=True, kw_only=True):
    """Fine-tune a model (full, LoRA or QLoRA): POST /v1/plans with ``kind: "fine_tune"``."""


class BatchInferencePlan(JobPlanBase, tag="batch_inference", forbid_unknown_fields=True, kw_only=True):
    """Generate over a batch of prompts offline: POST /v1/plans with ``kind: "batch_inference"``."""

    output_len: (
        Annotated[
            int, Meta(ge=1, le=10_000_000, description="batch_inference: tokens generated per request.")
        ]
        | None
    ) = None


class ServingPlan(PlanBase, tag="serving", forbid_unknown_fields=True, kw_only=True):
    """Serve a model online at a request rate: POST /v1/plans with ``kind: "serving"``."""

    requests_per_s: Annotated[
        float,
        Meta(
            ge=1e-6,
            le=10_000_000,
            description="serving: requests per second to serve (at least 1e-6, one request in 11.6 days).",
        ),
    ]
    request_mix: Annotated[
        list[RequestClass],
        Meta(
            min_length=1,
            max_length=MAX_REQUEST_CLASSES,
            description="serving: request sizes (input/output tokens) and their shares (summing to 1).",
        ),
    ]
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
    min_replicas: Annotated[
        int,
        Meta(
            ge=1,
            le=100_000,
            description=(
                f"serving: replicas the fleet runs at least, over all types (default {DEFAULT_MIN_REPLICAS}: "
                "one replica has no redundancy)."
            ),
        ),
    ] = DEFAULT_MIN_REPLICAS
    survive_instance_loss: Annotated[
        bool,
        Meta(
            description=(
                "serving: keep one spare instance per replica type, so that losing any one instance (a "
                "host with all its replicas) leaves capacity serving the load at max_utilization."
            )
        ),
    ] = False
    quantisation: Annotated[
        list[Quantisation],
        Meta(
            max_length=3,
            description=(
                "serving: quantised weights to try as replica types beside the requested precision, where "
                "the software table says they run: fp8 (FP8 W8A8), int8 (INT8 W8A8), int4 (AWQ/GPTQ 4-bit "
                "weights, 16-bit compute). Empty (default): the requested precision only, as quantised "
                "weights change the model's outputs."
            ),
        ),
    ] = msgspec.field(default_factory=list)
    mix_threshold: Annotated[
        float,
        Meta(
            ge=0,
            le=1,
            description=(
                "serving: recommend a mix of replica types only when it saves more than this share of the "
                f"best single type's cost (default {DEFAULT_MIX_THRESHOLD:g}); otherwise the single type."
            ),
        ),
    ] = DEFAULT_MIX_THRESHOLD

    def check(self) -> None:
        """The request mix's shares sum to 1 and its classes are distinct; no training-only field is
        stated (a fleet is sized by the engine model, which has no use for them: a silent default
        would hide that the request asked for something the plan did not do)."""
        validate_mix(self.request_mix)
        refused = serving_refusal(self)
        if refused is not None:
            raise InvalidWorkload(*refused)
        if self.constraints.deadline_hours is not None:
            raise InvalidWorkload(
                "constraints.deadline_hours", "a serving fleet has no deadline: it runs for `hours`"
            )


JobPlanRequest = TrainPlan | FineTunePlan | BatchInferencePlan
"""A plan request with an amount of work to finish."""

PlanRequest = TrainPlan | FineTunePlan | BatchInferencePlan | ServingPlan
"""POST /v1/plans: a union tagged by ``kind``; each member holds its own fields and checks."""

PLAN_REQUEST_KINDS: tuple[type[PlanBase], ...] = (TrainPlan, FineTunePlan, BatchInferencePlan, ServingPlan)
"""The members of :data:`PlanRequest`, in the order the OpenAPI document lists them."""
