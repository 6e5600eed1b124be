"""GET /health/live and /health/ready (issue 13, A4), and a write the store refuses: a 503 problem
and readiness false (B6), where it used to be a 500 while /health said ok."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import psycopg.errors
import psycopg_pool
import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.duckdb_backend import DuckDbBackend
from service.db.seed import SeedReport
from service.db.store import Store
from service.db.store_errors import is_store_unavailable, is_write_conflict
from service.ops.health import readiness
from service.ops.wiring import WRITING_PATHS
from service.ops.writes import FAILURE_HOLD_S, WriteFailures
from service.settings import Settings
from tests.pg_cluster import PgCluster
from tests.service.admin import AUTH, TOKEN
from tests.service.ops.test_metrics import PLAN


def _checks(body: dict[str, Any]) -> dict[str, bool]:
    return {c["name"]: c["ok"] for c in body["checks"]}


def test_health_names_the_backend(client: TestClient[Any], backend: str) -> None:
    db = client.get("/health").json()["db"]
    assert db["ok"] and db["backend"] == backend
    assert db["path"] == "(shown with the admin token)"  # no file path, host, user or database name


def test_health_shows_the_location_and_driver_errors_with_the_admin_token_only(
    store: Store, backend: str
) -> None:
    with TestClient(create_app(Settings(db_path=store.path, admin_token=TOKEN), store=store)) as client:
        db = client.get("/health", headers=AUTH).json()["db"]
        assert db["path"] == ":memory:" if backend == "duckdb" else db["path"].startswith("postgresql://")
        wrong = client.get("/health", headers={"Authorization": "Bearer nope"}).json()["db"]
        assert wrong["path"] == "(shown with the admin token)"


def test_live_and_ready_answer_200_on_a_healthy_store(client: TestClient[Any]) -> None:
    assert client.get("/health/live").json() == {"status": "ok"}
    ready = client.get("/health/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert _checks(ready.json()) == {"db_readable": True, "db_writable": True, "snapshot_loaded": True}
    assert client.get("/health").status_code == 200  # the detailed report stays


def test_the_operations_that_write_document_their_503(client: TestClient[Any]) -> None:
    paths = client.get("/schema/openapi.json").json()["paths"]
    for path in WRITING_PATHS:
        documented = paths[path]["post"]["responses"]["503"]["content"]["application/problem+json"]
        assert documented["schema"]["$ref"] == "#/components/schemas/Problem"
    assert "503" not in paths["/v1/memory"]["post"]["responses"]  # computes, never writes


def _read_only_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """A DuckDB file attached read-only, or a PostgreSQL database whose sessions are read-only."""
    if backend == "postgresql":
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        url = cluster.fresh_url()
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(
                f"ALTER DATABASE {url.rsplit('/', 1)[1]} SET default_transaction_read_only = on"
            )
        return Store.open(url)
    path = str(tmp_path / "ro.duckdb")
    Store.open(path).close()
    return Store(
        DuckDbBackend(duckdb.connect(path, read_only=True), path), SeedReport(loaded=False, fingerprint="")
    )


@pytest.fixture
def read_only(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestClient[Any]]:
    """An app on a database that refuses every write the store is asked for."""
    store = _read_only_store(backend, tmp_path, request)
    with TestClient(create_app(Settings(db_path=store.path, admin_token=TOKEN), store=store)) as client:
        yield client
    store.close()


def test_a_refused_write_is_a_503_problem_and_makes_ready_false(read_only: TestClient[Any]) -> None:
    ready = read_only.get("/health/ready")
    assert ready.status_code == 503 and ready.json()["status"] == "not_ready"
    checks = {c["name"]: c for c in ready.json()["checks"]}
    assert checks["db_readable"]["ok"] and not checks["db_writable"]["ok"]
    assert checks["db_writable"]["detail"] == "failed (the reason is shown with the admin token)"
    told = {c["name"]: c for c in read_only.get("/health/ready", headers=AUTH).json()["checks"]}
    assert "read-only" in told["db_writable"]["detail"]
    planned = read_only.post("/v1/plans", json=PLAN)  # solving works; storing the plan does not
    assert planned.status_code == 503, planned.text
    assert planned.headers["content-type"].startswith("application/problem+json")
    assert planned.headers["retry-after"] == "30"
    assert planned.json()["title"] == "Store unavailable"
    sheet = (
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\nacme,a,H100 SXM,1,eu-1,2.6\n"
    )
    uploaded = read_only.post(
        "/v1/price-sheets",
        params={"source": "acme", "format": "rental_csv"},
        content=sheet,
        headers={**AUTH, "content-type": "text/csv"},
    )
    assert uploaded.status_code == 503, uploaded.text
    after = read_only.get("/health/ready", headers=AUTH).json()
    assert "a write failed recently" in {c["name"]: c for c in after["checks"]}["db_writable"]["detail"]


def test_a_recorded_write_failure_is_forgotten_once_a_committed_trial_write_goes_through(
    store: Store,
) -> None:
    failures = WriteFailures()
    failures.record("IOException: disk full")
    settings = Settings(db_path=":memory:")
    assert readiness(store, failures, None, settings).status == "ready"  # the store takes writes now
    assert failures.recent() is None


def test_a_recorded_write_failure_is_forgotten_after_the_hold_at_most() -> None:
    now = [1000.0]
    failures = WriteFailures(clock=lambda: now[0])
    failures.record("IOException: disk full")
    assert failures.recent() == "IOException: disk full"
    now[0] += FAILURE_HOLD_S + 1
    assert failures.recent() is None


def test_a_successful_write_makes_ready_again_at_once(client: TestClient[Any]) -> None:
    """After a refused write, the next write that goes through clears the failure: readiness says
    what the store does now, not what it did a minute ago."""
    failures: WriteFailures = client.app.state.write_failures
    failures.record("OperationalError: the server closed the connection")
    planned = client.post("/v1/plans", json=PLAN)
    assert planned.status_code == 201, planned.text
    assert failures.recent() is None
    failures.record("OperationalError: the server closed the connection")
    assert client.get("/health/ready").status_code == 200
    assert failures.recent() is None


def test_ready_needs_a_running_scheduler_when_sources_are_configured(store: Store) -> None:
    settings = Settings(db_path=":memory:", sources_file="sources.toml")
    body = readiness(store, WriteFailures(), None, settings)
    assert body.status == "not_ready"
    assert [c.name for c in body.checks if not c.ok] == ["scheduler_running"]


def test_only_errors_of_an_unwritable_store_are_503s() -> None:
    assert is_store_unavailable(duckdb.IOException("Could not write file: No space left on device"))
    assert is_store_unavailable(duckdb.PermissionException("Permission denied"))
    assert is_store_unavailable(
        duckdb.InvalidInputException('... database "x" which is attached in read-only mode!')
    )
    assert not is_store_unavailable(duckdb.CatalogException("Table with name nope does not exist"))
    assert not is_store_unavailable(duckdb.ConstraintException("Duplicate key"))
    assert not is_store_unavailable(ValueError("not a database error"))


def test_postgresql_errors_map_as_duckdb_errors_do() -> None:
    assert is_store_unavailable(psycopg.OperationalError("connection to server failed: Connection refused"))
    assert is_store_unavailable(psycopg_pool.PoolTimeout("couldn't get a connection after 10.00 sec"))
    assert is_store_unavailable(psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT"))
    assert is_store_unavailable(psycopg.errors.DiskFull("could not extend file"))
    assert not is_store_unavailable(psycopg.errors.UndefinedTable("relation nope does not exist"))
    assert not is_store_unavailable(psycopg.errors.UniqueViolation("duplicate key"))
    # a serialization failure is an OperationalError too, but it is retried, not a 503
    assert is_write_conflict(psycopg.errors.SerializationFailure("could not serialize access"))
    assert is_write_conflict(psycopg.errors.DeadlockDetected("deadlock detected"))
    assert not is_store_unavailable(psycopg.errors.SerializationFailure("could not serialize access"))
    assert is_write_conflict(duckdb.TransactionException("Conflict on update!"))


def test_an_invalidated_database_fails_liveness_so_the_process_is_restarted(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB refuses every query after a fatal error (a full disk mid-checkpoint) even once space is
    back; only a new process reopens it, so /health/live answers 503 (issue 28 D8: it stayed 200)."""
    with TestClient(create_app(Settings(db_path=":memory:", admin_token=TOKEN), store=store)) as client:
        assert client.get("/health/live").status_code == 200

        def invalidated(*_: object, **__: object) -> None:
            raise duckdb.FatalException(
                "FATAL Error: database has been invalidated because of a previous fatal error"
            )

        monkeypatch.setattr(Store, "transaction", invalidated)
        assert client.post("/v1/plans", json=PLAN).status_code == 503
        live = client.get("/health/live")
        assert live.status_code == 503 and live.json()["title"] == "Restart required"
        assert "FatalException" not in live.json()["detail"]  # driver errors with the admin token only
        assert "FatalException" in client.get("/health/live", headers=AUTH).json()["detail"]
        ready = client.get("/health/ready", headers=AUTH).json()
        assert "cannot reopen it" in {c["name"]: c for c in ready["checks"]}["db_writable"]["detail"]
