"""How well the throughput model predicts measured rows it was not given, per workload class.

Leave-one-source-out: every row of one publisher (a repository or a documentation site) is hidden, the
class model is refitted without them, and each hidden row is predicted end to end (its workload on its
GPUs, links and layout). Rows that cannot be put as a workload count against coverage. Run with ``-s``
to print the table the README quotes.
"""

from __future__ import annotations

import functools
import statistics
from collections import defaultdict
from typing import NamedTuple

import pytest

from service.db.seed_files import read_seed_catalog
from solver.throughput.at_scale import AT_SCALE_GPUS
from solver.throughput.calibration import ProfileIndex
from solver.throughput.observations import Observation
from tests.solver.throughput.throughput_rows import predict_estimate, predict_row, source_family

# Ceilings on the median |error| per class when whole sources are hidden (the check the issue asks for);
# set from what physics plus the shipped calibration data can support, not tuned per row.
MAX_MEDIAN = {
    "pretrain": 0.25,
    "full_finetune": 0.35,
    "lora": 0.35,
    "encoder_vision": 0.45,
    "offline": 0.45,
    "decode": 0.45,
    "prefill": 0.80,
}
THUMB_MFU = 0.40
"""The rule of thumb the issue sets beside the model: dense peak × 0.40 ÷ (6 × parameters)."""

"""Coverage is printed, not asserted: works without a FLOPs formula (ResNet-50, SSD, GNMT) have rows from
one publisher only, and NVFP4 rows have no workload precision to ask for, so hiding their source leaves
nothing to predict them from."""


@functools.cache
def _index() -> ProfileIndex:
    catalog = read_seed_catalog()
    return ProfileIndex(catalog.profiles.items, {gpu.gpu_id: gpu for gpu in catalog.gpus})


def _class_of(obs: Observation) -> str:
    return obs.row_class


class _Scored(NamedTuple):
    """One hidden row: the model's error, whether the row fell in the 10-90 % band, and the rule of
    thumb's error on the same row (``None`` where it does not apply)."""

    obs: Observation
    error: float | None
    inside: bool | None
    thumb: float | None


def _rule_of_thumb(obs: Observation, index: ProfileIndex) -> float | None:
    """Dense peak × 0.40 ÷ (6·P) tokens/s per GPU (LLM training rows only), times the row's GPUs."""
    arch = obs.arch
    if obs.mode != "train" or arch is None or not arch.is_transformer or obs.work.metric != "tokens_per_s":
        return None
    hw = index.hardware(obs.profile.gpu_id)
    precision = obs.hardware.precision
    if not hw.supports(precision):
        return None
    return THUMB_MFU * hw.peak_tflops(precision) * 1e12 * obs.profile.gpu_count / (6 * arch.params_b * 1e9)


def _evaluated(index: ProfileIndex) -> list[Observation]:
    """The rows the table scores: those the class model fits, and the at-scale training runs that
    fit the efficiency-at-scale term instead."""
    fitted = {row.profile_id for row in index.fit_rows}
    return [
        obs
        for obs in index.observations
        if obs.profile.profile_id in fitted
        or (obs.mode == "train" and obs.profile.gpu_count >= AT_SCALE_GPUS and not obs.suspect)
    ]


def _leave_source_out() -> dict[str, list[_Scored]]:
    index = _index()
    families: dict[str, list[Observation]] = defaultdict(list)
    for obs in _evaluated(index):
        families[source_family(obs)].append(obs)
    results: dict[str, list[_Scored]] = defaultdict(list)
    for rows in families.values():
        hidden = frozenset(obs.profile.profile_id for obs in rows)
        for obs in rows:
            found = predict_estimate(obs, index, hidden)
            value = obs.profile.value
            thumb = _rule_of_thumb(obs, index)
            error = None if found is None else found[0] / value - 1
            inside = None if found is None or found[1] is None else found[1][0] <= value <= found[1][1]
            results[_class_of(obs)].append(
                _Scored(obs, error, inside, None if thumb is None else thumb / value - 1)
            )
    return results


def _summary(errors_of: list[float | None]) -> tuple[int, float, float, float, float]:
    errors = sorted(abs(e) for e in errors_of if e is not None)
    if not errors:
        return len(errors_of), 0.0, float("nan"), float("nan"), float("nan")
    p90 = errors[min(len(errors) - 1, int(0.9 * len(errors)))]
    within = sum(1 for e in errors if 0.5 <= 1 + e <= 2.0) / len(errors)
    return len(errors_of), len(errors) / len(errors_of), statistics.median(errors), p90, within


def _coverage(scored: list[_Scored]) -> float:
    inside = [s.inside for s in scored if s.inside is not None]
    return sum(inside) / len(inside) if inside else float("nan")


def _print_table(results: dict[str, list[_Scored]]) -> None:
    print("\nLEAVE-ONE-SOURCE-OUT: every row of one publisher hidden, predicted from the rest")
    print(f"  {'class':<16} {'rows':>5} {'covered':>8} {'median|e|':>10} {'p90|e|':>8} {'within 2x':>10}"
          f" {'in band':>8} | rule of thumb (peak x 0.40 / 6N), same rows: {'median':>7} {'p90':>7} {'2x':>5}")  # fmt: skip
    for work_class in sorted(results):
        scored = results[work_class]
        n, covered, median, p90, within = _summary([s.error for s in scored])
        line = f"  {work_class:<16} {n:>5} {covered:>8.0%} {median:>10.1%} {p90:>8.1%} {within:>10.0%} {_coverage(scored):>8.0%}"
        both = [s for s in scored if s.error is not None and s.thumb is not None]
        if both:
            _, _, t_median, t_p90, t_within = _summary([s.thumb for s in both])
            _, _, m_median, m_p90, _ = _summary([s.error for s in both])
            line += f" | {len(both):>4} rows: model {m_median:.1%} / {m_p90:.1%}, thumb {t_median:>6.1%} {t_p90:>6.1%} {t_within:>5.0%}"
        print(line)
    by_source: dict[str, list[_Scored]] = defaultdict(list)
    for scored in results.values():
        for one in scored:
            by_source[source_family(one.obs)].append(one)
    print("  by source:")
    for source in sorted(by_source):
        n, covered, median, p90, within = _summary([s.error for s in by_source[source]])
        print(f"    {source[:44]:<44} {n:>5} {covered:>6.0%} {median:>8.1%} {p90:>8.1%} {within:>6.0%}")


def test_leave_one_source_out_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    results = _leave_source_out()
    with capsys.disabled():
        _print_table(results)
    for work_class, ceiling in MAX_MEDIAN.items():
        _, _, median, _, _ = _summary([s.error for s in results[work_class]])
        assert median <= ceiling, (work_class, median)
    pretrain = [s for s in results["pretrain"] if s.error is not None and s.thumb is not None]
    _, _, model_median, model_p90, _ = _summary([s.error for s in pretrain])
    _, _, thumb_median, thumb_p90, _ = _summary([s.thumb for s in pretrain])
    assert model_median < thumb_median and model_p90 < thumb_p90  # the model beats the rule of thumb
    _, _, _, _, within = _summary([s.error for s in results["pretrain"]])
    assert within == 1.0  # every hidden pretraining row within 2× (long-context runs were 2.3-2.7× before
    # attention paid FlashAttention's backward recompute and FlashAttention-2's share of Hopper's peak)


@pytest.mark.accuracy
def test_leave_one_row_out_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    """Each row alone hidden (with its exact duplicates) and predicted from every other row: the
    figure to set beside leave-one-source-out (``make accuracy``; a refit per row, about two minutes)."""
    index = _index()
    fitted = {row.profile_id for row in index.fit_rows}
    results: dict[str, list[tuple[Observation, float | None]]] = defaultdict(list)
    for obs in index.observations:
        if obs.profile.profile_id not in fitted:
            continue
        twins = frozenset(
            other.profile.profile_id
            for other in index.observations
            if other.work == obs.work
            and other.hardware == obs.hardware
            and other.profile.gpu_count == obs.profile.gpu_count
        )
        predicted = predict_row(obs, index, twins)
        results[_class_of(obs)].append(
            (obs, None if predicted is None else predicted / obs.profile.value - 1)
        )
    with capsys.disabled():
        print("\nLEAVE-ONE-ROW-OUT: each row (and its exact duplicates) hidden, predicted from the rest")
        print(f"  {'class':<16} {'rows':>5} {'covered':>8} {'median|e|':>10} {'p90|e|':>8} {'within 2x':>10}")
        for work_class in sorted(results):
            n, covered, median, p90, within = _summary([e for _, e in results[work_class]])
            print(f"  {work_class:<16} {n:>5} {covered:>8.0%} {median:>10.1%} {p90:>8.1%} {within:>10.0%}")
    _, _, median, _, _ = _summary([e for _, e in results["pretrain"]])
    assert median <= MAX_MEDIAN["pretrain"]
