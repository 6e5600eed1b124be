"""Refresh fetches follow no redirect unless the source opts in, then only to its own host, and never
to a non-public address (loopback, link-local metadata, private) unless the source is one itself."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from service.errors import FetchError
from service.price_sheets import sources
from service.price_sheets.sources import SourceConfig, fetch

_SHEET = b"provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"
_SECRET = b"provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\nsecret,x,H100 SXM,1,r,1\n"


def _serve(host: str, answer: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://{host}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def secret() -> Iterator[tuple[str, list[str]]]:
    """A loopback server on another address holding what must never be fetched; the paths it was asked."""
    asked: list[str] = []

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        asked.append(handler.path)
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(_SECRET)

    for url in _serve("127.0.0.2", answer):
        yield f"{url}/secret", asked


@pytest.fixture
def redirecting(secret: tuple[str, list[str]]) -> Iterator[str]:
    """``/away`` redirects to the secret server, ``/here`` to ``/sheet.csv`` on itself."""

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        if handler.path == "/sheet.csv":
            handler.send_response(200)
            handler.end_headers()
            handler.wfile.write(_SHEET)
            return
        handler.send_response(302)
        handler.send_header("Location", secret[0] if handler.path == "/away" else "/sheet.csv")
        handler.end_headers()

    yield from _serve("127.0.0.1", answer)


def test_no_redirect_is_followed_by_default(redirecting: str, secret: tuple[str, list[str]]) -> None:
    for path in ("/away", "/here"):
        source = SourceConfig(name="r", url=f"{redirecting}{path}", format="rental_csv", timeout_seconds=5)
        with pytest.raises(FetchError, match=r"redirect .* refused"):
            fetch(source)
    assert secret[1] == []


def test_same_host_follows_a_redirect_to_its_own_host_only(
    redirecting: str, secret: tuple[str, list[str]]
) -> None:
    here = SourceConfig(name="r", url=f"{redirecting}/here", format="rental_csv", redirects="same_host")
    assert fetch(here) == _SHEET
    away = SourceConfig(name="r", url=f"{redirecting}/away", format="rental_csv", redirects="same_host")
    with pytest.raises(FetchError, match="another scheme, host or port"):
        fetch(away)
    assert secret[1] == []


@pytest.mark.parametrize(
    ("address", "internal"),
    [
        ("127.0.0.2", True),
        ("169.254.169.254", True),
        ("10.1.2.3", True),
        ("192.168.0.1", True),
        ("100.64.0.1", True),
        ("fd00:ec2::254", True),
        ("::1", True),
        ("93.184.216.34", False),
    ],
)
def test_non_public_addresses_are_known(address: str, internal: bool) -> None:
    assert asyncio.run(sources._internal(address)) is internal


def test_a_public_source_never_redirects_to_a_host_now_resolving_inside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DNS rebinding: the source's host resolved public when configured, the redirect finds it at the
    metadata address."""
    source = SourceConfig(
        name="r", url="https://prices.example/a.csv", format="rental_csv", redirects="same_host"
    )
    answers_in_turn = iter(["93.184.216.34", "169.254.169.254"])  # the source, then the target
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers_in_turn), 0))],
    )
    response = httpx.Response(302, headers={"location": "/b.csv"})
    with pytest.raises(FetchError, match="non-public address"):
        asyncio.run(sources._redirect_target(source, httpx.URL(source.url), response))
