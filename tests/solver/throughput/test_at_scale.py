"""The efficiency-at-scale term: one loss rate per GPU architecture where its runs say so."""

from __future__ import annotations

import math

import pytest

from solver.throughput.at_scale import AT_SCALE_GPUS, PRIOR_WEIGHT, ScalePoint, fit_scale_term


def _run(gpus: int, loss_per_log_gpus: float, architecture: str) -> ScalePoint:
    """A 100B run that keeps exp(−rate · ln(n / 256)) of what the step model gives it."""
    x = math.log(gpus / AT_SCALE_GPUS)
    return ScalePoint(
        gpus=gpus, params=1e11, log_ratio=-loss_per_log_gpus * x, source="s", architecture=architecture
    )


def test_an_architecture_whose_runs_lose_more_at_scale_gets_the_larger_loss() -> None:
    term = fit_scale_term([*(_run(n, 0.12, "ampere") for n in (512, 1536, 3072)),
                           *(_run(n, 0.02, "hopper") for n in (512, 4608))])  # fmt: skip
    assert term.alpha_of("ampere") > term.alpha > term.alpha_of("hopper") > 0
    assert term.factor(4096, 1e11, "ampere") < term.factor(4096, 1e11) < term.factor(4096, 1e11, "hopper")
    assert "ampere's" in term.text(4096, 1e11, "ampere") and "pooled" in term.text(4096, 1e11, "cdna3")


def test_an_architecture_with_few_runs_moves_only_part_of_the_way_from_the_pooled_loss() -> None:
    """One run at 1,024 GPUs weighs ln(4)² ≈ 1.9 against the pooled value's PRIOR_WEIGHT."""
    runs = [*(_run(n, 0.10, "ampere") for n in (512, 1024, 2048, 4096)), _run(1024, 0.0, "blackwell")]
    term = fit_scale_term(runs)
    x2 = math.log(1024 / AT_SCALE_GPUS) ** 2
    assert term.alpha_of("blackwell") == pytest.approx(term.alpha * PRIOR_WEIGHT / (PRIOR_WEIGHT + x2))
    assert 0 < term.alpha_of("blackwell") < term.alpha < term.alpha_of("ampere")
    assert term.alpha_of("volta") == term.alpha  # no runs of its own: the pooled loss
