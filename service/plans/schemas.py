"""The stored plan as the API returns it (POST /v1/plans, GET /v1/plans/{plan_id}): a job plan
(``plan_type`` ``job``) or a serving fleet (``serving``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from service.catalog.schemas import OfferKey
from solver import (
    Band,
    EfficiencyUsed,
    Layout,
    MemoryBand,
    MemoryBreakdown,
    Network,
    Percentiles,
    PlanWarning,
    PriceKind,
    ProfileSource,
    RentedKind,
    ScalingEstimate,
)

__all__ = [
    "AlternativeOut",
    "AnyPlan",
    "BelowHeadroomPoint",
    "ChoiceOut",
    "ClassShare",
    "CostOut",
    "DataOut",
    "EstimateOut",
    "FleetChoiceOut",
    "FleetCostOut",
    "FleetSolverOut",
    "MemoryOut",
    "MigOut",
    "OfferRef",
    "OwnedRef",
    "ParetoPoint",
    "PlanOut",
    "PriceSheetUse",
    "PriceSheetsOut",
    "PricingOptionOut",
    "RejectedGpu",
    "RejectionOut",
    "ReliabilityOut",
    "ReplicaLatencyOut",
    "ReplicaOut",
    "SavingOut",
    "ServingPlanOut",
    "SingleTypeOut",
    "SolverOut",
    "ThroughputOut",
]


class OfferRef(OfferKey, kw_only=True):
    country: str | None = None
    """ISO 3166-1 alpha-2 code of the region's country (``pricing.rules.countries``; None: the region
    names no country)."""
    interconnect: str
    network: Network
    """The network between this offer's instances (what a multi-instance choice was priced on)."""
    price_per_hour_usd: float
    pricing: RentedKind
    sheet_version: int | None


class OwnedRef(msgspec.Struct, kw_only=True):
    """Owned GPUs priced per busy hour from the ownership sheet (see ``assumptions``)."""

    usd_per_busy_gpu_hour: float
    gpus_per_node: int
    interconnect: str
    network: Network
    """The network assumed between owned nodes (see ``assumptions``)."""
    utilization: float
    assumptions: list[str]


class MigOut(msgspec.Struct, kw_only=True):
    """The MIG slices a choice runs on: which profile of which GPU, how many, on how many GPUs."""

    profile: str
    parent_gpu: str
    parent_gpu_name: str
    slices: int
    slices_per_gpu: int
    """Slices of this profile one parent GPU holds (NVIDIA's instance count for the profile)."""
    parent_gpus: int | None
    """Owned: the parent GPUs the slices take at the least; rented: ``None`` (the provider's GPUs)."""
    summary: str
    """The choice in words: ``7 × 1g.23gb on one owned B200``."""


class ChoiceOut(msgspec.Struct, kw_only=True):
    gpu: str
    gpu_name: str
    gpu_count: int
    instances: int
    acquisition: Literal["rent", "own"]
    tp: int
    sharding: str
    recompute: Annotated[
        Literal["none", "selective", "full"],
        msgspec.Meta(
            description=(
                "Activation checkpointing of the layout: the request's, or, when it left it out, the level"
                " the planner chose (it tries none, selective and full and keeps the fastest that fits)."
            )
        ),
    ]
    offer: OfferRef | None
    owned: OwnedRef | None
    mig: MigOut | None = None
    """Set when the choice runs on MIG slices (``gpu`` is then the slice's id)."""
    layout: Layout | None = None
    """Training: the parallel layout the plan prices (tp, pp, vpp, cp, dp, zero, micro_batch,
    gradient_accumulation, recompute, global_batch_tokens), as POST /v1/throughput answers it."""


class ThroughputOut(msgspec.Struct, kw_only=True):
    """The whole job's throughput (all GPUs), its class, efficiency, band and the rows behind it."""

    value: float
    unit: str
    provenance: Literal["measured", "derived"]
    route: str
    confidence: Literal["high", "medium", "low"]
    method: str
    workload_class: str
    stack: str
    efficiency: EfficiencyUsed
    band: Band
    sources: list[ProfileSource]


class MemoryOut(msgspec.Struct, kw_only=True):
    """Per-GPU memory against capacity: ``fit_counter`` names the counter checked (nvidia-smi's)."""

    per_gpu_gib: float
    allocated_gib: float
    reserved_gib: float
    fit_counter: Literal["per_gpu_gib"]
    capacity_gib: float
    band: MemoryBand
    host_ram_gib: float
    breakdown: MemoryBreakdown
    measured_peak_gib: float | None = None
    """With a measured throughput whose run reported its peak (an imported log's ``memory``, Megatron's
    ``max reserved``, or the upload's ``torch.cuda.max_memory_*`` figure): that run's peak per GPU, in
    GiB. The fields above are the memory model's, for the plan's own layout."""
    measured_peak_source: str | None = None
    """The source of the run behind ``measured_peak_gib``."""


class ReliabilityOut(msgspec.Struct, kw_only=True):
    """Expected interruptions of the run and the checkpoint interval that minimises their cost."""

    expected_interruptions: float
    """Hardware interruptions expected over the run (GPUs × hours × rate)."""
    expected_preemptions: float
    """Spot preemptions expected over the run (0 on on-demand and owned capacity)."""
    interruptions_per_gpu_hour: float
    preemptions_per_instance_hour: float
    checkpoint_interval_hours: float | None
    """Hours of work between checkpoints (``None``: none before the end)."""
    checkpoint_hours: float
    """Time spent writing checkpoints."""
    lost_hours: float
    """Expected restarts plus work lost since the last checkpoint."""
    setup_hours: float
    method: str


class DataOut(msgspec.Struct, kw_only=True):
    """What the job moves and keeps (GB = 10⁹ bytes); the rules are in ``cost.assumptions``."""

    dataset_gb: float
    checkpoint_gb: float
    checkpoints_kept: int
    download_gb: float
    """The model weights and the dataset: each instance downloads the weights at setup, and the dataset
    too unless it is ``staged_once`` to shared storage."""
    egress_gb: float
    dataset_derived: bool = False
    """Whether ``dataset_gb`` was derived from the work (the job did not state ``data.dataset_gb``)."""
    dataset_rule: str = ""
    """How ``dataset_gb`` was found: ``given``, or the derivation with its source."""
    staged_once: bool = False
    """Whether the dataset is staged once to the seller's shared storage (else each instance downloads
    its own copy at setup); ``cost.assumptions.data_staging`` says why."""
    staging_hours: float = 0.0
    """Hours staging the dataset before the instances start: part of the wall time, not billed."""


class EstimateOut(msgspec.Struct, kw_only=True):
    """Hours to finish: ``hours`` is the expected wall time (compute, setup, checkpoints and
    interruptions; the MILP optimises it or the cost), ``hours_band`` its likely range."""

    hours: float
    hours_band: Band
    compute_hours: float
    """Hours of computing alone (the throughput model's answer)."""
    work: float
    work_unit: str
    throughput: ThroughputOut
    scaling: ScalingEstimate | None
    """How far a multi-GPU job keeps linear scaling, and what bounds it (``None`` on one GPU)."""
    memory: MemoryOut
    reliability: ReliabilityOut
    data: DataOut
    goodput: float = 1.0
    """Share of the expected wall time that trains (``compute_hours / hours``): setup, checkpoint
    writes and the work interruptions lose (``reliability``, with its cited rates) are the rest. The
    throughput is the steady state; the wall time divides it by this."""
    deadline_probability: float | None = None
    """With a deadline: the chance it holds over interruptions and the throughput band (the plan warns
    ``deadline_at_risk`` below 90 %)."""


class CostOut(msgspec.Struct, kw_only=True):
    """The complete charge to finish the work: ``total_usd`` is the sum of ``breakdown`` (compute,
    setup, checkpoints, failures, preemption, billing rounding, storage, data transfer), each with its
    rule in ``assumptions``."""

    total_usd: float
    total_usd_band: Band
    usd_per_hour: float
    billable_hours: float
    billing_increment_s: int
    breakdown: dict[str, float]
    assumptions: dict[str, str]


class PricingOptionOut(msgspec.Struct, kw_only=True):
    """The best configuration at one kind of price (on-demand, spot, reserved 1 y / 3 y, owned), each
    optimised on its own under the same constraints, to compare side by side."""

    pricing: PriceKind
    chosen: bool
    gpu: str
    gpu_count: int
    provider: str | None
    instance_type: str | None
    hours: float
    hours_band: Band
    total_usd: float
    total_usd_band: Band
    breakdown: dict[str, float]
    expected_interruptions: float
    expected_preemptions: float
    price_basis: str
    """How this kind is priced: per hour billed in increments, whole reserved terms, or owned busy
    hours at a stated utilisation (an assumption)."""
    owned_utilization: float | None = None
    """Owned only: the busy share of the hardware's hours its price assumes (the request's
    ``owned_utilization``)."""


class AlternativeOut(msgspec.Struct, kw_only=True):
    rank: int
    gpu: str
    gpu_count: int
    acquisition: Literal["rent", "own"]
    provider: str | None
    instance_type: str | None
    region: str | None
    country: str | None
    """ISO 3166-1 alpha-2 code of the offer's region (None: owned, or the region names no country)."""
    pricing: str
    hours: float
    cost_usd: float
    why: str
    gpu_name: str = ""
    """The GPU's catalog name (empty in plans stored before it was recorded)."""
    usd_per_hour: float | None = None
    """The whole configuration's price per hour."""
    tp: int | None = None
    layout: Layout | None = None
    """Training: the parallel layout priced (as ``choice.layout``)."""
    memory_gib: float | None = None
    """Estimated peak memory per GPU, GiB (as ``estimate.memory.per_gpu_gib`` of the choice)."""
    memory_capacity_gib: float | None = None
    """Each GPU's memory, GiB."""
    lost_on: Literal["cost", "time", "deadline_risk", "memory_headroom", "limits", "tie"] | None = None
    """What made it lose: the objective (cost or time); as good on the objective, its lower chance of
    meeting the deadline or its thinner memory headroom; a limit; or an exact tie broken by order."""


class RejectionOut(msgspec.Struct, kw_only=True, omit_defaults=True):
    reason: str
    detail: str
    admit_at: float | None = None
    """For a limit (deadline, budget, quota): the ``constraints.deadline_hours``, ``budget_usd`` or
    ``max_gpus`` that would admit the configuration that came closest."""


class RejectedGpu(msgspec.Struct, kw_only=True):
    gpu: str
    gpu_name: str
    reasons: list[RejectionOut]


class FrontPoint(msgspec.Struct, kw_only=True):
    """A configuration on a cost-against-hours chart."""

    gpu: str
    gpu_count: int
    acquisition: Literal["rent", "own"]
    provider: str | None
    instance_type: str | None
    hours: float
    cost_usd: float


class ParetoPoint(FrontPoint, kw_only=True):
    chosen: bool
    gpu_name: str = ""
    """The GPU's catalog name (empty in plans stored before it was recorded)."""
    region: str | None = None


class BelowHeadroomPoint(FrontPoint, kw_only=True):
    """A configuration that fits only below the plan's ``memory_headroom`` (its peak within the GPU's
    memory, not within ``1 − memory_headroom`` of it) and that no point of the plan's ``pareto`` beats
    on both cost and hours: what the headroom costs. Never chosen."""

    per_gpu_gib: float
    """Its peak memory per GPU (nvidia-smi's counter, as ``estimate.memory.per_gpu_gib``)."""
    band_high_gib: float
    """The high end of its memory band (with headroom asked for, it must fit the GPU's memory too)."""
    capacity_gib: float
    headroom: float
    """The share of the GPU's memory it leaves free: 1 − per_gpu_gib ÷ capacity_gib."""
    usd_below_choice: float
    """How much less it costs than the plan's choice (negative: more)."""
    hours_below_choice: float
    """How much sooner it finishes than the plan's choice (negative: later)."""


class PriceSheetUse(msgspec.Struct, kw_only=True):
    version: int
    source: str
    kind: str
    fetched_at: datetime
    age_hours: float


class PriceSheetsOut(msgspec.Struct, kw_only=True):
    versions: list[PriceSheetUse]
    warnings: list[str]


class SolverOut(msgspec.Struct, kw_only=True):
    backend: str
    status: Literal["optimal", "time_limited"]
    gap: float | None
    objective: Literal["cost", "time"]
    configurations_tried: int
    candidates: int
    pruned_dominated: int
    milp_variables: int
    solve_ms: float
    total_ms: float


class PlanOut(msgspec.Struct, kw_only=True, tag_field="plan_type", tag="job"):
    """A costed plan: what to run on, what it costs, why, and what it was priced against."""

    plan_id: str
    created_at: datetime
    status: Literal["optimal", "time_limited"]
    model: str
    kind: str
    choice: ChoiceOut
    estimate: EstimateOut
    cost: CostOut
    alternatives: list[AlternativeOut]
    rejected: list[RejectedGpu]
    pareto: list[ParetoPoint]
    pareto_below_headroom: list[BelowHeadroomPoint] = msgspec.field(default_factory=list)
    """What ``constraints.memory_headroom`` costs: the configurations that fit only below it and would
    join the front without it, by hours (empty when the headroom costs nothing, or is 0)."""
    pricing_options: list[PricingOptionOut]
    """The best feasible configuration per kind of price when more than one kind could run the job."""
    warnings: list[PlanWarning]
    """Reasons to doubt or watch the plan, each with a stable ``code``."""
    price_sheet: PriceSheetsOut
    solver: SolverOut


class ClassShare(msgspec.Struct, kw_only=True):
    input_tokens: int
    output_tokens: int
    share_of_class: float
    capacity_requests_per_s: float
    capacity_provenance: Literal["measured", "derived"]
    capacity_confidence: str
    capacity_method: str
    capacity_source: str | None = None
    """Where a measured capacity comes from: the source of its serving row (an upload's name, e.g. a
    ``POST /v1/measurements`` source, or the shipped Mélange table's); ``None`` for a derived one."""


class ReplicaOut(msgspec.Struct, kw_only=True):
    """One replica type of the fleet: ``replicas`` copies of the model on ``tp`` GPUs each."""

    gpu: str
    gpu_name: str
    tp: int
    replicas: int
    instances: int
    acquisition: Literal["rent", "own"]
    offer: OfferRef | None
    owned: OwnedRef | None
    usd_per_hour: float
    load: float
    classes: list[ClassShare]
    gpus: int
    """GPUs the type's instances hold (``instances × GPUs per instance``; slices for MIG)."""
    precision: str
    """The weights' precision the replicas run (the request's, or a quantised one it allowed)."""
    latency: ReplicaLatencyOut | None
    """Latencies the engine model simulates at the load each replica carries (None: not simulated)."""
    mig: MigOut | None = None
    """Set when the replicas run on MIG slices (``gpu`` is then the slice's id)."""


class ReplicaLatencyOut(msgspec.Struct, kw_only=True):
    """What one replica of a type achieves at its share of the fleet's load, from the engine model."""

    requests_per_s: float
    """Poisson arrivals per replica simulated: the type's share of every request size ÷ its replicas."""
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    e2e_ms: Percentiles
    stable: bool
    """False when that rate is beyond what the replica keeps up with (the latencies then grow with time)."""
    method: str


class FleetChoiceOut(msgspec.Struct, kw_only=True):
    replicas: list[ReplicaOut]
    gpus: int
    """GPUs the whole fleet holds (MIG slices counted as slices)."""
    why: str
    """Why this fleet: a mix only when it saves more than ``mix_threshold`` over the best single type."""


class FleetCostOut(msgspec.Struct, kw_only=True):
    usd_per_hour: float
    hours: float
    total_usd: float


class SingleTypeOut(msgspec.Struct, kw_only=True):
    """The cheapest fleet of one replica type, for comparison with the (possibly mixed) choice."""

    gpu: str
    tp: int
    replicas: int
    instances: int
    offer: OfferRef | None
    usd_per_hour: float
    total_usd: float
    gpu_name: str = ""
    """The GPU's catalog name (empty in plans stored before it was recorded)."""


class SavingOut(msgspec.Struct, kw_only=True):
    usd_per_hour: float
    total_usd: float
    fraction: float


class FleetSolverOut(msgspec.Struct, kw_only=True):
    backend: str
    status: Literal["optimal", "time_limited"]
    gap: float | None
    replica_types: int
    pruned_dominated: int
    solve_ms: float
    total_ms: float
    message: str


class ServingPlanOut(msgspec.Struct, kw_only=True, tag_field="plan_type", tag="serving"):
    """A serving fleet: replicas per type (a mix where that is cheaper), per-type load, $/hour."""

    plan_id: str
    created_at: datetime
    status: Literal["optimal", "time_limited"]
    model: str
    kind: str
    requests_per_s: float
    max_utilization: float
    choice: FleetChoiceOut
    cost: FleetCostOut
    best_single_type: SingleTypeOut | None
    saving_vs_single_type: SavingOut | None
    rejected: list[RejectedGpu]
    warnings: list[PlanWarning]
    price_sheet: PriceSheetsOut
    solver: FleetSolverOut


AnyPlan = PlanOut | ServingPlanOut
"""A stored plan: ``plan_type`` says which (``job`` or ``serving``)."""
