"""A running server for the tests that need real HTTP: the app under uvicorn on a free local port, in a
thread (generated clients, schemathesis), or a real ``gpuplan serve`` process (``serve_process``)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from litestar import Litestar

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

__all__ = ["free_port", "serve_process", "serve_processes", "serving", "serving_fresh_store"]


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(
    db: str | Path, env: Mapping[str, str] | None, log: Path | None
) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    with contextlib.ExitStack() as files:  # the child keeps its own copy of the log's descriptor
        output = subprocess.DEVNULL if log is None else files.enter_context(log.open("ab"))
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, "GPUPLAN_DB": str(db), **(env or {})},
            stdout=output,
            stderr=output,
        )
    return f"http://127.0.0.1:{port}", process


def _await_health(url: str, process: subprocess.Popen[bytes], deadline: float, timeout_s: float) -> None:
    while True:
        assert process.poll() is None, f"gpuplan serve exited with {process.returncode}"
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"gpuplan serve did not answer within {timeout_s:g} s"
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:  # already gone (a test may kill one)
        return
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serve_processes(
    db: str | Path,
    count: int,
    *,
    env: Mapping[str, str] | None = None,
    start_timeout_s: float = 90,
    log: Path | None = None,
) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """``count`` real ``gpuplan serve`` processes on the database ``db``, each on a free loopback port,
    started together, with ``env`` added to this environment (and their output appended to ``log``);
    yields their base URLs (once each ``/health`` answers 200) and processes, stopped at the end."""
    started: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        for _ in range(count):
            started.append(_start(db, env, log))
        deadline = time.monotonic() + start_timeout_s
        for url, process in started:
            _await_health(url, process, deadline, start_timeout_s)
        yield started
    finally:
        for _, process in started:
            _stop(process)


@contextmanager
def serve_process(
    db: str | Path, *, env: Mapping[str, str] | None = None, start_timeout_s: float = 90
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``gpuplan serve`` process on the database ``db`` and a free loopback port, with ``env`` added
    to this environment; yields its base URL (once ``/health`` answers 200) and the process, stopped at
    the end of the block."""
    with serve_processes(db, 1, env=env, start_timeout_s=start_timeout_s) as (one,):
        yield one


@contextmanager
def serving(app: Litestar) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL."""
    port = free_port()
    # loop "asyncio": with uvloop installed, uvicorn < 0.36 makes it the process's event-loop policy,
    # and later asyncio.run calls in this test process would resolve names without socket.getaddrinfo
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", ws="none", loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serving_fresh_store(settings: Settings, target: str = ":memory:") -> Iterator[str]:
    """Serve the app with ``settings`` on a fresh store of its own (in memory, or ``target``: a fresh
    database of the test's backend); yields its base URL."""
    store = Store.open(target)
    try:
        with serving(create_app(settings, store=store)) as url:
            yield url
    finally:
        store.close()
