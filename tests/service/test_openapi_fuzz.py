"""Schemathesis with every check against a running server, with and without the admin token: every
operation, on DuckDB and on PostgreSQL, generated valid and invalid input (examples, fuzzing and stateful phases; the coverage
phase's boundary values in the run with the token), no server error and no other failed check.

It runs the ``st`` command line, as an operator would, against the app under uvicorn. The checks:
no 500, documented status codes, content types and headers, responses match their schemas,
schema-valid requests accepted and schema-invalid ones rejected, missing or ignored auth refused,
unsupported methods answered 405 with ``Allow``, no use after free. Every check is on (the config
names each one), with one exception, stated here: the workload bodies have cross-field rules JSON
Schema cannot express (``tp`` must divide ``gpu_count``, qlora needs a 4-bit precision, ``seq_len``
within the model's context, exactly one of ``utilization`` or ``monthly_demand_gpu_hours`` …) and the
uploads are CSV or JSON sheets (or a tool's benchmark result file) whose rows the schema cannot describe, so a schema-valid body there
may still be a 400 or a 422: ``positive_data_acceptance`` is on everywhere, and for those seven
operations only it also expects 400 and 422. Unknown fields are no such case: every request body
says ``additionalProperties: false``, so schema-valid data never carries one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

from service.settings import Settings
from tests.service.admin import TOKEN
from tests.service.live_server import serving_fresh_store

EXAMPLES: Final = 10
"""Examples per operation and phase: bounded so `make test` stays within minutes."""
SEED: Final = 20261201
"""A fixed seed: the same requests on every run (a failure reproduces; change it to explore)."""

CHECKS: Final = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "use_after_free",
    "ensure_resource_availability",
    "missing_required_header",
    "ignored_auth",
    "object_level_authorization",
    "unsupported_method",
    "allow_header_conformance",
)


def schemathesis_config(*off: str) -> str:
    """The config file: every check on but ``off``, with the one exception stated above."""
    return "\n".join(
        [
            "[checks]",
            *(f"{name}.enabled = {'false' if name in off else 'true'}" for name in CHECKS),
            "",
            "[[operations]]",
            'include-path-regex = "^/v1/(plans|memory|throughput|buy-vs-rent|price-sheets|profiles|measurements)$"',
            'include-method = "POST"',
            "checks.positive_data_acceptance.enabled = true",
            "checks.positive_data_acceptance.expected-statuses = "
            '["2xx", "3xx", "400", "401", "403", "404", "409", "422", "429", "5xx"]',
        ]
    )


@pytest.fixture(scope="module")
def base_url(fresh_db: Callable[[], str]) -> Iterator[str]:
    """One server with the admin token configured, on a fresh store of the test's backend (DuckDB and
    PostgreSQL both: issue 28 asks both clean)."""
    target = fresh_db()
    with serving_fresh_store(Settings(db_path=target, admin_token=TOKEN), target) as url:
        yield url


@pytest.fixture(scope="module")
def writes_disabled_url(fresh_db: Callable[[], str]) -> Iterator[str]:
    """A server without an admin token: every write is refused (403)."""
    target = fresh_db()
    with serving_fresh_store(Settings(db_path=target), target) as url:
        yield url


def schemathesis_run(
    base_url: str, tmp_path: Path, *extra: str, config: str | None = None
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "schemathesis.toml").write_text(config or schemathesis_config())
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file",
        str(tmp_path / "schemathesis.toml"),
        "run",
        f"{base_url}/schema/openapi.json",
        f"--max-examples={EXAMPLES}",
        f"--seed={SEED}",
        "--generation-database=none",
        "--request-timeout=60",
        # Hypothesis's "data generation is too slow" health check measures this machine's load, not
        # the API (CI failed on it for POST /v1/buy-vs-rent under a loaded runner): the cases still run.
        "--suppress-health-check=too_slow",
        *extra,
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=False, env=env, cwd=tmp_path
    )


def test_the_config_turns_every_check_on() -> None:
    from schemathesis.checks import CHECKS as REGISTERED

    assert {check.__name__ for check in REGISTERED.get_all()} <= set(CHECKS)


def test_every_check_passes_without_the_token(base_url: str, tmp_path: Path) -> None:
    # Without the token only the three admin operations answer differently (401): the coverage
    # phase's hundreds of boundary values per operation run once, in the admin run below.
    done = schemathesis_run(base_url, tmp_path, "--phases=examples,fuzzing,stateful")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_every_check_passes_with_the_token(base_url: str, tmp_path: Path) -> None:
    done = schemathesis_run(base_url, tmp_path, "--header", f"Authorization: Bearer {TOKEN}")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_every_check_passes_when_writes_are_disabled(writes_disabled_url: str, tmp_path: Path) -> None:
    # Only the three writes answer differently without a configured token, so only they run (the
    # coverage phase's boundary values ran with the token). A write without the header is the
    # documented 403 here (no token is set), where missing_required_header expects a 401: that check
    # is off in this run (on in the two above).
    config = schemathesis_config("missing_required_header")
    only_writes = (
        "--include-path-regex=^/v1/(price-sheets|price-sheets/refresh|profiles)$",
        "--include-method=POST",
    )
    phases = "--phases=examples,fuzzing,stateful"
    done = schemathesis_run(writes_disabled_url, tmp_path, *only_writes, phases, config=config)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
