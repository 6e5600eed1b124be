"""A running server for the tests that need real HTTP: the app under uvicorn on a free local port, in a
thread (generated clients, schemathesis), or a real ``gpuplan serve`` process (``serve_process``)."""

from __future__ import annotations

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

__all__ = ["free_port", "serve_process", "serving", "serving_fresh_store"]


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve_process(
    db: str | Path, *, env: Mapping[str, str] | None = None, start_timeout_s: float = 90
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``gpuplan serve`` process on the database ``db`` and a free loopback port, with ``env`` added
    to this environment; yields its base URL (once ``/health`` answers 200) and the process, stopped at
    the end of the block."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "GPUPLAN_DB": str(db), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            assert process.poll() is None, f"gpuplan serve exited with {process.returncode}"
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"gpuplan serve did not answer within {start_timeout_s:g} s"
            time.sleep(0.2)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(app: Litestar) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
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
def serving_fresh_store(settings: Settings) -> Iterator[str]:
    """Serve the app with ``settings`` on a fresh in-memory store of its own; yields its base URL."""
    store = Store.open(":memory:")
    try:
        with serving(create_app(settings, store=store)) as url:
            yield url
    finally:
        store.close()
