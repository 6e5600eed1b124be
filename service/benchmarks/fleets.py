"""What to benchmark next for a serving fleet.

The request is sized again on the current catalog. Each replica type it could use that is not in the
chosen fleet, one per GPU, tensor-parallel degree and precision at its cheapest offer, is a candidate:
its cost is the fleet of that type alone serving the whole mix (replicas for each request size's rate
at ``max_utilization`` of its capacity, whole instances, at least ``min_replicas``) over the plan's
hours. A capacity the engine model derives is uncertain by its held-out p90 error,
:data:`ENGINE_P90_ERROR` (``solver/engine/profiles.py``: median 17.3 %, p90 44.5 % on held-out
TensorRT-LLM rows); a measured one is taken as exact. The chosen fleet's band scales its cost the same
way, by the least certain of its types.

The recipe serves one replica on one instance of the type's offer and sends each request size on its
own at the rate the plan loads a replica with (capacity × ``max_utilization``): :data:`WARMUPS`
warm-up requests, then at least :data:`MIN_PROMPTS` requests and :data:`MEASURE_S` seconds.
"""

from __future__ import annotations

import math
from typing import Final

from service.benchmarks.schemas import BenchmarkCandidate, BenchmarkRecipe, CostBand
from service.benchmarks.value import BenchRun, bench_recipe, overlaps, valued
from service.launch.commands import BenchLine, vllm_bench_line, vllm_serve_line
from service.plans.fleets import FleetSpec, SolvedFleet
from service.plans.inputs import PlanInputs
from solver import ReplicaType, ServingPlan

__all__ = ["ENGINE_P90_ERROR", "MEASURE_S", "MIN_PROMPTS", "WARMUPS", "fleet_candidates", "fleet_cost_band"]

ENGINE_P90_ERROR: Final = 0.445
MEASURE_S: Final = 180.0
MIN_PROMPTS: Final = 50
WARMUPS: Final = 10

Inputs = PlanInputs[ServingPlan, FleetSpec]


def _spread(rtype: ReplicaType) -> float:
    derived = any(c.provenance == "derived" and c.requests_per_s > 0 for c in rtype.capacities)
    return 1.0 + ENGINE_P90_ERROR if derived else 1.0


def _alone_per_hour(rtype: ReplicaType, inputs: Inputs, scale: float) -> float | None:
    """$/h of a fleet of ``rtype`` alone at ``scale`` × its capacities (None: it misses a size)."""
    request, spec = inputs.request, inputs.spec
    replicas = 0.0
    for cls, cap in zip(spec.classes, rtype.capacities, strict=True):
        if cap.requests_per_s <= 0:
            return None
        replicas += spec.rate * cls.share / (cap.requests_per_s * scale * request.max_utilization)
    needed = max(math.ceil(replicas - 1e-9), request.min_replicas)
    return math.ceil(needed / rtype.replicas_per_instance) * rtype.usd_per_instance_hour


def fleet_cost_band(solved: SolvedFleet) -> CostBand:
    """The chosen fleet's cost over its hours, and its range by its least certain type."""
    types = {t.type_id: t for t in solved.options.types}
    spread = max((_spread(types[t]) for t in solved.fleet.instances), default=1.0)
    total = solved.fleet.usd_per_hour * solved.hours
    return CostBand(expected_usd=total, low_usd=total / spread, high_usd=total * spread)


def _band(rtype: ReplicaType, inputs: Inputs, hours: float) -> CostBand | None:
    spread = _spread(rtype)
    costs = [_alone_per_hour(rtype, inputs, s) for s in (1.0, spread, 1 / spread)]
    if any(c is None for c in costs):
        return None
    expected, low, high = (c * hours for c in costs if c is not None)
    return CostBand(expected_usd=expected, low_usd=low, high_usd=high)


def _lines(rtype: ReplicaType, inputs: Inputs, gpu_name: str) -> list[BenchLine]:
    lines = []
    for i, (cls, cap) in enumerate(zip(inputs.spec.classes, rtype.capacities, strict=True)):
        rate = cap.requests_per_s * inputs.request.max_utilization
        lines.append(
            BenchLine(
                input_tokens=cls.input_tokens,
                output_tokens=cls.output_tokens,
                requests_per_s=rate,
                prompts=max(MIN_PROMPTS, math.ceil(rate * MEASURE_S)),
                warmups=WARMUPS,
                result_file=f"gpuplan-{rtype.gpu_id}-tp{rtype.tp}-{cls.input_tokens}x{cls.output_tokens}.json",
                metadata={"gpu": gpu_name, "tp": str(rtype.tp), "size": str(i)},
            )
        )
    return lines


def _recipe(rtype: ReplicaType, inputs: Inputs, solved: SolvedFleet) -> BenchmarkRecipe:
    supply, setup = solved.options.supply_of[rtype.type_id], solved.options.setups[rtype.type_id]
    lines = _lines(rtype, inputs, setup.gpu.name)
    warmup = sum(line.warmups / line.requests_per_s for line in lines)
    measure = sum(line.prompts / line.requests_per_s for line in lines)
    return bench_recipe(
        BenchRun(supply, 1, supply.gpus_per_unit, warmup, measure, setup.arch.params_b * 2),
        [
            f"{vllm_serve_line(setup.arch, rtype.tp, setup.precision)} &",
            *(vllm_bench_line(setup.arch, line) for line in lines),
        ],
        f"one replica; per request size {WARMUPS} warm-up requests, then at least {MIN_PROMPTS} "
        f"requests and {MEASURE_S / 60:g} min at the planned load (capacity × max_utilization)",
    )


def _cheapest(
    inputs: Inputs, solved: SolvedFleet
) -> dict[tuple[str, int, str], tuple[ReplicaType, CostBand]]:
    chosen = {
        (t.gpu_id, t.tp, solved.options.setups[t.type_id].precision)
        for t in solved.options.types
        if t.type_id in solved.fleet.instances
    }
    best: dict[tuple[str, int, str], tuple[ReplicaType, CostBand]] = {}
    for rtype in solved.options.types:
        key = (rtype.gpu_id, rtype.tp, solved.options.setups[rtype.type_id].precision)
        band = None if key in chosen else _band(rtype, inputs, solved.hours)
        if band is not None and (key not in best or band.expected_usd < best[key][1].expected_usd):
            best[key] = (rtype, band)
    return best


def fleet_candidates(inputs: Inputs, solved: SolvedFleet) -> list[BenchmarkCandidate]:
    """The replica types whose cost band overlaps the chosen fleet's, each with its recipe and value
    (unranked: ``rank`` is 0)."""
    chosen = fleet_cost_band(solved)
    found = []
    for (gpu, tp, precision), (rtype, band) in _cheapest(inputs, solved).items():
        if not overlaps(band, chosen):
            continue
        recipe = _recipe(rtype, inputs, solved)
        caps = [c for c in rtype.capacities if c.requests_per_s > 0]
        found.append(
            valued(
                chosen,
                band,
                recipe,
                gpu=gpu,
                gpu_name=solved.options.setups[rtype.type_id].gpu.name,
                gpu_count=recipe.gpus,
                tp=tp,
                precision=precision,
                layout=None,
                provenance="measured" if all(c.provenance == "measured" for c in caps) else "derived",
                confidence=min((c.confidence for c in caps), key=("low", "medium", "high").index),
            )
        )
    return found
