"""What to benchmark next for a job plan (training, fine-tuning, batch inference).

The request is planned again on the current catalog; every configuration the planner kept (its Pareto
front and its alternatives), one per GPU type and count at its cheapest offer, is a candidate when its
complete-cost band (:func:`solver.complete_bands`) overlaps the chosen configuration's. Its recipe runs
the configuration's own layout for a few optimizer steps: :data:`WARMUP_STEPS` to warm up (compile,
allocator, NCCL), then :data:`MEASURE_STEPS`, at least :data:`MIN_MEASURE_S` seconds, at the step
time the plan estimates (``global_batch_tokens ÷ tokens/s``), logging every step: torchtitan (tokens/s,
MFU, memory) on the ``optimized`` stack, TRL's SFT script under Accelerate on the ``standard`` one.
"""

from __future__ import annotations

import math
from typing import Final

from service.benchmarks.schemas import BenchmarkCandidate, BenchmarkRecipe, CostBand
from service.benchmarks.value import BenchRun, bench_recipe, overlaps, valued
from service.launch.commands import TrainSetup, train_commands, train_run, vllm_throughput_line
from service.launch.targets import CONFIG_FILE
from service.plans.inputs import PlanInputs
from solver import (
    BatchInferencePlan,
    Candidate,
    JobPlanRequest,
    JobTermsWithRules,
    PlanResult,
    complete_bands,
)

__all__ = ["MEASURE_STEPS", "MIN_MEASURE_S", "MIN_PROMPTS", "WARMUP_STEPS", "job_candidates", "job_cost_band"]

WARMUP_STEPS: Final = 10
MEASURE_STEPS: Final = 40
MIN_MEASURE_S: Final = 300.0
_MIN_WARMUP_S: Final = 60.0
MIN_PROMPTS: Final = 200
"""Batch inference: the fewest prompts a throughput run sends."""

Inputs = PlanInputs[JobPlanRequest, JobTermsWithRules]


def job_cost_band(candidate: Candidate) -> CostBand:
    """The candidate's complete cost and its likely range."""
    _, (low, high) = complete_bands(candidate)
    return CostBand(expected_usd=candidate.cost_usd, low_usd=low, high_usd=high)


def _kept(result: PlanResult) -> list[Candidate]:
    """One candidate per (GPU, count) other than the chosen one's: the cheapest the planner kept."""
    chosen = result.choice
    best: dict[tuple[str, int], Candidate] = {}
    for c in [*result.pareto, *(a.candidate for a in result.alternatives)]:
        key = (c.supply.gpu_id, c.gpu_count)
        if key == (chosen.supply.gpu_id, chosen.gpu_count):
            continue
        if key not in best or c.cost_usd < best[key].cost_usd:
            best[key] = c
    return list(best.values())


def _step_seconds(c: Candidate) -> float | None:
    if "token" not in c.throughput.unit or c.throughput.value <= 0:
        return None
    return c.layout.global_batch_tokens / c.throughput.value


def _inference_recipe(c: Candidate, inputs: Inputs) -> BenchmarkRecipe:
    """Batch inference: one engine (``tp`` GPUs) of the configuration runs ``vllm bench throughput`` on
    prompts of the plan's sizes, enough for :data:`MIN_MEASURE_S` at its share of the planned rate."""
    request, seq_len = inputs.request, inputs.resolved.seq_len
    output = (request.output_len if isinstance(request, BatchInferencePlan) else None) or 1
    per_engine = c.throughput.value * c.tp / max(c.gpu_count, 1)
    unit = c.throughput.unit
    requests_per_s = per_engine / (output if "output_token" in unit else seq_len if "token" in unit else 1)
    prompts = max(MIN_PROMPTS, math.ceil(requests_per_s * MIN_MEASURE_S))
    line = vllm_throughput_line(
        inputs.resolved.arch,
        c.tp,
        max(seq_len - output, 1),
        output,
        prompts,
        f"gpuplan-{c.supply.gpu_id}-tp{c.tp}.json",
    )
    run = BenchRun(c.supply, c.units, c.gpu_count, _MIN_WARMUP_S, MIN_MEASURE_S,
                   inputs.spec.terms.download_gb - inputs.spec.terms.dataset_gb)  # fmt: skip
    return bench_recipe(
        run,
        ["pip install vllm", line],
        f"one engine of tp {c.tp}: {prompts} prompts, about {MIN_MEASURE_S / 60:g} min at its planned rate "
        f"(at least {MIN_PROMPTS}), after {_MIN_WARMUP_S / 60:g} min of engine start and warm-up",
    )


def _recipe(c: Candidate, inputs: Inputs) -> BenchmarkRecipe:
    if inputs.resolved.is_inference:
        return _inference_recipe(c, inputs)
    step = _step_seconds(c)
    if step is None:
        warmup, measure, steps = _MIN_WARMUP_S, MIN_MEASURE_S, WARMUP_STEPS + MEASURE_STEPS
        rule = f"{_MIN_WARMUP_S / 60:g} min warm-up, {MIN_MEASURE_S / 60:g} min measured (no step time known)"
    else:
        warmup = max(_MIN_WARMUP_S, WARMUP_STEPS * step)
        measure = max(MIN_MEASURE_S, MEASURE_STEPS * step)
        steps = math.ceil(warmup / step) + math.ceil(measure / step)
        rule = (
            f"{WARMUP_STEPS} warm-up and {MEASURE_STEPS} measured steps of {step:,.1f} s (at least "
            f"{_MIN_WARMUP_S / 60:g} and {MIN_MEASURE_S / 60:g} min)"
        )
    terms = inputs.spec.terms
    nodes, per_node = c.units, c.gpu_count // max(c.units, 1)
    setup = TrainSetup(
        arch=inputs.resolved.arch,
        layout=c.layout,
        seq_len=inputs.resolved.seq_len,
        steps=steps,
        nodes=nodes,
        gpus_per_node=per_node,
        log_freq=1,
        description=f"gpuplan benchmark: {inputs.resolved.arch.name} on {c.gpu_count} x {c.supply.gpu_id}",
        stack=inputs.resolved.stack,
        method=inputs.resolved.method,
        lora_rank=inputs.resolved.lora_rank,
    )
    install, files = train_commands(setup, CONFIG_FILE)
    run = train_run(setup, CONFIG_FILE, node_rank="$NODE_RANK", head="$HEAD")
    heads = [f"# on each of the {nodes} nodes: NODE_RANK=0..{nodes - 1}, HEAD=the first node's address"]
    return bench_recipe(
        BenchRun(c.supply, nodes, c.gpu_count, warmup, measure, terms.download_gb - terms.dataset_gb),
        [*install, *(heads if nodes > 1 else []), run],
        rule,
        config_file=next(iter(files), None),
        config=next(iter(files.values()), None),
    )


def job_candidates(inputs: Inputs, result: PlanResult) -> list[BenchmarkCandidate]:
    """The kept configurations whose cost band overlaps the chosen one's, each with its recipe and
    value (unranked: ``rank`` is 0)."""
    chosen = job_cost_band(result.choice)
    return [
        valued(
            chosen,
            band,
            _recipe(c, inputs),
            gpu=c.supply.gpu_id,
            gpu_name=inputs.snapshot.gpu_spec(c.supply.gpu_id).name,
            gpu_count=c.gpu_count,
            tp=c.tp,
            precision=None,
            layout=c.layout,
            provenance=c.throughput.provenance,
            confidence=c.throughput.confidence,
        )
        for c, band in ((c, job_cost_band(c)) for c in _kept(result))
        if overlaps(band, chosen)
    ]
