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

import pytest

from service.db.seed_files import read_seed_catalog
from solver.calibration import ProfileIndex
from solver.observations import Observation
from tests.solver.throughput_rows import predict_row, source_family

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
"""Coverage is printed, not asserted: works without a FLOPs formula (ResNet-50, SSD, GNMT) have rows from
one publisher only, and NVFP4 rows have no workload precision to ask for, so hiding their source leaves
nothing to predict them from."""


@functools.cache
def _index() -> ProfileIndex:
    catalog = read_seed_catalog()
    return ProfileIndex(catalog.profiles.items, {gpu.gpu_id: gpu for gpu in catalog.gpus})


def _class_of(obs: Observation) -> str:
    return obs.row_class


def _leave_source_out() -> dict[str, list[tuple[Observation, float | None]]]:
    index = _index()
    fitted = {row.profile_id for row in index.fit_rows}
    families: dict[str, list[Observation]] = defaultdict(list)
    for obs in index.observations:
        if obs.profile.profile_id in fitted:
            families[source_family(obs)].append(obs)
    results: dict[str, list[tuple[Observation, float | None]]] = defaultdict(list)
    for rows in families.values():
        hidden = frozenset(obs.profile.profile_id for obs in rows)
        for obs in rows:
            predicted = predict_row(obs, index, hidden)
            error = None if predicted is None else predicted / obs.profile.value - 1
            results[_class_of(obs)].append((obs, error))
    return results


def _summary(pairs: list[tuple[Observation, float | None]]) -> tuple[int, float, float, float, float]:
    errors = sorted(abs(e) for _, e in pairs if e is not None)
    if not errors:
        return len(pairs), 0.0, float("nan"), float("nan"), float("nan")
    p90 = errors[min(len(errors) - 1, int(0.9 * len(errors)))]
    within = sum(1 for e in errors if 0.5 <= 1 + e <= 2.0) / len(errors)
    return len(pairs), len(errors) / len(pairs), statistics.median(errors), p90, within


def test_leave_one_source_out_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    results = _leave_source_out()
    with capsys.disabled():
        print("\nLEAVE-ONE-SOURCE-OUT: every row of one publisher hidden, predicted from the rest")
        print(f"  {'class':<16} {'rows':>5} {'covered':>8} {'median|e|':>10} {'p90|e|':>8} {'within 2x':>10}")
        for work_class in sorted(results):
            n, covered, median, p90, within = _summary(results[work_class])
            print(f"  {work_class:<16} {n:>5} {covered:>8.0%} {median:>10.1%} {p90:>8.1%} {within:>10.0%}")
        by_source: dict[str, list[tuple[Observation, float | None]]] = defaultdict(list)
        for pairs in results.values():
            for obs, error in pairs:
                by_source[source_family(obs)].append((obs, error))
        print("  by source:")
        for source in sorted(by_source):
            n, covered, median, p90, within = _summary(by_source[source])
            print(f"    {source[:44]:<44} {n:>5} {covered:>6.0%} {median:>8.1%} {p90:>8.1%} {within:>6.0%}")
    for work_class, ceiling in MAX_MEDIAN.items():
        _, _, median, _, _ = _summary(results[work_class])
        assert median <= ceiling, (work_class, median)


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
            n, covered, median, p90, within = _summary(results[work_class])
            print(f"  {work_class:<16} {n:>5} {covered:>8.0%} {median:>10.1%} {p90:>8.1%} {within:>10.0%}")
    _, _, median, _, _ = _summary(results["pretrain"])
    assert median <= MAX_MEDIAN["pretrain"]
