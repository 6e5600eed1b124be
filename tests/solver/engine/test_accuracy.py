"""How far the engine model is from the shipped serving measurements (``make accuracy`` prints it).

TensorRT-LLM's offline rows are split in two: the even ones fitted the engine's compute and bandwidth
shares and step overhead (:mod:`tests.solver.engine.engine_fit`), so the odd ones are held out. The
table gives the held-out error per GPU family, beside a naive roofline (the same scheduler at 100 %
of the peak rates with no overheads). Mélange's rows (vLLM, an unstated SLO) are compared with the
simulated offline rate, which they should not exceed.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

import pytest

from solver.engine import ENGINE_PROFILES
from tests.solver.engine.engine_fit import log_errors, predict, summary
from tests.solver.engine.serving_rows import catalog, melange_rows, trtllm_rows

NAIVE = ENGINE_PROFILES["trtllm"]._replace(
    compute_efficiency=1.0, bandwidth_efficiency=1.0, step_overhead_s=0.0, sequence_overhead_s=0.0
)


def _by_family(rows: list, errors: list[float]) -> dict[str, list[float]]:  # type: ignore[type-arg]
    _, gpus = catalog()
    grouped: dict[str, list[float]] = defaultdict(list)
    for row, error in zip(rows, errors, strict=True):
        grouped[gpus[row.gpu_id].family].append(error)
    return grouped


@pytest.mark.accuracy
def test_print_the_engine_models_held_out_error() -> None:
    held_out = trtllm_rows()[1::2]
    model, naive = log_errors(held_out), log_errors(held_out, NAIVE)
    print(f"\nTensorRT-LLM offline rows held out of the fit: engine {summary(model)}")
    print(f"  naive roofline (same scheduler, peak rates, no overheads): {summary(naive)}")
    for family, errors in sorted(_by_family(held_out, model).items()):
        print(f"  {family:>10}: {summary(errors)}")
    melange = melange_rows()
    ratios = [row.measured / value for row in melange if (value := predict(row))]
    print(f"Mélange (vLLM under an unstated SLO) measured / simulated offline rate: median "
          f"{statistics.median(ratios):.2f}, {sum(r <= 1.05 for r in ratios) / len(ratios):.0%} at or below it")  # fmt: skip
    assert statistics.median(abs(e) for e in model) < statistics.median(abs(e) for e in naive)
    assert statistics.median(abs(math.expm1(e)) for e in model) < 0.35
