"""GET /v1/plans: stored plans newest first, one summary each, filtered and paged; the summaries of
plans stored before migration 7 are the ones written with a new plan."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.migrations import MIGRATIONS, Variants
from service.db.store import Store
from service.plans.listing import SUMMARY_COLUMNS
from service.settings import Settings
from tests.perf.workloads import PLAN_BODIES, SERVING_BODIES

Client = TestClient[Any]


@pytest.fixture(scope="module")
def planned(fresh_db: Callable[[], str]) -> Iterator[tuple[Client, Store, list[dict[str, Any]]]]:
    """A store of its own with three job plans and one serving plan, in that order."""
    store = Store.open(fresh_db())
    with TestClient(create_app(Settings(db_path=":memory:"), store=store)) as client:
        plans = []
        for body in [*PLAN_BODIES[:3], SERVING_BODIES[0]]:
            response = client.post("/v1/plans", json=body)
            assert response.status_code == 201, response.text
            plans.append(response.json())
        yield client, store, plans
    store.close()


def test_the_list_is_newest_first_with_a_summary_of_each_plan(
    planned: tuple[Client, Store, list[dict[str, Any]]],
) -> None:
    client, _store, plans = planned
    page = client.get("/v1/plans").json()
    assert page["total"] == 4 and (page["limit"], page["offset"]) == (50, 0)
    assert [p["plan_id"] for p in page["items"]] == [p["plan_id"] for p in reversed(plans)]
    job = next(s for s in page["items"] if s["plan_id"] == plans[0]["plan_id"])
    full = plans[0]
    assert job["plan_type"] == "job" and job["kind"] == full["kind"] and job["model"] == full["model"]
    assert job["gpus"] == [full["choice"]["gpu"]] and job["gpu_count"] == full["choice"]["gpu_count"]
    assert (job["total_usd"], job["hours"]) == (full["cost"]["total_usd"], full["estimate"]["hours"])
    fleet, served = page["items"][0], plans[3]
    assert fleet["plan_type"] == "serving" and fleet["total_usd"] == served["cost"]["total_usd"]
    replicas = served["choice"]["replicas"]
    assert fleet["gpus"] == list(dict.fromkeys(r["gpu"] for r in replicas))
    assert fleet["gpu_count"] == sum(r["replicas"] * r["tp"] for r in replicas)
    assert "choice" not in job  # a summary, not the whole plan


def test_filters_and_paging(planned: tuple[Client, Store, list[dict[str, Any]]]) -> None:
    client, _store, plans = planned
    serving = client.get("/v1/plans", params={"kind": "serving"}).json()
    assert [p["plan_id"] for p in serving["items"]] == [plans[3]["plan_id"]] and serving["total"] == 1
    gpu = plans[1]["choice"]["gpu"]
    on_gpu = client.get("/v1/plans", params={"gpu": gpu}).json()["items"]
    expected = {p["plan_id"] for p in plans[:3] if p["choice"]["gpu"] == gpu}
    assert {p["plan_id"] for p in on_gpu} == expected and expected
    after = datetime.fromisoformat(plans[1]["created_at"]).isoformat()
    newer = client.get("/v1/plans", params={"created_after": after}).json()
    assert [p["plan_id"] for p in newer["items"]] == [plans[3]["plan_id"], plans[2]["plan_id"]]
    second = client.get("/v1/plans", params={"limit": 1, "offset": 1}).json()
    assert second["total"] == 4 and [p["plan_id"] for p in second["items"]] == [plans[2]["plan_id"]]


def test_bad_filters_are_400s_naming_the_parameter(
    planned: tuple[Client, Store, list[dict[str, Any]]],
) -> None:
    client, _store, _plans = planned
    for params, field in [
        ({"gpu": "not-a-gpu"}, "gpu"),
        ({"kind": "painting"}, "kind"),
        ({"created_after": "yesterday"}, "created_after"),
        ({"created_after": "0.5"}, "created_after"),
        ({"created_after": "2026-12-01"}, "created_after"),
        ({"created_after": "2026-13-01T00:00:00Z"}, "created_after"),
        ({"limit": 0}, "limit"),
    ]:
        response = client.get("/v1/plans", params=params)
        assert response.status_code == 400, (params, response.text)
        assert field in response.text


def test_migrations_7_and_16_summarise_stored_plans_as_new_plans_are(
    planned: tuple[Client, Store, list[dict[str, Any]]],
) -> None:
    """Plans stored before migration 7 got their summaries from their JSON (7), which migration 16 moved
    into the plans' rows: redone on these plans, the two give the columns a new plan is stored with."""
    _client, store, _plans = planned
    summary = f"SELECT plan_id, {', '.join(SUMMARY_COLUMNS)} FROM plans ORDER BY plan_id"
    written = store.transaction(lambda cur: cur.execute(summary).fetchall())
    (seven, _, statements_7), (sixteen, _, statements_16) = MIGRATIONS[6], MIGRATIONS[15]
    assert (seven, sixteen) == (7, 16)
    create, backfill = (
        statements_7[0],
        next(  # the backfill in this backend's SQL
            statement
            for step in statements_7
            if isinstance(step, Variants)
            for statement in getattr(step, store.backend_name)
            if "INSERT INTO plan_summaries" in statement
        ),
    )

    def redo(cur: Any) -> list[Any]:
        cur.execute(create.replace("DOUBLE", cur.dialect.double_type))
        cur.execute(backfill)
        cur.execute(f"UPDATE plans SET {', '.join(f'{c} = NULL' for c in SUMMARY_COLUMNS)}")
        for statement in statements_16:
            if "UPDATE plans" in statement or "DROP TABLE" in statement:
                cur.execute(statement)
        rows: list[Any] = cur.execute(summary).fetchall()
        return rows

    assert store.transaction(redo) == written and len(written) == 4
