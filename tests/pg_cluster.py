"""A throw-away PostgreSQL server for the tests: ``initdb`` in a temporary folder, started on a free
loopback port, stopped and removed at the end.

Debian's binaries (``/usr/lib/postgresql/<major>/bin``) are used; when there are none, the
distribution's ``postgresql`` package is installed (as root, or with ``sudo -n``). When PostgreSQL
cannot be had, :func:`start_cluster` raises :class:`PostgresUnavailable`, which fails the tests that
need it: they never skip silently. As root the server runs as the ``postgres`` user (PostgreSQL
refuses to run as root).

Every test database is a copy of one migrated and seeded template (``CREATE DATABASE … TEMPLATE``), so
a fresh seeded database costs a file copy, not a seed.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Final

import psycopg

from service.db.store import Store

__all__ = ["PgCluster", "PostgresUnavailable", "find_bin_dir", "run_together", "start_cluster"]

_TEMPLATE: Final = "gpuplan_template"
_SERVER_OPTIONS: Final = (
    "-c listen_addresses=127.0.0.1 -c max_connections=400 "
    # a test server loses nothing worth the wait by skipping durability
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
)


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server could be installed or started for the tests."""


def find_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` that has ``initdb``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _install() -> None:
    """``apt-get install postgresql`` (after ``apt-get update`` when the package lists are stale)."""
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*prefix, "apt-get", "install", "-y", "postgresql"]
    for command in (install, [*prefix, "apt-get", "update"], install):
        subprocess.run(command, env=env, capture_output=True, check=False, timeout=600)
        if find_bin_dir() is not None:
            return


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PgCluster:
    """A running test server and the databases made on it."""

    def __init__(self, bin_dir: Path, folder: Path, port: int) -> None:
        self.bin_dir = bin_dir
        self.folder = folder
        self.port = port
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._template_ready = False

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql.encode())

    def empty_url(self) -> str:
        """A new, empty database (not migrated, not seeded)."""
        with self._lock:
            name = f"gpuplan_{next(self._numbers)}"
        self._admin(f"CREATE DATABASE {name}")
        return self.url(name)

    def fresh_url(self) -> str:
        """A new database, migrated and seeded (a copy of the template)."""
        with self._lock:
            if not self._template_ready:
                self._admin(f"CREATE DATABASE {_TEMPLATE}")
                Store.open(self.url(_TEMPLATE)).close()
                self._template_ready = True
            name = f"gpuplan_{next(self._numbers)}"
            # a template may have no other session while it is copied: copies are made one at a time
            self._admin(f"CREATE DATABASE {name} TEMPLATE {_TEMPLATE}")
        return self.url(name)

    def _pg_ctl(self, *args: str) -> None:
        _run_as_server_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.folder / "data"), *args])

    def stop(self) -> None:
        try:
            self._pg_ctl("-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _run_as_server_user(command: list[str]) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    done = subprocess.run([*prefix, *command], capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise PostgresUnavailable(
            f"{' '.join(command)} failed ({done.returncode}): {done.stderr or done.stdout}"
        )


def start_cluster() -> PgCluster:
    """initdb and start a server on a free loopback port (installing PostgreSQL first if needed)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        _install()
        bin_dir = find_bin_dir()
    if bin_dir is None:
        raise PostgresUnavailable(
            "PostgreSQL is needed by the tests and is not installed (no /usr/lib/postgresql/*/bin/initdb), "
            "and installing the distribution's 'postgresql' package failed: install it "
            "(apt-get install postgresql) and run the tests again"
        )
    folder = Path(tempfile.mkdtemp(prefix="gpuplan-pg-"))
    folder.chmod(0o777)  # the server user (postgres, when the tests run as root) writes here
    port = _free_port()
    try:
        _run_as_server_user(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(folder / "data"),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
            ]
        )
        _run_as_server_user(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(folder / "data"),
                "-l",
                str(folder / "server.log"),
                "-w",
                "-o",
                f"-p {port} -k {folder} {_SERVER_OPTIONS}",
                "start",
            ]
        )
    except BaseException:
        log = folder / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        if detail:
            raise PostgresUnavailable(f"the test PostgreSQL server did not start: {detail}") from None
        raise
    return PgCluster(bin_dir, folder, port)


def run_together(script: str, argument: str, processes: int) -> list[str]:
    """Run ``python -c script argument`` in ``processes`` processes started at once; their outputs
    (each must exit 0: the assertion shows the errors of those that did not)."""
    started = [
        subprocess.Popen(
            [sys.executable, "-c", script, argument], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(processes)
    ]
    results = [process.communicate(timeout=180) for process in started]
    failed = [
        err.decode()[-2000:] for process, (_, err) in zip(started, results, strict=True) if process.returncode
    ]
    assert not failed, failed
    return [out.decode() for out, _ in results]
