"""Predict the shipped serving rows with the engine model, score it, and fit its step costs.

``python -m tests.solver.engine.engine_fit`` fits the GPU-side costs (compute and bandwidth shares,
step and sequence overheads) on the even TensorRT-LLM rows, and vLLM's front end and prefill share on
Mélange's short-output rows (:func:`fit_front_end`), by least squares on log error, and prints them
for :mod:`solver.engine.profiles`. ``python -m tests.solver.engine.engine_fit --loso`` fits the
GPU-side costs and the front end on each source with the other held out, for the leave-one-source-out
table of ``make accuracy`` (:data:`tests.solver.engine.test_accuracy.FITTED_WITHOUT`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from solver.catalog.models import lookup_model
from solver.engine import EngineProfile, build_replica, run_load
from solver.engine.profiles import ENGINE_PROFILES
from solver.spec.serving import ServingLoad
from tests.solver.engine.serving_rows import ServingRow, catalog

OFFLINE = ServingLoad(offline=True)
FITTED = ("compute_efficiency", "bandwidth_efficiency", "step_overhead_s", "sequence_overhead_s",
          "request_overhead_s")  # fmt: skip


def predict(row: ServingRow, profile: EngineProfile | None = None) -> float | None:
    """The row's metric as the engine model predicts it (``None``: the model does not fit)."""
    index, gpus = catalog()
    import solver.engine.profiles as profiles

    engine = row.engine
    saved = profiles.ENGINE_PROFILES[engine]  # type: ignore[index]
    if profile is not None:
        profiles.ENGINE_PROFILES[engine] = profile  # type: ignore[index]
    try:
        replica = build_replica(lookup_model(row.model), gpus[row.gpu_id], index.hardware(row.gpu_id),
                                tp=row.tp, precision=row.precision, engine=engine,  # type: ignore[arg-type]
                                kv_cache="fp8" if engine == "trtllm" and row.precision in ("fp8", "fp4") else "auto")  # fmt: skip
        if replica.kv_capacity_tokens < row.input_tokens + row.output_tokens + 64:
            return None
        result = run_load(replica, [(row.input_tokens, row.output_tokens, 1.0)], OFFLINE)
    finally:
        profiles.ENGINE_PROFILES[engine] = saved  # type: ignore[index]
    return result.output_tokens_per_s if row.metric == "output_tokens_per_s" else result.requests_per_s


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
    "bandwidth_efficiency": (0.5, 0.85),
    "step_overhead_s": (5e-4, 6e-3),
    "sequence_overhead_s": (1e-7, 5e-5),
    "request_overhead_s": (1e-4, 5e-2),
}
"""Physically plausible ranges: without them the fit trades bandwidth (to 100 %) for a 20 ms step,
which fits offline batches and misses every small-batch latency."""


LOSO_FITTED = ("compute_efficiency", "bandwidth_efficiency", "request_overhead_s")
"""What Mélange's rows fit when TensorRT-LLM's are held out (its steps keep their bounds' priors)."""


def fit(
    rows: Sequence[ServingRow],
    start: EngineProfile,
    names: Sequence[str] | None = None,
    evaluations: int = 40,
) -> EngineProfile:
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    names = names or (FITTED if start.request_overhead_s > 0 else FITTED[:4])
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
    return {n: round(getattr(profile, n), 6) for n in FITTED}


if __name__ == "__main__":
    import sys

    from tests.solver.engine.serving_rows import melange_rows, trtllm_rows

    trt, melange = trtllm_rows(), melange_rows()
    if "--loso" in sys.argv:  # TensorRT-LLM held out: every cost from Mélange's (even) rows
        wide = ENGINE_PROFILES["vllm"]._replace(compute_efficiency=0.4, bandwidth_efficiency=0.6,
                                                request_overhead_s=0.02)  # fmt: skip
        BOUNDS.update(compute_efficiency=(0.1, 0.9), bandwidth_efficiency=(0.3, 0.85))
        print("fitted without trtllm (on Mélange):", _rounded(fit(melange[::2], wide, LOSO_FITTED, 25)))
        sys.exit(0)
    start = ENGINE_PROFILES["trtllm"]
    print("trtllm prior:", summary(log_errors(trt)))
    fitted = fit(trt[::2], start)
    print("trtllm fitted on even rows:", _rounded(fitted))
    print("trtllm held-out odd rows:", summary(log_errors(trt[1::2], fitted)))
    front = fit_front_end(
        melange, ENGINE_PROFILES["vllm"]._replace(**{n: getattr(fitted, n) for n in FITTED[:4]})
    )
    print("vllm front end and prefill on Mélange's short outputs:", _rounded(front))
    print("vllm on every Mélange row:", summary(log_errors(melange, front)))
