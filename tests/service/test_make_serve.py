"""`make serve` leaves host, port and database to GPUPLAN_HOST, GPUPLAN_PORT and GPUPLAN_DB unless
make's HOST, PORT or DB is given, and `gpuplan serve` takes its defaults from those variables."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.cli import _parser

ROOT = Path(__file__).resolve().parents[2]


def _serve_line(*make_args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "serve", *make_args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return next(line for line in done.stdout.splitlines() if "gpuplan serve" in line)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_leaves_the_address_and_db_to_the_environment() -> None:
    env = {"GPUPLAN_HOST": "0.0.0.0", "GPUPLAN_PORT": "9123", "GPUPLAN_DB": "/tmp/x.duckdb"}
    plain = _serve_line(env=env)
    assert "--host" not in plain and "--port" not in plain and "--db" not in plain
    given = _serve_line("HOST=127.0.0.2", "PORT=9001", "DB=y.duckdb", env=env)
    assert "--host 127.0.0.2" in given and "--port 9001" in given and "--db y.duckdb" in given


def test_gpuplan_serve_defaults_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_HOST", "0.0.0.0")
    monkeypatch.setenv("GPUPLAN_PORT", "9123")
    monkeypatch.setenv("GPUPLAN_DB", "/tmp/x.duckdb")
    args = _parser().parse_args(["serve"])
    assert (args.host, args.port, args.db) == ("0.0.0.0", 9123, "/tmp/x.duckdb")


def _installs(target: str) -> list[str]:
    """The pip lines ``make TARGET`` runs when pyproject.toml changed (``-W``: taken as new)."""
    done = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "-C", str(ROOT), target],
        capture_output=True,
        text=True,
        check=True,
    )
    return [
        line for line in done.stdout.splitlines() if "pip install" in line and "--upgrade pip" not in line
    ]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_installs_only_what_serving_needs() -> None:
    serve = _installs("serve")
    assert serve and all("[test]" not in line for line in serve), serve
    assert any("'.[test]'" in line for line in _installs("unit")), "make test adds the test extras"


def test_the_served_package_does_not_depend_on_the_test_tools() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {re.split(r"[\[<>=~! ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    tools = {
        re.split(r"[\[<>=~! ]", d, maxsplit=1)[0].lower() for d in project["optional-dependencies"]["test"]
    }
    assert runtime.isdisjoint(tools), runtime & tools
    assert {"playwright", "schemathesis", "mypy", "kubernetes-validate"} <= tools
