"""Superseded price-sheet versions past ``GPUPLAN_SHEET_RETENTION_DAYS`` are deleted with their rows,
except the current version, the newest ``GPUPLAN_SHEET_RETENTION_KEEP`` superseded ones and any version
a stored plan names, which goes once the plan has expired (issue 28 D24)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.plans.retention import delete_expired_plans
from service.price_sheets.retention import delete_superseded_versions
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN

HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"
JOB = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "batch_size": 4,
    "tokens": 1_000_000,
    "seq_len": 2048,
}


@pytest.fixture
def served(db_target: str) -> Iterator[tuple[Store, TestClient[Any]]]:
    store = Store.open(db_target)
    with TestClient(create_app(Settings(db_path=db_target, admin_token=TOKEN), store=store)) as client:
        yield store, client
    store.close()


def _upload(client: TestClient[Any], price: float) -> int:
    sheet = f"{HEADER}keep,k.l4,L4,1,eu-1,{price}\nkeep,k.h100,H100 SXM,1,eu-1,{price * 4}\n"
    uploaded = client.post(
        "/v1/price-sheets", params={"source": "kept", "format": "rental_csv"}, content=sheet, headers=AUTH
    )
    assert uploaded.status_code == 201, uploaded.text
    version: int = uploaded.json()["version"]
    return version


def _age(store: Store, days: float) -> None:
    """Make every version of the test's source ``days`` days old (as versions stored then would be)."""
    then = datetime.now(UTC) - timedelta(days=days)
    store.transaction(
        lambda cur: cur.execute("UPDATE price_sheets SET created_at = ? WHERE source = 'kept'", [then])
    )


def _stored(store: Store, table: str) -> set[int]:
    with store.cursor() as cur:
        return {int(v) for (v,) in cur.execute(f"SELECT DISTINCT version FROM {table}").fetchall()}


def test_old_superseded_versions_go_with_their_rows_keeping_the_current_and_the_newest(
    served: tuple[Store, TestClient[Any]],
) -> None:
    store, client = served
    versions = [_upload(client, 1.0 + i / 10) for i in range(5)]
    _age(store, 10)
    assert delete_superseded_versions(store, days=0) == 0  # 0: every version kept
    assert delete_superseded_versions(store, days=30, keep=1) == 0  # none that old
    offers_before = store.snapshot.current_offer_count
    assert delete_superseded_versions(store, days=1, keep=1) == 3
    gone, kept = versions[:3], versions[3:]
    assert not set(gone) & (_stored(store, "price_sheets") | _stored(store, "offers"))
    assert set(kept) <= _stored(store, "price_sheets") and set(kept) <= _stored(store, "offers")
    assert client.get(f"/v1/price-sheets/{gone[0]}").status_code == 404
    assert client.get(f"/v1/price-sheets/{kept[0]}").status_code == 200
    assert store.snapshot.current_offer_count == offers_before  # the current catalog is untouched
    assert client.get("/health").json()["db"]["price_sheet_versions"] == len(_stored(store, "price_sheets"))
    assert delete_superseded_versions(store, days=1, keep=0) == 1  # the newest superseded, now
    assert versions[-1] in _stored(store, "price_sheets")  # never the current one


def test_a_version_a_stored_plan_names_is_kept_until_the_plan_expires(
    served: tuple[Store, TestClient[Any]],
) -> None:
    store, client = served
    named = _upload(client, 2.0)
    plan = client.post("/v1/plans", json=JOB)
    assert plan.status_code == 201, plan.text
    assert named in {v["version"] for v in plan.json()["price_sheet"]["versions"]}
    unnamed = _upload(client, 2.5)
    _upload(client, 3.0)
    _age(store, 10)
    assert delete_superseded_versions(store, days=1) == 1
    assert named in _stored(store, "price_sheets") and unnamed not in _stored(store, "price_sheets")
    assert client.get(f"/v1/plans/{plan.json()['plan_id']}").status_code == 200
    assert delete_expired_plans(store, 1, now=datetime.now(UTC) + timedelta(days=2)) >= 1
    assert delete_superseded_versions(store, days=1) == 1
    assert named not in _stored(store, "price_sheets") and named not in _stored(store, "offers")


def test_the_retention_settings_are_read_and_checked() -> None:
    settings = Settings.from_env({"GPUPLAN_SHEET_RETENTION_DAYS": "14", "GPUPLAN_SHEET_RETENTION_KEEP": "3"})
    assert (settings.sheet_retention_days, settings.sheet_retention_keep) == (14, 3)
    assert (Settings.from_env({}).sheet_retention_days, Settings.from_env({}).sheet_retention_keep) == (0, 0)
    for name, bad in [
        ("GPUPLAN_SHEET_RETENTION_DAYS", "-1"),
        ("GPUPLAN_SHEET_RETENTION_DAYS", "nan"),
        ("GPUPLAN_SHEET_RETENTION_KEEP", "1.5"),
        ("GPUPLAN_SHEET_RETENTION_KEEP", "-2"),
        ("GPUPLAN_SHEET_RETENTION_KEEP", "٣"),
    ]:
        with pytest.raises(ValueError, match=name):
            Settings.from_env({name: bad})
