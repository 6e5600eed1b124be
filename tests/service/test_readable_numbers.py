"""Every number a JSON answer carries has at most 12 significant digits (issue 13, C): float noise such
as ``0.22000000000000003`` or ``2000000000.0000002`` never reaches a reader, through the API or the CLI."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from service.http import READABLE_DIGITS, readable_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_LONG_NUMBER_IN_TEXT = re.compile(r"\d\.\d{13,}|\d{2,}\.\d*?(?:0{6,}|9{6,})\d")


def _noisy(value: Any, where: str = "$") -> list[str]:
    """Paths of floats with more than READABLE_DIGITS significant digits, and of strings that quote one."""
    if isinstance(value, float):
        return [] if value == float(f"{value:.{READABLE_DIGITS}g}") else [f"{where}={value!r}"]
    if isinstance(value, str):
        return [f"{where}={value!r}"] if _LONG_NUMBER_IN_TEXT.search(value) else []
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _noisy(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [hit for index, item in enumerate(value) for hit in _noisy(item, f"{where}[{index}]")]
    return []


def test_readable_json_rounds_floats_and_leaves_the_rest() -> None:
    value = {"sum": 0.1 + 0.2, "big": 1999999999.9999998, "id": "0.30000000000000004", "n": 10**15, "x": 1e-9}
    assert json.loads(readable_json(value)) == {
        "sum": 0.3,
        "big": 2e9,
        "id": "0.30000000000000004",
        "n": 10**15,
        "x": 1e-9,
    }
    assert readable_json({"price": 2.5}) == msgspec.json.encode({"price": 2.5})


@pytest.mark.parametrize("workload", sorted(p.name for p in (EXAMPLES / "workloads").glob("*.json")))
def test_plans_carry_no_float_noise(client: TestClient, workload: str) -> None:  # type: ignore[type-arg]
    created = client.post("/v1/plans", content=(EXAMPLES / "workloads" / workload).read_bytes())
    assert created.status_code == 201, created.text
    assert _noisy(created.json()) == []
    stored = client.get(created.headers["location"])
    assert stored.status_code == 200 and _noisy(stored.json()) == []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/offers?limit=1000", None),
        ("GET", "/v1/gpus?mig=true", None),
        ("GET", "/v1/providers", None),
        ("POST", "/v1/memory", EXAMPLES / "estimates" / "memory-qlora.json"),
        ("POST", "/v1/throughput", EXAMPLES / "estimates" / "throughput-train.json"),
    ],
)
def test_reads_and_estimates_carry_no_float_noise(
    client: TestClient,  # type: ignore[type-arg]
    method: str,
    path: str,
    body: Path | None,
) -> None:
    answer = client.request(method, path, content=None if body is None else body.read_bytes())
    assert answer.status_code == 200, answer.text
    assert _noisy(answer.json()) == []


def test_buy_vs_rent_carries_no_float_noise(client: TestClient) -> None:  # type: ignore[type-arg]
    body = {"gpu": "H100 SXM", "gpu_count": 8, "horizon_months": 36, "utilization": 0.7}
    answer = client.post("/v1/buy-vs-rent", json=body)
    assert answer.status_code == 200, answer.text
    assert _noisy(answer.json()) == []
    sheet = client.post("/v1/buy-vs-rent?format=csv", json=body)
    assert sheet.status_code == 200, sheet.text
    cells = [cell for row in csv.reader(io.StringIO(sheet.text)) for cell in row]
    assert [cell for cell in cells if "." in cell and _noisy(_number_or_text(cell))] == []


def _number_or_text(cell: str) -> float | str:
    try:
        return float(cell)
    except ValueError:
        return cell


def test_cli_plan_json_carries_no_float_noise(tmp_path: Path) -> None:
    printed = subprocess.run(
        [
            sys.executable,
            "-m",
            "service.cli",
            "plan",
            str(EXAMPLES / "workloads" / "lora.json"),
            "--json",
            "--db",
            str(tmp_path / "cli.duckdb"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert _noisy(json.loads(printed.stdout)) == []
