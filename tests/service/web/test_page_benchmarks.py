"""The stored plan page links its launch files and what to benchmark next; the short-list page shows
the API's answer with each configuration's recipe, and stores nothing."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

from tests.service.plans.test_api_serving_plans import SERVING as FLEET

Client = TestClient[Any]


def test_the_plan_page_leads_to_the_short_list_and_the_launch_files(client: Client) -> None:
    plan = client.post("/v1/plans", json=FLEET).json()
    plan_id = plan["plan_id"]
    stored = client.get(f"/plans/{plan_id}").text
    assert f'href="/plans/{plan_id}/benchmarks"' in stored
    for fmt in ("skypilot", "kubernetes"):
        assert f'href="/v1/plans/{plan_id}/launch?format={fmt}"' in stored
    before = client.get("/v1/plans").json()["total"]
    shown = client.get(f"/plans/{plan_id}/benchmarks")
    assert shown.status_code == 200
    answer = client.post(f"/v1/plans/{plan_id}/benchmarks").json()
    rows = re.findall(r"<tr><td class=\"num\">(\d+)</td>", shown.text)
    assert rows == [str(c["rank"]) for c in answer["candidates"]]
    top = answer["candidates"][0]
    assert top["recipe"]["commands"][0].replace("&", "&amp;") in shown.text
    assert "Nothing changed since the plan was made." in shown.text
    assert client.get("/v1/plans").json()["total"] == before


def test_an_unknown_plan_has_a_404_page(client: Client) -> None:
    response = client.get("/plans/pl-0000000000000000/benchmarks")
    assert response.status_code == 404 and "no plan" in response.text
