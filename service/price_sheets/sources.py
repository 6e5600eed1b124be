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

Only the operator configures URLs; no request can make the service fetch one.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from pathlib import Path
from typing import Annotated, Final
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from msgspec import Meta

from pricing.sheet_formats import SHEET_FORMATS, SheetFormat
from service.db.seed import SEED_SOURCE
from service.errors import FetchError, InvalidParameter

__all__ = ["SourceConfig", "fetch", "load_sources", "validate_source_name"]

_SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_REMOTE_MIN_INTERVAL_S: Final = 60
"""A provider's server is asked at most once a minute; files and loopback servers (trials, tests) more often."""
_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


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


async def _fetch_http(source: SourceConfig) -> bytes:
    async with (
        httpx.AsyncClient(timeout=source.timeout_seconds, follow_redirects=True) as client,
        client.stream("GET", source.url) as response,
    ):
        if response.status_code != 200:
            raise FetchError(f"HTTP {response.status_code} from {source.public_url()}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > source.max_bytes:
                raise FetchError(f"larger than max_bytes ({source.max_bytes})")
            chunks.append(chunk)
        return b"".join(chunks)


async def _within_deadline(source: SourceConfig) -> bytes:
    """httpx's timeout bounds each read; ``asyncio.timeout`` bounds the whole fetch (a source that
    drips a byte just inside the read timeout would otherwise hold a run for as long as it likes)."""
    try:
        async with asyncio.timeout(source.timeout_seconds):
            return await _fetch_http(source)
    except TimeoutError:
        raise FetchError(
            f"no complete answer within timeout_seconds ({source.timeout_seconds:g} s)"
        ) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}") from None


def _read_file(path: Path, max_bytes: int) -> bytes:
    """At most ``max_bytes``, whatever the file claims its size is (``/dev/zero`` and pipes say 0)."""
    try:
        with path.open("rb") as file:
            body = file.read(max_bytes + 1)
    except OSError as exc:
        raise FetchError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    if len(body) > max_bytes:
        raise FetchError(f"larger than max_bytes ({max_bytes})")
    return body


def fetch(source: SourceConfig) -> bytes:
    """The sheet's bytes, within the source's deadline (``timeout_seconds`` for the whole fetch) and
    size limit. Runs in a worker thread (a refresh job or a request's thread), never on an event loop."""
    parts = urlsplit(source.url)
    if parts.scheme in ("http", "https"):
        return asyncio.run(_within_deadline(source))
    return _read_file(Path(parts.path if parts.scheme == "file" else source.url), source.max_bytes)
