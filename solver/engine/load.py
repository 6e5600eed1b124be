"""Run a load of a request mix on one replica: the sizes in order, how many requests, the simulation.

The mix's classes are interleaved in proportion to their shares (a seeded shuffle of the class of
each request, so the order is deterministic). How many requests run, unless the load says: enough
for a steady state — four rounds of the batch the replica can hold (``max_num_seqs``, or fewer where
the KV cache runs out first, or where the front end lets fewer in: it issues one request per
``request_overhead_s``, so at most a request's lifetime ÷ that are in flight; at least 200 requests)
for a batch or stream, ten per client in a closed loop — bounded so one simulation stays near
:data:`STEP_BUDGET` engine steps (a step per generated token of the batch) and within 20 to 4,096
requests.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Final

from solver.engine.result import KEEP_UP, EngineResult, Percentiles, summarise
from solver.engine.simulate import Replica, simulate
from solver.engine.step_cost import StepShape
from solver.spec.serving import ServingLoad

__all__ = ["STEP_BUDGET", "request_count", "run_load", "sizes_of"]

STEP_BUDGET: Final = 40_000


def sizes_of(classes: Sequence[tuple[int, int, float]], count: int, seed: int = 0) -> list[tuple[int, int]]:
    """``count`` (prompt, output) sizes, each class ``(prompt, output, share)`` in its share."""
    sizes: list[tuple[int, int]] = []
    for prompt, output, share in classes:
        sizes.extend([(prompt, output)] * max(1, round(share * count)))
    random.Random(seed).shuffle(sizes)
    return sizes[:count] if len(sizes) >= count else sizes


def request_count(replica: Replica, classes: Sequence[tuple[int, int, float]], load: ServingLoad) -> int:
    """Requests to simulate for ``load`` (module docstring)."""
    if load.requests is not None:
        return load.requests
    name, value = load.mode()
    mean_output = sum(output * share for _, output, share in classes)
    mean_size = sum((prompt + output) * share for prompt, output, share in classes)
    batch = max(1, min(replica.max_seqs, int(replica.kv_capacity_tokens / max(mean_size, 1.0))))
    if replica.request_overhead_s > 0:  # the front end's pace: a request lives at least its decode steps
        step = replica.cost.seconds(StepShape(1, mean_size))
        batch = max(1, min(batch, math.ceil(mean_output * step / replica.request_overhead_s)))
    in_flight = min(value, batch) if name == "concurrency" else batch
    wanted = 10 * value if name == "concurrency" else max(4 * batch, 200)
    affordable = STEP_BUDGET * max(in_flight, 1) / max(mean_output, 1.0)
    return int(min(max(min(wanted, affordable), 20), 4096))


def run_load(
    replica: Replica,
    classes: Sequence[tuple[int, int, float]],
    load: ServingLoad,
    seed: int = 0,
    *,
    saturated: float | None = None,
) -> EngineResult:
    """Simulate ``load`` of the mix ``classes`` on ``replica``. A Poisson rate is judged sustained
    against the replica's saturated rate (``saturated`` requests/s, simulated offline when not given)."""
    name, value = load.mode()
    count = request_count(replica, classes, load)
    sizes = sizes_of(classes, count, seed)
    done = simulate(replica, sizes, load=name, value=value, requests=len(sizes), seed=seed)
    if not done:
        return _nothing(math.inf)
    stable = True
    if name == "requests_per_s":
        if saturated is None:
            saturated = run_load(replica, classes, ServingLoad(offline=True), seed).requests_per_s
        stable = value <= KEEP_UP * saturated
    prompts = [sizes[i % len(sizes)][0] for i in range(len(done))]
    return summarise(done, prompts, name, stable=stable)


def _nothing(latency: float) -> EngineResult:
    never = Percentiles(p50=latency, p90=latency, p99=latency)
    return EngineResult(output_tokens_per_s=0.0, total_tokens_per_s=0.0, requests_per_s=0.0, ttft_ms=never,
                        tpot_ms=never, e2e_ms=never, requests_simulated=0, stable=False)  # fmt: skip
