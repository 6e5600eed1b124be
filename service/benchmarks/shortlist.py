"""What to benchmark next for a stored plan, in one call for the route, the CLI and the plan page.

The stored request is planned again on the current catalog (nothing is stored): its configurations
are the candidates (``jobs``, ``fleets``), ranked by the saving a benchmark is expected to reveal less
what the benchmark costs (``value``), and the new answer is compared with the stored one (``changes``).
"""

from __future__ import annotations

from typing import Final

import msgspec

from service.benchmarks.changes import choice_summary, recommendation_change
from service.benchmarks.fleets import ENGINE_P90_ERROR, fleet_candidates, fleet_cost_band
from service.benchmarks.jobs import MEASURE_STEPS, MIN_MEASURE_S, WARMUP_STEPS, job_candidates, job_cost_band
from service.benchmarks.schemas import BenchmarkCandidate, BenchmarkPlanOut
from service.plans.pipeline import PlanService
from service.plans.schemas import PlanOut
from solver import ServingPlan

__all__ = ["ASSUMPTIONS", "benchmark_shortlist"]

ASSUMPTIONS: Final = {
    "candidates": "configurations the planner kept (training: its Pareto front and alternatives, one per GPU "
    "type and count; serving: each replica type alone serving the mix, one per GPU, tp and precision) whose "
    "cost band overlaps the chosen one's",
    "expected_saving": "E[max(0, chosen expected cost - cost)] over the configuration's cost band, taken as "
    "triangular on (low, expected, high)",
    "benchmark_cost": "the planner's charge rules on the configuration's own offer: setup (instance start, "
    "weights download), warm-up and measurement, billed in the seller's increments",
    "training_run": f"{WARMUP_STEPS} warm-up then {MEASURE_STEPS} measured steps of the planned layout (at "
    f"least {MIN_MEASURE_S / 60:g} min measured), torchtitan logging every step",
    "serving_band": f"a derived capacity is within x/÷ {1 + ENGINE_P90_ERROR:g} (the engine model's held-out "
    "p90 error); a measured one is exact",
}


def _ranked(found: list[BenchmarkCandidate]) -> list[BenchmarkCandidate]:
    ordered = sorted(found, key=lambda c: (-c.net_value_usd, c.benchmark_cost_usd, c.gpu))
    return [msgspec.structs.replace(c, rank=i + 1) for i, c in enumerate(ordered)]


def benchmark_shortlist(plans: PlanService, plan_id: str) -> BenchmarkPlanOut:
    """What to benchmark next for plan ``plan_id`` (404 when there is none), and what changed."""
    request, stored = plans.stored(plan_id)
    if isinstance(request, ServingPlan):
        fleet_inputs, solved, now = plans.solve_fleet(request)
        found, band = fleet_candidates(fleet_inputs, solved), fleet_cost_band(solved)
    else:
        job_inputs, result, now = plans.solve_job(request)
        found, band = job_candidates(job_inputs, result), job_cost_band(result.choice)
    return BenchmarkPlanOut(
        plan_id=plan_id,
        plan_type="job" if isinstance(stored, PlanOut) else "serving",
        model=stored.model,
        chosen=choice_summary(now),
        chosen_cost=band,
        candidates=_ranked(found),
        changes=recommendation_change(stored, now),
        assumptions=dict(ASSUMPTIONS),
    )
