"""How far the engine model is from the shipped serving measurements (``make accuracy`` prints it).

**Leave one source out.** The shipped serving sources the model can simulate are TensorRT-LLM's
offline tables (``trtllm-bench``: output tokens/s at an input/output length) and Mélange's vLLM
profiles (requests/s per length bucket, under a latency SLO it does not state). Each is predicted
with the costs fitted on the other alone (:data:`FITTED_WITHOUT`, ``python -m
tests.solver.engine.engine_fit --loso`` fits them): TensorRT-LLM's rows with everything fitted on
Mélange's; Mélange's with the GPU-side costs fitted on TensorRT-LLM's and the front end as assumed
before any vLLM source was used (2 ms: no other source measures it). Beside each, a naive roofline
(the same scheduler at peak rates with no overheads) in the same run, per GPU family, and the worst
rows. MLPerf Inference's rows (``throughput_mlperf_inference.csv``) cannot be simulated: the shipped
file names their datasets (OpenOrca, CNN/DailyMail, …) but not their mean input and output lengths.

**The shipped profiles**, for comparison: TensorRT-LLM's odd rows, held out of the GPU-side fit (on
its even rows), and Mélange's rows with vLLM's front end and prefill fitted on its short outputs.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Final

import pytest

from solver.engine import ENGINE_PROFILES, EngineProfile
from tests.solver.engine.engine_fit import log_errors, summary
from tests.solver.engine.serving_rows import ServingRow, catalog, melange_rows, trtllm_rows

FITTED_WITHOUT: Final[dict[str, dict[str, float]]] = {
    "trtllm": {"compute_efficiency": 0.255103, "bandwidth_efficiency": 0.300419, "request_overhead_s": 0.027279},
    "melange": {"compute_efficiency": 0.613, "bandwidth_efficiency": 0.684, "step_overhead_s": 6.0e-3,
                "sequence_overhead_s": 9e-6, "request_overhead_s": 2.0e-3},
}  # fmt: skip
"""Per held-out source, the costs fitted without it (``engine_fit --loso``; the TensorRT-LLM fit is
the shipped one, which saw none of Mélange's rows)."""
_NAIVE: Final = {"compute_efficiency": 1.0, "bandwidth_efficiency": 1.0, "step_overhead_s": 0.0,
                 "sequence_overhead_s": 0.0, "request_overhead_s": 0.0}  # fmt: skip


def _source(name: str) -> tuple[list[ServingRow], str]:
    return (trtllm_rows(), "trtllm") if name == "trtllm" else (melange_rows(), "vllm")


def _profile(engine: str, costs: dict[str, float]) -> EngineProfile:
    profile: EngineProfile = ENGINE_PROFILES[engine]._replace(**costs)  # type: ignore[index]
    return profile if engine != "trtllm" else profile._replace(request_overhead_s=0.0)


def _by_family(rows: Sequence[ServingRow], errors: Sequence[float]) -> dict[str, list[float]]:
    _, gpus = catalog()
    grouped: dict[str, list[float]] = defaultdict(list)
    for row, error in zip(rows, errors, strict=True):
        grouped[gpus[row.gpu_id].family].append(error)
    return grouped


def _table(title: str, rows: Sequence[ServingRow], model: list[float], naive: list[float]) -> None:
    print(f"{title}\n  engine {summary(model)}\n  naive  {summary(naive)}")
    naive_by = _by_family(rows, naive)
    for family, errors in sorted(_by_family(rows, model).items()):
        print(f"  {family:>10}: engine {summary(errors)} | naive {summary(naive_by[family])}")
    worst = sorted(zip(model, rows, strict=True), key=lambda pair: -abs(pair[0]))[:5]
    for error, row in worst:
        print(f"    worst x{math.exp(error):.2f}: {row.model} on {row.tp} x {row.gpu_id} {row.precision} "
              f"{row.input_tokens}/{row.output_tokens} ({row.metric} {row.measured:,.4g})")  # fmt: skip


def _absolute_median(errors: Sequence[float]) -> float:
    return statistics.median(abs(math.expm1(e)) for e in errors)


@pytest.mark.accuracy
def test_print_the_leave_one_source_out_error() -> None:
    print("\nServing rows, each source predicted with the costs fitted on the other (leave one source out)")
    for held_out in ("trtllm", "melange"):
        rows, engine = _source(held_out)
        model = log_errors(rows, _profile(engine, FITTED_WITHOUT[held_out]))
        naive = log_errors(rows, _profile(engine, _NAIVE))
        _table(f"{held_out} held out ({engine} engine, n={len(rows)})", rows, model, naive)
        assert _absolute_median(model) < _absolute_median(naive)
    print("MLPerf Inference: not scored (the shipped rows name datasets, not their mean lengths)")


@pytest.mark.accuracy
def test_print_the_shipped_profiles_error() -> None:
    held_out = trtllm_rows()[1::2]
    model, naive = log_errors(held_out), log_errors(held_out, _profile("trtllm", _NAIVE))
    _table("\nTensorRT-LLM odd rows, held out of the shipped GPU-side fit", held_out, model, naive)
    melange = melange_rows()
    vllm, naive = log_errors(melange), log_errors(melange, _profile("vllm", _NAIVE))
    _table("Mélange with the shipped vllm profile (front end and prefill fitted on its short outputs)",
           melange, vllm, naive)  # fmt: skip
    assert _absolute_median(model) < 0.35
