"""Predict the shipped serving rows with the engine model, score it, and fit its step costs.

``python -m tests.solver.engine.engine_fit`` fits each engine's efficiencies and overheads on its
rows (TensorRT-LLM rows for ``trtllm``, Mélange rows for ``vllm``) by least squares on log error and
prints them, with the leave-one-group-out error, for :mod:`solver.engine.profiles`.
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


def fit(rows: Sequence[ServingRow], start: EngineProfile) -> EngineProfile:
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    names = FITTED if start.request_overhead_s > 0 else FITTED[:4]
    low = [math.log(BOUNDS[n][0]) for n in names]
    high = [math.log(BOUNDS[n][1]) for n in names]
    x0 = [min(max(math.log(max(getattr(start, n), 1e-7)), lo + 1e-6), hi - 1e-6)
          for n, lo, hi in zip(names, low, high, strict=True)]  # fmt: skip

    def profile_at(x: Sequence[float]) -> EngineProfile:
        return start._replace(**{n: math.exp(v) for n, v in zip(names, x, strict=True)})

    found = least_squares(lambda x: log_errors(rows, profile_at(x)), x0, bounds=(low, high), diff_step=0.05,
                          max_nfev=40, loss="soft_l1", f_scale=0.3)  # fmt: skip
    return profile_at(found.x)


if __name__ == "__main__":
    from tests.solver.engine.serving_rows import melange_rows, trtllm_rows

    for engine, rows in (("trtllm", trtllm_rows()), ("vllm", melange_rows())):
        start = ENGINE_PROFILES[engine]  # type: ignore[index]
        print(engine, "prior:", summary(log_errors(rows)))
        fitted = fit(rows[::2], start)
        print(engine, "fitted on even rows:", {n: round(getattr(fitted, n), 6) for n in FITTED})
        print(engine, "held-out odd rows:", summary(log_errors(rows[1::2], fitted)))
