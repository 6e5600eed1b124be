"""What a job costs besides compute: charges, reliability (interruptions, restarts), job terms.

The face of ``solver.costs``: every public name of its modules."""

from solver.costs.charges import (
    CHARGE_NAMES,
    CHARGES,
    COMPUTE_ONLY_TERMS,
    DEADLINE_CONFIDENCE,
    HOURS_PER_MONTH,
    NOTHING_MOVED,
    Charge,
    Charges,
    ChargeSummary,
    JobTerms,
    SupplyTerms,
    complete_charges,
    failure_rates,
    preemption_rates,
    supply_rates,
)
from solver.costs.job_terms import CHECKPOINTS_KEPT, JobTermsWithRules, job_terms
from solver.costs.price_kinds import PRICE_KINDS, RESERVED_TERM_HOURS, PriceKind, RentedKind, ReservedKind
from solver.costs.reliability import (
    DEFAULT_RESTART_MINUTES,
    INTERRUPTION_RATES,
    MARKETPLACE_RATE_MULTIPLE,
    InterruptionRate,
    interruption_rate,
    optimal_checkpoint_interval,
)

__all__ = [
    "CHARGES",
    "CHARGE_NAMES",
    "CHECKPOINTS_KEPT",
    "COMPUTE_ONLY_TERMS",
    "DEADLINE_CONFIDENCE",
    "DEFAULT_RESTART_MINUTES",
    "HOURS_PER_MONTH",
    "INTERRUPTION_RATES",
    "MARKETPLACE_RATE_MULTIPLE",
    "NOTHING_MOVED",
    "PRICE_KINDS",
    "RESERVED_TERM_HOURS",
    "Charge",
    "ChargeSummary",
    "Charges",
    "InterruptionRate",
    "JobTerms",
    "JobTermsWithRules",
    "PriceKind",
    "RentedKind",
    "ReservedKind",
    "SupplyTerms",
    "complete_charges",
    "failure_rates",
    "interruption_rate",
    "job_terms",
    "optimal_checkpoint_interval",
    "preemption_rates",
    "supply_rates",
]
