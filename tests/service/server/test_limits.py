"""Stalled or incomplete requests end within a bounded time (issue 13, B11): a real uvicorn server with
the protocol and middleware ``gpuplan serve`` uses, and raw sockets that send half a request."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from litestar.testing import TestClient

from service.app import create_app
from service.cli import main
from service.db.store import Store
from service.server.limits import MAX_HEAD_BYTES, head_limited_h11
from service.settings import Settings

LIMIT_S = 0.5
"""The request time limit of the test server (GPUPLAN_REQUEST_TIMEOUT_S)."""


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    store = Store.open(":memory:")
    app = create_app(Settings(db_path=":memory:", request_timeout_s=LIMIT_S), store=store)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        http=head_limited_h11(LIMIT_S),
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        ws="none",
        loop="asyncio",  # not uvloop as the process's policy (see tests/service/live_server.py)
        log_level="warning",
        lifespan="on",
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    port = instance.servers[0].sockets[0].getsockname()[1]
    yield "127.0.0.1", port
    instance.should_exit = True
    thread.join(10)
    store.close()


def _send(address: tuple[str, int], data: bytes) -> tuple[socket.socket, float]:
    sock = socket.create_connection(address, timeout=10)
    if data:
        sock.sendall(data)
    return sock, time.monotonic()


def _read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    with sock:
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_half_a_request_head_is_closed_in_time(server: tuple[str, int]) -> None:
    sock, started = _send(server, b"GET /health HTTP/1.1\r\nHost: x\r\n")  # no blank line: never complete
    assert _read_until_closed(sock) == b""
    assert time.monotonic() - started < LIMIT_S + 3


def test_a_silent_connection_is_closed_in_time(server: tuple[str, int]) -> None:
    sock, started = _send(server, b"")
    assert _read_until_closed(sock) == b""
    assert time.monotonic() - started < LIMIT_S + 3


def test_a_stalled_body_is_a_408(server: tuple[str, int]) -> None:
    head = (
        b"POST /v1/plans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n"
    )
    sock, started = _send(server, head + b'{"kind": "train"')  # 16 of 400 bytes, then nothing
    answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"application/problem+json" in answer and b"did not arrive within" in answer
    assert time.monotonic() - started < LIMIT_S + 3


def test_a_second_request_head_on_a_kept_alive_connection_is_bounded_too(server: tuple[str, int]) -> None:
    sock, started = _send(server, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HT")
    answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1 ") == 1
    assert time.monotonic() - started < LIMIT_S + 3


def test_a_whole_request_is_answered_and_an_endless_head_refused(server: tuple[str, int]) -> None:
    sock, _ = _send(server, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert _read_until_closed(sock).startswith(b"HTTP/1.1 200 ")
    # h11 bounds a head still incomplete (a complete one arriving in one piece is parsed as it is)
    unfinished = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEAD_BYTES + 10)
    sock, _ = _send(server, unfinished)
    assert _read_until_closed(sock).startswith(b"HTTP/1.1 400 ")


def test_gpuplan_serve_configures_the_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: calls.append(kwargs))
    monkeypatch.setenv("GPUPLAN_REQUEST_TIMEOUT_S", "7")
    assert main(["serve", "--db", str(tmp_path / "g.duckdb"), "--port", "8123"]) == 0
    (kwargs,) = calls
    assert kwargs["http"].head_timeout_s == 7 and kwargs["timeout_keep_alive"] == 5
    assert kwargs["h11_max_incomplete_event_size"] == MAX_HEAD_BYTES


def test_every_operation_with_a_body_documents_its_408(client: TestClient[Any]) -> None:
    paths = client.get("/schema/openapi.json").json()["paths"]
    with_body = [
        (path, method, operation)
        for path, item in paths.items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "requestBody" in operation
    ]
    assert {"/v1/plans", "/v1/price-sheets", "/v1/memory"} <= {path for path, _, _ in with_body}
    for path, method, operation in with_body:
        documented = operation["responses"]["408"]["content"]["application/problem+json"]
        assert documented["schema"]["$ref"] == "#/components/schemas/Problem", (path, method)
    assert "408" not in paths["/v1/gpus"]["get"]["responses"]  # no body, nothing to wait for


def test_a_whole_request_head_over_16_kib_is_a_431_problem(server: tuple[str, int]) -> None:
    """A head that arrives whole in one read is parsed by h11 whatever its size: the app bounds it."""
    big = (
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"a" * (60 * 1024) + b"\r\n\r\n"
    )
    sock, _ = _send(server, big)
    answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"application/problem+json" in answer and b"16 KiB" in answer
    just_under = (
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"a" * (15 * 1024) + b"\r\n\r\n"
    )
    sock, _ = _send(server, just_under)
    assert _read_until_closed(sock).startswith(b"HTTP/1.1 200 ")
