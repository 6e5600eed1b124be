"""GET /metrics (issue 13, A1): request counts and latency by route template and status, plan solve
time, refresh runs by source and result, current sheet versions and their age, snapshot rebuilds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.db.store import Store
from service.price_sheets.refresh import Refresher
from service.price_sheets.sources import SourceConfig
from service.settings import Settings
from tests.service.plans.test_api_plans import PRETRAIN_1B as PLAN

SHEET = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\nacme,a.h100x1,H100 SXM,1,eu-1,2.6\n"


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    wanted = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and wanted <= ls]
    assert len(found) == 1, (name, labels, found)
    return found[0]


@pytest.fixture
def refreshed(db_target: str, tmp_path: Path) -> Iterator[TestClient[Any]]:
    """An app on a store whose source "acme" was refreshed twice (a new version, then unchanged)."""
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    store = Store.open(db_target)
    refresher = Refresher(store, [SourceConfig(name="acme", url=str(sheet), format="rental_csv")])
    assert [refresher.run("acme").result for _ in range(2)] == ["ok", "unchanged"]
    with TestClient(create_app(Settings(db_path=":memory:"), store=store)) as client:
        yield client
    store.close()


def test_requests_solves_refreshes_versions_and_rebuilds_are_exposed(refreshed: TestClient[Any]) -> None:
    before = _samples(refreshed.get("/metrics").text)
    created = refreshed.post("/v1/plans", json=PLAN)
    assert created.status_code == 201, created.text
    assert refreshed.get(created.headers["location"]).status_code == 200
    response = refreshed.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    after = _samples(response.text)
    # by route template, not by raw path (one series for every plan id)
    assert _value(after, "gpuplan_requests_total", path="/v1/plans", method="POST", status_code="201") >= 1
    assert _value(after, "gpuplan_requests_total", path="/v1/plans/{plan_id}", status_code="200") >= 1
    assert not any(
        "/v1/plans/" in dict(ls).get("path", "") and "{" not in dict(ls)["path"] for _, ls in after
    )
    assert _value(after, "gpuplan_request_duration_seconds_count", path="/v1/plans", status_code="201") >= 1
    solved_before = [
        v
        for (n, ls), v in before.items()
        if n == "gpuplan_plan_solve_seconds_count" and ("kind", "train") in ls
    ]
    assert _value(after, "gpuplan_plan_solve_seconds_count", kind="train") == sum(solved_before) + 1
    assert _value(after, "gpuplan_plan_solve_seconds_sum", kind="train") > 0
    assert _value(after, "gpuplan_refresh_runs_total", source="acme", result="ok") == 1
    assert _value(after, "gpuplan_refresh_runs_total", source="acme", result="unchanged") == 1
    seed = _value(after, "gpuplan_price_sheet_version", source="seed", kind="rental")
    assert _value(after, "gpuplan_price_sheet_version", source="acme", kind="rental") > seed
    assert 0 <= _value(after, "gpuplan_price_sheet_age_seconds", source="acme", kind="rental") < 3600
    assert _value(after, "gpuplan_snapshot_rebuilds_total") >= 1  # the import swapped a new snapshot in
