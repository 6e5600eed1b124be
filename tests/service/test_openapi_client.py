"""The OpenAPI document is one client generators accept: ``openapi-python-client`` generates a client
(offline, into a temporary directory) that plans the README's LoRA workload against a running server
and reads the answer as typed models. Nothing is cached: every run generates the client afresh."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.settings import Settings
from tests.service.live_server import serving_fresh_store
from tests.service.plans.test_api_plans import LORA_8B as README_LORA


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving_fresh_store(Settings(db_path=":memory:")) as url:
        yield url


def generate(document: dict[str, Any], where: Path) -> Any:
    """Generate the client package ``gpuplan_client`` under ``where`` and import it."""
    (where / "openapi.json").write_text(json.dumps(document))
    (where / "config.json").write_text(json.dumps({"post_hooks": []}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(where / "openapi.json"),
            "--config",
            str(where / "config.json"),
            "--meta",
            "none",
            "--output-path",
            str(where / "gpuplan_client"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout, done.stdout  # nothing of the document was skipped
    sys.path.insert(0, str(where))
    try:
        return importlib.import_module("gpuplan_client")
    finally:
        sys.path.remove(str(where))


def test_a_generated_client_plans_the_readme_workload(server: str, tmp_path: Path) -> None:
    document = httpx.get(f"{server}/schema/openapi.json", timeout=30).json()
    package = generate(document, tmp_path)
    create_plan = importlib.import_module("gpuplan_client.api.plans.create_plan")
    models = importlib.import_module("gpuplan_client.models")
    body = models.FineTunePlan.from_dict(README_LORA)  # one member of the PlanRequest union, by its kind
    with package.Client(base_url=server, timeout=120) as api:
        plan = create_plan.sync(client=api, body=body)
    assert isinstance(plan, models.PlanOut), plan
    assert plan.model and plan.choice.gpu_count >= 1 and plan.cost.total_usd > 0
    assert isinstance(plan.choice.offer, models.PlanOfferRef)
    spellings = {member.value for member in models.BuyVsRentRequestGpu}  # case variants all kept
    assert {"A10", "a10"} <= spellings and len(spellings) == len(document_enum(document))


def document_enum(document: dict[str, Any]) -> list[str]:
    enum: list[str] = document["components"]["schemas"]["BuyVsRentRequest"]["properties"]["gpu"]["enum"]
    return enum
