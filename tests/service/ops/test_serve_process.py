"""Through real processes (issue 13, A2 and A3): ``gpuplan serve`` logs JSON lines only (its own and
uvicorn's, the access line with the request id), and neither the server nor ``gpuplan plan --json``
lets the solver's banner or log reach stdout or stderr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.service.live_server import free_port
from tests.service.ops.test_metrics import PLAN

_GPUPLAN = [sys.executable, "-c", "import sys; from service.cli import main; sys.exit(main())"]
_SOLVER_WORDS = ("HiGHS", "Running HiGHS", "Coefficient ranges", "Presolving", "Solving report")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    return {**env, "GPUPLAN_DB": str(tmp_path / "serve.duckdb"), "GPUPLAN_LOG_LEVEL": "INFO"}


def _wait_live(base: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert server.poll() is None, server.communicate()
        try:
            if httpx.get(f"{base}/health/live", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.3)
    raise AssertionError("gpuplan serve did not come up")


def test_serve_logs_json_lines_with_request_ids_and_no_solver_output(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*_GPUPLAN, "serve", "--port", str(port)],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_live(base, server)
        planned = httpx.post(f"{base}/v1/plans", json=PLAN, headers={"X-Request-ID": "serve-1"}, timeout=60)
        assert planned.status_code == 201 and planned.headers["x-request-id"] == "serve-1"
        missing = httpx.get(f"{base}/v1/plans/nope", headers={"X-Request-ID": "serve-2"}, timeout=10)
        assert missing.json()["request_id"] == "serve-2"
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert out.strip() == "", out  # logs go to stderr; nothing else writes to stdout
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]  # every line is JSON
    assert all({"timestamp", "level", "logger", "message", "request_id"} <= line.keys() for line in lines)
    access = [line for line in lines if line["logger"] == "uvicorn.access"]
    assert any(line["request_id"] == "serve-1" and "POST /v1/plans" in line["message"] for line in access)
    assert any(line["request_id"] == "serve-2" and "404" in line["message"] for line in access)
    assert any(line["logger"] == "uvicorn.error" for line in lines)  # uvicorn's own lines, same format
    assert not any(word in out + err for word in _SOLVER_WORDS)


def test_plan_json_is_the_only_output(tmp_path: Path) -> None:
    body = tmp_path / "workload.json"
    body.write_text(json.dumps(PLAN))
    done = subprocess.run(
        [*_GPUPLAN, "plan", str(body), "--json"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kind"] == "train"  # stdout is exactly one JSON document
    assert not any(word in done.stderr for word in _SOLVER_WORDS), done.stderr
    assert "Running HiGHS" not in done.stdout  # (the plan itself names its solver backend)


def test_serve_scheduler_off_reaches_the_app(tmp_path: Path) -> None:
    """``gpuplan serve --scheduler off`` (the Deployment of the CronJob variant sets GPUPLAN_SCHEDULER):
    the sources stay configured, no refresh job is scheduled, and the replica is ready."""
    sheet = tmp_path / "acme.csv"
    sheet.write_text("provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n")
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*_GPUPLAN, "serve", "--port", str(port), "--scheduler", "off"],
        env={**_env(tmp_path), "GPUPLAN_SOURCES": str(sources), "GPUPLAN_SCHEDULER": "on"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_live(base, server)
        assert httpx.get(f"{base}/health", timeout=10).json()["scheduler"] == {"running": False, "jobs": []}
        assert httpx.get(f"{base}/health/ready", timeout=10).status_code == 200
        sources_status = httpx.get(f"{base}/v1/price-sheets/refresh", timeout=10).json()["sources"]
        assert [(s["name"], s["next_run_at"]) for s in sources_status] == [("acme", None)]
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
