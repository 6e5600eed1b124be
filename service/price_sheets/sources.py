"""Where sheets come from: source names, the operator's refresh sources (``GPUPLAN_SOURCES``) and fetching.

Sources are listed in a TOML file named by ``GPUPLAN_SOURCES``::

    [[source]]
    name = "lambda"                 # the sheet source its offers belong to
    url = "https://…/vms.csv"       # or a file path (file:// URLs too)
    format = "cloud_catalog_csv"    # rental_csv | rental_json | cloud_catalog_csv | ownership_csv
    provider = "lambda"             # required for cloud_catalog_csv
    interval_seconds = 3600         # >= 60 for a remote URL; a file or a loopback URL may use >= 1 (trials, tests)
    timeout_seconds = 30            # deadline of one whole fetch attempt
    max_bytes = 20000000            # larger bodies are refused
    retries = 3                     # attempts, with exponential backoff (1 s, 2 s, 4 s …)
    retire_seed_provider = true     # this source replaces the shipped offers of `provider`
    redirects = "none"              # or "same_host": follow up to 5 redirects to the same scheme, host, port

Only the operator configures URLs; no request can make the service fetch one. A redirect is refused
unless the source opts in with ``redirects = "same_host"``, and then followed only to the source's
own scheme, host and port, and never to a loopback, link-local, private or otherwise non-global
address (cloud metadata services live there) unless the source's own host is one.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import queue
import re
import select
import socket
import threading
import time
import tomllib
from pathlib import Path
from typing import Annotated, Final, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from msgspec import Meta

from pricing import SHEET_FORMATS, SheetFormat
from service.db.seed import SEED_SOURCE
from service.errors import FetchError, InvalidParameter

__all__ = ["SourceConfig", "fetch", "load_sources", "validate_source_name"]

_SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_REMOTE_MIN_INTERVAL_S: Final = 60
"""A provider's server is asked at most once a minute; files and loopback servers (trials, tests) more often."""
_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_MAX_REDIRECTS: Final = 5
Redirects = Literal["none", "same_host"]


def _is_remote(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and (parts.hostname or "") not in _LOOPBACK_HOSTS


def validate_source_name(source: str, *, field: str = "source") -> str:
    """A name an upload or a configured source may use (the shipped data's ``seed`` is taken)."""
    if not _SOURCE_NAME.match(source):
        raise InvalidParameter(field, "1-64 characters: lower-case letters, digits, '.', '_' or '-'")
    if source == SEED_SOURCE:
        raise InvalidParameter(field, f"{SEED_SOURCE!r} is the shipped data's source; choose another name")
    return source


class SourceConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One configured refresh source."""

    name: Annotated[str, Meta(min_length=1, max_length=64)]
    url: Annotated[str, Meta(min_length=1, max_length=2000)]
    format: SheetFormat
    provider: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    interval_seconds: Annotated[int, Meta(ge=1, le=30 * 86400)] = 3600
    timeout_seconds: Annotated[float, Meta(gt=0, le=600)] = 30.0
    max_bytes: Annotated[int, Meta(ge=1, le=500_000_000)] = 20_000_000
    retries: Annotated[int, Meta(ge=1, le=10)] = 3
    retire_seed_provider: bool = False
    """After each successful run, drop the shipped (``seed``) offers of ``provider`` from the catalog."""
    redirects: Redirects = "none"
    """``same_host``: follow a redirect to the source's own scheme, host and port (at most 5)."""

    def is_url(self) -> bool:
        """Whether the source is fetched over HTTP(S) (else it is a file)."""
        return urlsplit(self.url).scheme in ("http", "https")

    def public_url(self) -> str:
        """The URL without credentials or query string (safe to show)."""
        parts = urlsplit(self.url)
        if not parts.scheme or len(parts.scheme) == 1:  # a path (a Windows drive letter is not a scheme)
            return self.url
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))


class _SourcesFile(msgspec.Struct, forbid_unknown_fields=True):
    source: list[SourceConfig] = msgspec.field(default_factory=list)


def load_sources(path: str) -> list[SourceConfig]:
    """Read and validate the sources file; a bad file is a ``ValueError`` naming the problem."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read GPUPLAN_SOURCES file {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"GPUPLAN_SOURCES file {path!r} is not valid TOML: {exc}") from None
    try:
        sources = msgspec.convert(raw, _SourcesFile).source
    except msgspec.ValidationError as exc:
        raise ValueError(f"GPUPLAN_SOURCES file {path!r}: {exc}") from None
    names: set[str] = set()
    for i, source in enumerate(sources):
        try:
            validate_source_name(source.name, field=f"source[{i}].name")
        except Exception as exc:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: {exc}") from None
        if source.name in names:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: source name {source.name!r} appears twice")
        if SHEET_FORMATS[source.format].needs_provider and not source.provider:
            raise ValueError(f"GPUPLAN_SOURCES file {path!r}: source[{i}] ({source.name}) needs a provider")
        if source.retire_seed_provider and not source.provider:
            raise ValueError(
                f"GPUPLAN_SOURCES file {path!r}: source[{i}] ({source.name}) sets retire_seed_provider "
                "and so needs provider = NAME (whose shipped offers it replaces)"
            )
        if source.interval_seconds < _REMOTE_MIN_INTERVAL_S and _is_remote(source.url):
            raise ValueError(
                f"GPUPLAN_SOURCES file {path!r}: source[{i}] ({source.name}) interval_seconds must be >= "
                f"{_REMOTE_MIN_INTERVAL_S} for a remote URL, got {source.interval_seconds}"
            )
        names.add(source.name)
    return sources


async def _internal(host: str) -> bool:
    """Whether ``host`` is, or resolves to, an address that is not global: loopback, link-local (the
    cloud metadata services' 169.254.169.254), private, shared, reserved."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise FetchError(f"cannot resolve {host!r}: {exc.strerror or exc}") from None
    return any(not ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_global for info in infos)


async def _redirect_target(source: SourceConfig, current: httpx.URL, response: httpx.Response) -> httpx.URL:
    """Where a redirect ``response`` may lead (a ``FetchError`` unless the source's rules allow it)."""
    code = response.status_code
    if source.redirects == "none":
        raise FetchError(
            f"HTTP {code} redirect from {source.public_url()} refused: the source follows no redirects "
            '(redirects = "same_host" follows one to the same host)'
        )
    target = current.join(response.headers["location"])
    if (target.scheme, target.host, target.port) != (current.scheme, current.host, current.port):
        raise FetchError(
            f"HTTP {code} redirect from {source.public_url()} to another scheme, host or port "
            f"({target.scheme}://{target.host}) refused"
        )
    if not await _internal(httpx.URL(source.url).host) and await _internal(target.host):
        raise FetchError(f"HTTP {code} redirect to a non-public address ({target.host}) refused")
    return target


async def _body(source: SourceConfig, response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > source.max_bytes:
            raise FetchError(f"larger than max_bytes ({source.max_bytes})")
        chunks.append(chunk)
    return b"".join(chunks)


async def _fetch_http(source: SourceConfig) -> bytes:
    """The body of a 200 answer, following redirects only as :func:`_redirect_target` allows."""
    url = httpx.URL(source.url)
    async with httpx.AsyncClient(timeout=source.timeout_seconds, follow_redirects=False) as client:
        for _ in range(_MAX_REDIRECTS + 1):
            async with client.stream("GET", url) as response:
                if response.is_redirect:
                    url = await _redirect_target(source, url, response)
                    continue
                if response.status_code != 200:
                    raise FetchError(f"HTTP {response.status_code} from {source.public_url()}")
                return await _body(source, response)
    raise FetchError(f"more than {_MAX_REDIRECTS} redirects from {source.public_url()}")


async def _within_deadline(source: SourceConfig) -> bytes:
    """httpx's timeout bounds each read; ``asyncio.timeout`` bounds the whole fetch (a source that
    drips a byte just inside the read timeout would otherwise hold a run for as long as it likes)."""
    try:
        async with asyncio.timeout(source.timeout_seconds):
            return await _fetch_http(source)
    except TimeoutError:
        raise _timed_out(source) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}") from None


def _timed_out(source: SourceConfig) -> FetchError:
    return FetchError(f"no complete answer within timeout_seconds ({source.timeout_seconds:g} s)")


def _read_fd(fd: int, source: SourceConfig, deadline: float) -> bytes:
    """Read a non-blocking ``fd`` to its end, waiting for data at most until ``deadline``."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poll.poll(remaining * 1000):
            raise _timed_out(source)
        try:
            chunk = os.read(fd, min(1 << 20, source.max_bytes + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > source.max_bytes:
            raise FetchError(f"larger than max_bytes ({source.max_bytes})")
        chunks.append(chunk)


def _read_file(path: Path, source: SourceConfig, deadline: float) -> bytes:
    """At most ``max_bytes``, whatever the file claims its size is (``/dev/zero`` and pipes say 0);
    opened without blocking, so a FIFO with no writer is not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise FetchError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    try:
        return _read_fd(fd, source, deadline)
    except OSError as exc:
        raise FetchError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _file_within_deadline(path: Path, source: SourceConfig) -> bytes:
    """:func:`_read_file` in a worker thread, given up on at ``timeout_seconds``: a stalled mount can
    block ``open`` or ``read`` in the kernel where no poll reaches (the thread is left to finish)."""
    deadline = time.monotonic() + source.timeout_seconds
    answer: queue.SimpleQueue[bytes | FetchError] = queue.SimpleQueue()

    def read() -> None:
        try:
            answer.put(_read_file(path, source, deadline))
        except FetchError as exc:
            answer.put(exc)

    threading.Thread(target=read, name=f"read {source.name}", daemon=True).start()
    try:
        got = answer.get(timeout=source.timeout_seconds + 0.5)  # the reader's own deadline comes first
    except queue.Empty:
        raise _timed_out(source) from None
    if isinstance(got, FetchError):
        raise got
    return got


def fetch(source: SourceConfig) -> bytes:
    """The sheet's bytes, within the source's deadline (``timeout_seconds`` for the whole fetch, of a
    URL or a file alike) and size limit. Runs in a worker thread (a refresh job or a request's
    thread), never on an event loop."""
    parts = urlsplit(source.url)
    if parts.scheme in ("http", "https"):
        return asyncio.run(_within_deadline(source))
    return _file_within_deadline(Path(parts.path if parts.scheme == "file" else source.url), source)
