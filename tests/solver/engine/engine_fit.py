"""Predict the shipped serving rows with the engine model, score it, and fit its step costs.

``python -m tests.solver.engine.engine_fit`` fits the GPU-side costs (compute and bandwidth shares,
step and sequence overheads) on the even TensorRT-LLM rows, and vLLM's front end and prefill share on
Mélange's short-output rows (:func:`fit_front_end`), by least squares on log error, and prints them
for :mod:`solver.engine.profiles`. ``python -m tests.solver.engine.engine_fit --loso`` fits the
GPU-side costs and the front end on each source with the other held out, for the leave-one-source-out
table of ``make accuracy`` (:data:`tests.solver.engine.test_accuracy.FITTED_WITHOUT`).
"""

from __future__ import annotations

import contextlib
import math
import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from solver.catalog.models import lookup_model
from solver.engine import (
    EngineProfile,
    Replica,
    StepCost,
    StepShape,
    build_replica,
    request_count,
    run_load,
    simulate,
    sizes_of,
)
from solver.engine.profiles import ENGINE_PROFILES
from solver.spec.serving import ServingLoad
from tests.solver.engine.serving_rows import ServingRow, catalog

OFFLINE = ServingLoad(offline=True)
GPU_SIDE = ("compute_efficiency", "bandwidth_efficiency", "kv_bandwidth_efficiency", "step_overhead_s",
            "sequence_overhead_s", "fp4_compute_efficiency")  # fmt: skip
FITTED = (*GPU_SIDE, "request_overhead_s")


@contextlib.contextmanager
def _profile_as(engine: str, profile: EngineProfile | None) -> Iterator[None]:
    """``profile`` stands for ``engine``'s while the block runs."""
    import solver.engine.profiles as profiles

    saved = profiles.ENGINE_PROFILES[engine]  # type: ignore[index]
    if profile is not None:
        profiles.ENGINE_PROFILES[engine] = profile  # type: ignore[index]
    try:
        yield
    finally:
        profiles.ENGINE_PROFILES[engine] = saved  # type: ignore[index]


def _replica(row: ServingRow, engine: str, index: Any, gpus: Any) -> Replica:
    fp8_kv = engine == "trtllm" and row.precision in ("fp8", "fp4")
    return build_replica(lookup_model(row.model), gpus[row.gpu_id], index.hardware(row.gpu_id), tp=row.tp,
                         precision=row.precision, engine=engine,  # type: ignore[arg-type]
                         kv_cache="fp8" if fp8_kv else "auto")  # fmt: skip


def predict(row: ServingRow, profile: EngineProfile | None = None) -> float | None:
    """The row's metric as the engine model predicts it (``None``: the model does not fit)."""
    index, gpus = catalog()
    with _profile_as(row.engine, profile):
        replica = _replica(row, row.engine, index, gpus)
        if replica.kv_capacity_tokens < row.input_tokens + row.output_tokens + 64:
            return None
        result = run_load(replica, [(row.input_tokens, row.output_tokens, 1.0)], OFFLINE)
    return result.output_tokens_per_s if row.metric == "output_tokens_per_s" else result.requests_per_s


class _Recording:
    """A step cost that adds up, over a simulation, the seconds each term of its steps took (of each
    roofline pair, the larger: the one that bound the step)."""

    def __init__(self, cost: StepCost) -> None:
        self.cost = cost
        self.total: dict[str, float] = defaultdict(float)
        self.steps = self.sequences = 0

    def _add(self, terms: dict[str, float], times: float = 1.0) -> None:
        linear = "weights" if terms["weights"] >= terms["linear_compute"] else "linear_compute"
        attention = "kv" if terms["kv"] >= terms["attention_compute"] else "attention_compute"
        for name in (linear, attention, "sync", "step_overhead", "sequence_overhead"):
            self.total[name] += terms[name] * times

    def seconds(self, shape: StepShape) -> float:
        self._add(self.cost.terms(shape))
        self.steps, self.sequences = self.steps + 1, self.sequences + shape.decodes
        return self.cost.seconds(shape)

    def decode_seconds(self, decodes: int, contexts: Any) -> Any:
        for context in contexts:
            self._add(self.cost.terms(StepShape(decodes, float(context))))
        self.steps, self.sequences = self.steps + len(contexts), self.sequences + decodes * len(contexts)
        return self.cost.decode_seconds(decodes, contexts)


def breakdown(row: ServingRow, profile: EngineProfile | None = None) -> dict[str, float] | None:
    """Where the row's predicted time goes: each step term's share of the steps' time (of each
    roofline pair the one that bound), ``front_end`` (the share of the run the serial per-request
    work kept the front end busy; it overlaps the steps), ``batch`` (mean sequences decoding a step),
    ``max_seqs`` and ``kv_requests`` (the scheduler's and the KV cache's room, in requests)."""
    index, gpus = catalog()
    engine = row.engine
    base = profile or ENGINE_PROFILES[engine]  # type: ignore[index]
    with _profile_as(engine, base):
        replica = _replica(row, engine, index, gpus)
    if replica.kv_capacity_tokens < row.input_tokens + row.output_tokens + 64:
        return None
    recorder = _Recording(replica.cost)
    classes = [(row.input_tokens, row.output_tokens, 1.0)]
    count = request_count(replica, classes, OFFLINE)
    done = simulate(replica._replace(cost=recorder), sizes_of(classes, count), load="offline",  # type: ignore[arg-type]
                    value=0.0, requests=count)  # fmt: skip
    wall = max(r.finish for r in done)
    busy = sum(recorder.total.values())
    shares = {name: seconds / busy for name, seconds in recorder.total.items() if busy > 0}
    shares["front_end"] = replica.request_overhead_s * len(done) / wall
    shares["batch"] = recorder.sequences / max(recorder.steps, 1)
    shares["max_seqs"], shares["kv_requests"] = (
        replica.max_seqs,
        replica.kv_capacity_tokens / (row.input_tokens + row.output_tokens),
    )
    return shares


def log_errors(rows: Sequence[ServingRow], profile: EngineProfile | None = None) -> list[float]:
    errors = []
    for row in rows:
        value = predict(row, profile)
        errors.append(3.0 if value is None or value <= 0 else math.log(value / row.measured))
    return errors


def summary(errors: Sequence[float]) -> str:
    absolute = sorted(abs(math.expm1(e)) for e in errors)
    p90 = absolute[int(0.9 * (len(absolute) - 1))]
    within = sum(abs(e) <= math.log(2) for e in errors) / len(errors)
    return (f"n={len(errors)} median {statistics.median(absolute):.1%} p90 {p90:.1%} "
            f"within 2x {within:.0%} bias x{math.exp(statistics.median(errors)):.2f}")  # fmt: skip


BOUNDS = {
    "compute_efficiency": (0.3, 0.9),
    "bandwidth_efficiency": (0.5, 0.9),
    "kv_bandwidth_efficiency": (0.3, 0.9),
    "step_overhead_s": (5e-4, 2e-3),
    "sequence_overhead_s": (1e-7, 5e-5),
    "request_overhead_s": (1e-4, 5e-2),
    "fp4_compute_efficiency": (0.3, 1.0),
}
"""Physically plausible ranges: without them the fit trades bandwidth (to 100 %) for a 20 ms step,
which fits offline batches and misses every small-batch latency. The step overhead's upper bound is a
prior, not a fit: an engine step under CUDA graphs is one graph launch plus the scheduler's and the
sampler's CPU work, about a millisecond, and the offline rows cannot tell it apart from the bandwidth
shares (the held-out median error stays within 1.5 points for any step overhead from 0.5 to 6 ms);
left to 6 ms it sat at that bound and doubled a single stream's predicted time per output token."""


LOSO_FITTED = ("compute_efficiency", "bandwidth_efficiency", "sequence_overhead_s", "request_overhead_s")
"""What Mélange's rows fit when TensorRT-LLM's are held out: the GPU shares, and beside them the CPU
costs of Mélange's vLLM (early 2024: one Python process scheduling, sampling and detokenising each
sequence every step, and serving HTTP), so that the GPU shares carried over to TensorRT-LLM are the
GPU's. Those CPU costs stay with that engine (TensorRT-LLM keeps its own step costs). Without the
per-sequence term the fit pushed the bandwidth share to its 0.3 bound to explain Mélange's long
outputs, where H100 and A100 produce the same tokens/s (1,820 and 1,817 at 12 in / 175 out) although
H100 has 1.7 times the bandwidth: a CPU bound, not a memory one."""


def fit(
    rows: Sequence[ServingRow],
    start: EngineProfile,
    names: Sequence[str] | None = None,
    evaluations: int = 40,
) -> EngineProfile:
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    names = names or (FITTED if start.request_overhead_s > 0 else GPU_SIDE)
    low = [math.log(BOUNDS[n][0]) for n in names]
    high = [math.log(BOUNDS[n][1]) for n in names]
    x0 = [min(max(math.log(max(getattr(start, n), 1e-7)), lo + 1e-6), hi - 1e-6)
          for n, lo, hi in zip(names, low, high, strict=True)]  # fmt: skip

    def profile_at(x: Sequence[float]) -> EngineProfile:
        return start._replace(**{n: math.exp(v) for n, v in zip(names, x, strict=True)})

    found = least_squares(lambda x: log_errors(rows, profile_at(x)), x0, bounds=(low, high), diff_step=0.05,
                          max_nfev=evaluations, loss="soft_l1", f_scale=0.3)  # fmt: skip
    return profile_at(found.x)


SHORT_OUTPUT = 25
"""Mélange's shortest output bucket, (0, 25] tokens: its rows isolate the front end and the prefill."""


def fit_front_end(rows: Sequence[ServingRow], start: EngineProfile) -> EngineProfile:
    """``start`` with ``compute_efficiency`` (the prefill) and ``request_overhead_s`` (the front end)
    fitted on the rows of at most :data:`SHORT_OUTPUT` generated tokens, where decoding costs little
    and the serial front end and the prefill set the rate."""
    from scipy.optimize import least_squares

    short = [row for row in rows if row.output_tokens <= SHORT_OUTPUT]
    names = ("compute_efficiency", "request_overhead_s")
    low, high = [math.log(0.1), math.log(1e-3)], [math.log(0.9), math.log(0.05)]

    def profile_at(x: Sequence[float]) -> EngineProfile:
        return start._replace(**{n: math.exp(v) for n, v in zip(names, x, strict=True)})

    found = least_squares(lambda x: log_errors(short, profile_at(x)), [math.log(0.4), math.log(0.02)],
                          bounds=(low, high), diff_step=0.05, loss="soft_l1", f_scale=0.3)  # fmt: skip
    return profile_at(found.x)


def _rounded(profile: EngineProfile) -> dict[str, float]:
    return {n: round(getattr(profile, n) or 0.0, 6) for n in FITTED}


if __name__ == "__main__":
    import sys

    from tests.solver.engine.serving_rows import melange_rows, trtllm_rows

    trt, melange = trtllm_rows(), melange_rows()
    if "--loso" in sys.argv:  # TensorRT-LLM held out: every cost from Mélange's (even) rows
        wide = ENGINE_PROFILES["vllm"]._replace(compute_efficiency=0.4, bandwidth_efficiency=0.6,
                                                request_overhead_s=0.02, kv_bandwidth_efficiency=None,
                                                sequence_overhead_s=1e-4)  # fmt: skip
        BOUNDS.update(
            compute_efficiency=(0.1, 0.9), bandwidth_efficiency=(0.3, 0.9), sequence_overhead_s=(1e-6, 2e-3)
        )
        found = fit(melange[::2], wide, LOSO_FITTED, 30)
        print("fitted without trtllm (on Mélange's even rows):", _rounded(found))
        print("Mélange's odd rows with it:", summary(log_errors(melange[1::2], found)))
        sys.exit(0)
    start = ENGINE_PROFILES["trtllm"]
    print("trtllm prior:", summary(log_errors(trt)))
    fitted = fit(trt[::2], start)
    print("trtllm fitted on even rows:", _rounded(fitted))
    print("trtllm held-out odd rows:", summary(log_errors(trt[1::2], fitted)))
    front = fit_front_end(
        melange, ENGINE_PROFILES["vllm"]._replace(**{n: getattr(fitted, n) for n in GPU_SIDE})
    )
    print("vllm front end and prefill on Mélange's short outputs:", _rounded(front))
    print("vllm on every Mélange row:", summary(log_errors(melange, front)))
