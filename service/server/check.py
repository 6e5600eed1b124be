"""``gpuplan check``: is this installation ready to serve? One line per check, ``ok`` or ``FAIL``, and
exit status 1 when any check fails (like ``sky check``).

Checks: the database opens and takes a write (or, when it does not exist yet, its folder can be
written; or, when a running server holds the file, that server's ``/health/ready`` says it is
readable and writable: ``--url``, by default ``GPUPLAN_HOST``:``GPUPLAN_PORT``); the admin token is set (without it uploads and refresh-now are refused); every configured
source (``GPUPLAN_SOURCES``) can be fetched and its sheet parses cleanly — fetched and validated only,
never imported.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Final

import httpx
import msgspec

from service.db.backend import Cursor, display_target, is_postgres_url
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.db.store_errors import STORE_ERRORS
from service.errors import FetchError, ServiceError, StoreHeld
from service.price_sheets.importer import check_sheet
from service.price_sheets.sources import SourceConfig, fetch, load_sources
from service.server.client import server_url
from service.settings import Settings

__all__ = ["Check", "register", "run_checks"]


class Check(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    ok: bool
    detail: str


_FAILURES: Final[tuple[type[Exception], ...]] = (*STORE_ERRORS, OSError)


def _probe_write(cur: Cursor) -> None:
    cur.execute("CREATE TABLE gpuplan_check_probe (x INTEGER)")
    cur.execute("INSERT INTO gpuplan_check_probe VALUES (1)")
    cur.execute("DROP TABLE gpuplan_check_probe")


def _writable_folder(path: Path) -> Path | None:
    """The nearest existing folder of ``path`` if this process may create files in it."""
    folder = path.parent.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


def _check_through_server(name: str, held: StoreHeld, url: str) -> Check:
    """The database a server holds, as that server's readiness reports it."""
    endpoint = url.rstrip("/") + "/health/ready"
    try:
        answer = httpx.get(endpoint, timeout=10.0)
        report = answer.json()
        checks = {c["name"]: bool(c["ok"]) for c in report["checks"]}
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        detail = f"{held.detail} No gpuplan server answers {endpoint} ({exc}); pass --url to name it."
        return Check(name=name, ok=False, detail=detail)
    ok = answer.status_code == 200 and checks.get("db_readable", False) and checks.get("db_writable", False)
    states = ", ".join(f"{check} {'ok' if good else 'FAIL'}" for check, good in checks.items())
    return Check(name=name, ok=ok, detail=f"held by the server at {url}, which reports: {states}")


def _check_database(db_path: str, url: str) -> tuple[Check, CatalogSnapshot | None]:
    name = f"database {display_target(db_path)}"
    path = Path(db_path)
    if db_path != ":memory:" and not is_postgres_url(db_path) and not path.exists():
        folder = _writable_folder(path)
        if folder is None:
            return Check(name=name, ok=False, detail="does not exist, and its folder cannot be written"), None
        return Check(name=name, ok=True, detail=f"not created yet; {folder} is writable"), None
    try:
        with Store.open(db_path) as store:
            store.transaction(_probe_write)
            store.backend.checkpoint()
            detail = f"opens (schema version {store.schema_version()}) and takes a write"
            return Check(name=name, ok=True, detail=detail), store.snapshot
    except StoreHeld as held:
        return _check_through_server(name, held, url), None
    except ServiceError as exc:
        return Check(name=name, ok=False, detail=exc.detail), None
    except _FAILURES as exc:
        return Check(name=name, ok=False, detail=f"{type(exc).__name__}: {exc}"), None


def _check_token(settings: Settings) -> Check:
    if settings.admin_token:
        return Check(name="admin token", ok=True, detail="GPUPLAN_ADMIN_TOKEN is set")
    detail = "GPUPLAN_ADMIN_TOKEN is not set: uploads and refresh-now are refused"
    return Check(name="admin token", ok=False, detail=detail)


def _check_source(source: SourceConfig, snapshot: CatalogSnapshot) -> Check:
    name = f"source {source.name}"
    try:
        body = fetch(source)
        rows, problems = check_sheet(snapshot, body, source.format, source.name, source.provider)
    except (FetchError, ServiceError) as exc:
        return Check(name=name, ok=False, detail=f"{source.public_url()}: {exc.detail}")
    if problems:
        first = "; ".join(f"line {p.line}: {p.column or ''} {p.reason}".strip() for p in problems[:3])
        detail = f"{source.public_url()}: {len(problems)} problem(s) in {rows} rows: {first}"
        return Check(name=name, ok=False, detail=detail)
    detail = f"{source.public_url()}: {len(body):,} bytes, {rows} rows parse as {source.format}"
    return Check(name=name, ok=True, detail=detail)


def _check_sources(settings: Settings, snapshot: CatalogSnapshot | None) -> list[Check]:
    if not settings.sources_file:
        return [Check(name="sources", ok=True, detail="none configured (GPUPLAN_SOURCES unset)")]
    try:
        sources = load_sources(settings.sources_file)
    except ValueError as exc:
        return [Check(name="sources", ok=False, detail=str(exc))]
    if not sources:
        return [Check(name="sources", ok=True, detail=f"{settings.sources_file} lists none")]
    if snapshot is None:  # the database could not be read: parse against the shipped catalog
        with Store.open(":memory:") as scratch:
            return [_check_source(s, scratch.snapshot) for s in sources]
    return [_check_source(s, snapshot) for s in sources]


def run_checks(settings: Settings, url: str | None = None) -> list[Check]:
    """Every check, in the order ``gpuplan check`` prints them; ``url``: the server to ask when one holds
    the database (default: this installation's own, ``server_url``)."""
    database, snapshot = _check_database(settings.db_path, url or server_url(settings))
    return [database, _check_token(settings), *_check_sources(settings, snapshot)]


def _cmd_check(args: argparse.Namespace) -> int:
    settings = msgspec.structs.replace(Settings.from_env(), db_path=args.db)
    checks = run_checks(settings, args.url)
    width = max(len(c.name) for c in checks)
    for check in checks:
        print(f"{'ok' if check.ok else 'FAIL':4}  {check.name:{width}}  {check.detail}")
    failed = sum(not c.ok for c in checks)
    print(
        f"\n{len(checks) - failed} of {len(checks)} checks passed" + (f", {failed} failed" if failed else "")
    )
    return 1 if failed else 0


def register(sub: Any) -> None:
    """Add ``gpuplan check`` to the CLI's subparsers."""
    check = sub.add_parser("check", help="check the database, admin token and price sources before serving")
    check.add_argument("--db", default=argparse.SUPPRESS)
    check.add_argument(
        "--url",
        help="the gpuplan server to ask when it holds the database (default http://GPUPLAN_HOST:GPUPLAN_PORT)",
    )
    check.set_defaults(func=_cmd_check)
