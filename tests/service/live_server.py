"""A running server for the tests that need real HTTP (generated clients, schemathesis): the app under
uvicorn on a free local port, in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from litestar import Litestar

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

__all__ = ["serving", "serving_fresh_store"]


@contextmanager
def serving(app: Litestar) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
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
