"""Choosing: candidate configurations, the config grid, the job planner and its MILP, serving fleets, own + rent.

The face of ``solver.optimise``: every public name of its modules."""

from solver.errors import Rejection, RejectionReason
from solver.optimise.candidates import (
    Candidate,
    Enumeration,
    Supply,
    ThroughputFn,
    WorkAmount,
    enumerate_candidates,
    gpu_counts,
)
from solver.optimise.config_grid import ConfigGrid, Selection, select
from solver.optimise.fleet import COUNT_TOLERANCE, FleetResult, ReplicaType, best_single_type, solve_fleet
from solver.optimise.fleet_rules import FleetRules
from solver.optimise.hybrid import (
    FleetCost,
    HybridProblem,
    HybridResult,
    enumerate_hybrid,
    evaluate_fleet,
    solve_hybrid,
)
from solver.optimise.mip import BACKEND, HIGHS_THREADS, SMALL_MILP_OPTIONS, SolveOutcome, solve
from solver.optimise.plan_cache import PLAN_CACHE_ENTRIES, PlanCache
from solver.optimise.planner import (
    Alternative,
    PlanResult,
    choose,
    enumerate_job,
    pareto_front,
    plan,
    work_amount,
)
from solver.optimise.rejections import NOTHING_OFFERED, by_gpu, refuse_precision
from solver.optimise.shape_steps import EXACT_COUNTS_UP_TO, ShapeStep, StepContext, StepTable, shape_steps
from solver.optimise.warnings import (
    ETHERNET_CLASSES,
    LONG_RUN_DAYS,
    PlanWarning,
    WarningCode,
    candidate_warnings,
    complete_bands,
    deadline_probability,
    hours_band,
)

__all__ = [
    "BACKEND",
    "COUNT_TOLERANCE",
    "ETHERNET_CLASSES",
    "EXACT_COUNTS_UP_TO",
    "HIGHS_THREADS",
    "LONG_RUN_DAYS",
    "NOTHING_OFFERED",
    "PLAN_CACHE_ENTRIES",
    "SMALL_MILP_OPTIONS",
    "Alternative",
    "Candidate",
    "ConfigGrid",
    "Enumeration",
    "FleetCost",
    "FleetResult",
    "FleetRules",
    "HybridProblem",
    "HybridResult",
    "PlanCache",
    "PlanResult",
    "PlanWarning",
    "Rejection",
    "RejectionReason",
    "ReplicaType",
    "Selection",
    "ShapeStep",
    "SolveOutcome",
    "StepContext",
    "StepTable",
    "Supply",
    "ThroughputFn",
    "WarningCode",
    "WorkAmount",
    "best_single_type",
    "by_gpu",
    "candidate_warnings",
    "choose",
    "complete_bands",
    "deadline_probability",
    "enumerate_candidates",
    "enumerate_hybrid",
    "enumerate_job",
    "evaluate_fleet",
    "gpu_counts",
    "hours_band",
    "pareto_front",
    "plan",
    "refuse_precision",
    "select",
    "shape_steps",
    "solve",
    "solve_fleet",
    "solve_hybrid",
    "work_amount",
]
