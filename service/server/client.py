"""The gpuplan HTTP API as the CLI reaches it while a running server holds the database.

DuckDB lets one process open a file, and refuses even read-only opens by other processes meanwhile
(its concurrency rules), so a CLI command cannot read the file a running ``gpuplan serve`` holds. It
asks that server instead: the one ``--url`` names, or, when the file is held and ``--url`` is not
given, the server at GPUPLAN_HOST:GPUPLAN_PORT if it answers and is the process holding the file
(DuckDB names the holder's PID, ``GET /health`` the server's). Answers decode into the same Structs the
local functions return, so every command prints the same either way; the server's problems become
the CLI's errors (a 400 names its field, exit status 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import httpx
import msgspec

from service.db.store import Store
from service.errors import (
    FetchError,
    Forbidden,
    ImportSuperseded,
    InvalidParameter,
    NotFound,
    Overloaded,
    ServiceError,
    StoreHeld,
    StoreUnavailable,
    Unauthorized,
)
from service.settings import Settings

__all__ = ["ApiClient", "ServerError", "add_target_options", "query_params", "reach", "server_url"]

_TIMEOUT_S: Final = 300.0
"""Long enough for a large plan or a refresh that waits for its sources."""

_ERRORS: Final[dict[int, type[ServiceError]]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: ImportSuperseded,
    502: FetchError,
    503: StoreUnavailable,
}


class ServerError(ServiceError):
    """An answer of the server the CLI has no closer error for (its problem's detail)."""

    status_code = 502
    title = "Server error"


class _Health(msgspec.Struct, kw_only=True):
    status: str
    pid: int | None = None


def server_url(settings: Settings) -> str:
    """Where this installation's own server listens (``0.0.0.0`` and ``::`` are reached on loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(settings.host, settings.host)
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


def query_params(query: msgspec.Struct) -> dict[str, str]:
    """A query Struct as URL parameters: fields left at None are left out, flags are true/false."""
    params: dict[str, str] = {}
    for name, value in msgspec.structs.asdict(query).items():
        if value is None:
            continue
        params[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return params


class ApiClient:
    """Calls to one gpuplan server; ``token`` (the admin bearer token) goes with calls that need it."""

    def __init__(self, url: str, *, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token

    def get[T](self, path: str, answer: type[T], params: Mapping[str, str] | None = None) -> T:
        """``GET path`` decoded as ``answer``."""
        return self.call("GET", path, answer, params=params)

    def post[T](self, path: str, answer: type[T], body: object, **options: Any) -> T:
        """``POST path`` with ``body`` as JSON, decoded as ``answer``."""
        content = msgspec.json.encode(body)
        return self.call("POST", path, answer, content=content, content_type="application/json", **options)

    def call[T](self, method: str, path: str, answer: type[T], **options: Any) -> T:
        """One request (``exchange``'s options), its answer decoded as ``answer``."""
        _, content = self.exchange(method, path, **options)
        return msgspec.json.decode(content, type=answer)

    def exchange(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        content_type: str | None = None,
        admin: bool = False,
        accept: tuple[int, ...] = (200, 201, 202),
    ) -> tuple[int, bytes]:
        """One request: the status and body of an answer whose status is in ``accept``; any other
        answer is raised as the service error of its status, an unreachable server as ``FetchError``."""
        headers = {"accept": "application/json"}
        if content_type is not None:
            headers["content-type"] = content_type
        if admin and self.token:
            headers["authorization"] = f"Bearer {self.token}"
        endpoint = self.url + path
        try:
            response = httpx.request(
                method, endpoint, params=params, content=content, headers=headers, timeout=_TIMEOUT_S
            )
        except httpx.HTTPError as exc:
            raise FetchError(f"cannot reach {endpoint}: {exc}") from None
        if response.status_code not in accept:
            raise self._error(response, endpoint, admin)
        return response.status_code, response.content

    def _error(self, response: httpx.Response, endpoint: str, admin: bool) -> ServiceError:
        try:
            body = response.json()
        except ValueError:
            body = None
        body = body if isinstance(body, dict) else {}
        status = response.status_code
        detail = str(body.get("detail") or f"HTTP {status} from {endpoint}")
        if status == 400:
            field = str(body.get("field") or "request")
            return InvalidParameter(field, detail.removeprefix(f"{field}: "))
        if status == 503 and "busy" in str(body.get("title", "")):
            return Overloaded(detail)
        return _ERRORS.get(status, ServerError)(_with_hint(detail, status, admin, self.token))


def _with_hint(detail: str, status: int, admin: bool, token: str | None) -> str:
    if admin and status in (401, 403) and not token:
        return f"{detail} (set GPUPLAN_ADMIN_TOKEN to the server's admin token)"
    if admin and status == 401:
        return f"{detail} (GPUPLAN_ADMIN_TOKEN differs from the server's admin token)"
    return detail


def _holder(db: str, held: StoreHeld, settings: Settings) -> ApiClient:
    """The server at GPUPLAN_HOST:GPUPLAN_PORT when it is the process holding ``db``; else the lock
    error, saying what was tried."""
    url = server_url(settings)
    try:
        health = msgspec.json.decode(httpx.get(url + "/health", timeout=10.0).content, type=_Health)
    except (httpx.HTTPError, msgspec.DecodeError) as exc:
        raise StoreHeld(f"{held.detail} (No gpuplan server answers at {url}: {exc}.)", pid=held.pid) from None
    if held.pid is not None and health.pid is not None and health.pid != held.pid:
        detail = (
            f"{held.detail} (The gpuplan server at {url} is process {health.pid}, serving another database.)"
        )
        raise StoreHeld(detail, pid=held.pid)
    print(
        f"gpuplan: {db} is held by the gpuplan server at {url}; asking it (--url names another)",
        file=sys.stderr,
    )
    return ApiClient(url, token=settings.admin_token)


@contextmanager
def reach(args: argparse.Namespace) -> Iterator[Store | ApiClient]:
    """Where a CLI command finds its data: the server ``--url`` names; else the database ``--db`` opened
    here; else, when a running server holds that file, that server (see the module's docstring)."""
    settings = Settings.from_env()
    url = getattr(args, "url", None)
    if url:
        yield ApiClient(url, token=settings.admin_token)
        return
    try:
        store = Store.open(args.db)
    except StoreHeld as held:
        client = _holder(args.db, held, settings)
    else:
        with store:
            yield store
        return
    yield client


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """``--db`` and ``--url`` on a subcommand (given before the command, they apply too)."""
    parser.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB file or PostgreSQL URL (GPUPLAN_DB)")
    parser.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help="ask the gpuplan server at this URL (e.g. http://127.0.0.1:8000) instead of opening the "
        "database; without it, the server at GPUPLAN_HOST:GPUPLAN_PORT is asked when it holds the file",
    )
