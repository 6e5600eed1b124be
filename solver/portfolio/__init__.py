"""Portfolios: many jobs and serving demands over a horizon of buckets, on owned, bought and rented GPUs,
in one MILP (PuLP + HiGHS). Pure: takes the options the job planner found, returns the schedule.

The face of ``solver.portfolio``: every public name of its modules."""

from solver.portfolio.model import (
    AvailabilityCap,
    BindingConstraint,
    BucketUse,
    BuyOption,
    CapScope,
    DroppedJob,
    InfeasibleJob,
    InfeasiblePortfolio,
    JobOption,
    JobSchedule,
    OwnedPool,
    PortfolioJob,
    PortfolioProblem,
    PortfolioResult,
    Relaxation,
    ServingBucket,
    ServingDemand,
    ServingOption,
    Stage,
)
from solver.portfolio.options import PER_GROUP, TOP_K, OptionPool, job_options
from solver.portfolio.solve import plan_portfolio

__all__ = [
    "PER_GROUP",
    "TOP_K",
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
    "OptionPool",
    "OwnedPool",
    "PortfolioJob",
    "PortfolioProblem",
    "PortfolioResult",
    "Relaxation",
    "ServingBucket",
    "ServingDemand",
    "ServingOption",
    "Stage",
    "job_options",
    "plan_portfolio",
]
