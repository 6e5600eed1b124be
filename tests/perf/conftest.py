"""Benchmarks: run by `make bench` only (marker `perf`); they print ratios measured in one run."""

from __future__ import annotations

import logging
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(db: Path | str, **env: str) -> Iterator[tuple[str, int]]:
    """The real service (``gpuplan serve``: uvicorn, one worker, a seeded DuckDB file or a PostgreSQL
    URL ``db``) on a free loopback port, with ``env`` added to its environment and no plan rate limit;
    its URL and pid."""
    port = _free_port()
    environment = {
        **os.environ,
        "GPUPLAN_DB": str(db),
        "GPUPLAN_LOG_LEVEL": "WARNING",
        "GPUPLAN_PLAN_RATE": "0",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--log-level", "WARNING"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("the server did not start")
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=60)
