"""Stored plans are kept GPUPLAN_PLAN_RETENTION_DAYS, then deleted with their summaries (issue 28 D24)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from service.db.store import Store
from service.plans.pipeline import PlanService
from service.plans.retention import delete_expired_plans
from service.settings import Settings
from solver import PlanRequest
from tests.perf.workloads import PLAN_BODIES


def _count(store: Store, table: str) -> int:
    with store.cursor() as cur:
        row = cur.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def test_plans_older_than_the_retention_are_deleted_and_newer_ones_kept(store: Store) -> None:
    plans = PlanService(store)
    made = plans.create(msgspec.convert(PLAN_BODIES[0], PlanRequest))
    before_plans = _count(store, "plans")
    assert delete_expired_plans(store, 0) == 0  # 0 keeps every plan
    assert delete_expired_plans(store, 30, now=datetime.now(UTC) + timedelta(days=29)) == 0
    assert delete_expired_plans(store, 30, now=datetime.now(UTC) + timedelta(days=31)) == before_plans
    assert _count(store, "plans") == 0
    with pytest.raises(Exception, match="no plan"):
        plans.get(made.plan_id)


def test_the_retention_setting_is_read_and_checked() -> None:
    assert Settings.from_env({}).plan_retention_days == 0
    assert Settings.from_env({"GPUPLAN_PLAN_RETENTION_DAYS": "90"}).plan_retention_days == 90
    for bad in ("-1", "many"):
        with pytest.raises(ValueError, match="GPUPLAN_PLAN_RETENTION_DAYS"):
            Settings.from_env({"GPUPLAN_PLAN_RETENTION_DAYS": bad})


def test_the_embedded_database_has_a_memory_limit() -> None:
    store = Store.open(":memory:")
    try:
        with store.cursor() as cur:
            row = cur.execute("SELECT current_setting('memory_limit')").fetchone()
    finally:
        store.close()
    assert row is not None and row[0] == "953.6 MiB"  # DuckDB shows 1GB (10^9 bytes) in binary units
