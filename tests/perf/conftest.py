"""Benchmarks: run by `make bench` only (marker `perf`); they print ratios measured in one run."""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.service.live_server import serve_process

logging.getLogger("httpx").setLevel(logging.WARNING)


_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(pytest.mark.perf)


def percentile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


@contextmanager
def running_server(db: Path, **env: str) -> Iterator[tuple[str, int]]:
    """The real service (``gpuplan serve``: uvicorn, one worker, a seeded DuckDB file ``db``) on a free
    loopback port, with ``env`` added to its environment and no plan rate limit; its URL and pid."""
    quiet = {"GPUPLAN_LOG_LEVEL": "WARNING", "GPUPLAN_PLAN_RATE": "0", **env}
    with serve_process(db, env=quiet) as (url, process):
        yield url, process.pid
