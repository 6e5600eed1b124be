"""The plan pages store nothing on GET, store on Save, and plan through the plan queue and rate limit
as POST /v1/plans does (issue 28 D3, issue 25)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

Client = TestClient[Any]
LORA = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000"}
FLEET = {"model": "Llama-2-7b", "requests_per_s": "5", "in_0": "100", "out_0": "100", "share_0": "1"}


def _stored(client: Client) -> int:
    return len(client.get("/v1/plans").json()["items"])


def test_a_plan_page_stores_nothing_until_saved(client: Client) -> None:
    for path, query in (("/plan", LORA), ("/serving", FLEET)):
        before = _stored(client)
        shown = client.get(path, params=query)
        assert shown.status_code == 200 and "Save this plan" in shown.text
        assert _stored(client) == before
        saved = client.post(path, params=query, follow_redirects=False)
        assert saved.status_code == 303 and saved.headers["location"].startswith("/plans/pl-")
        assert _stored(client) == before + 1
        reopened = client.get(saved.headers["location"])
        assert reopened.status_code == 200 and "Save this plan" not in reopened.text


def test_page_plans_count_against_the_plan_rate_limit(store: Store) -> None:
    app = create_app(Settings(db_path=":memory:", plan_rate=("minute", 2)), store=store)
    with TestClient(app) as client:
        assert client.get("/plan", params=LORA).status_code == 200
        assert client.get("/serving", params=FLEET).status_code == 200
        assert client.get("/plan", params=LORA).status_code == 429  # the GET planned: it counted
        assert client.get("/plan").status_code == 200  # the empty form plans nothing, so is not counted


def test_the_plan_list_shows_saved_plans_and_filters_them(client: Client) -> None:
    client.post("/plan", params=LORA, follow_redirects=False)
    client.post("/serving", params=FLEET, follow_redirects=False)
    listed = client.get("/plans")
    assert listed.status_code == 200 and 'id="plans"' in listed.text
    assert "fine tune" in listed.text and "serving" in listed.text and 'href="/plans/pl-' in listed.text
    serving_only = client.get("/plans", params={"kind": "serving"})
    assert "fine tune</td>" not in serving_only.text and "serving</td>" in serving_only.text
    for bad in ({"kind": "dance"}, {"gpu": "Z9000"}, {"page": "0"}):
        refused = client.get("/plans", params=bad)
        assert refused.status_code == 200 and 'role="alert"' in refused.text


def test_a_stored_plan_downloads_as_json_and_csv(client: Client) -> None:
    import csv
    import io

    for path, query, first in (("/plan", LORA, "rank"), ("/serving", FLEET, "gpu")):
        stored = client.post(path, params=query, follow_redirects=False).headers["location"]
        page = client.get(stored).text
        assert f'href="/v1{stored}"' in page and f'href="{stored}/rows.csv"' in page
        download = client.get(f"{stored}/rows.csv")
        assert download.status_code == 200 and download.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(download.text)))
        assert rows and next(iter(rows[0])) == first
    plan = client.get(f"/v1{stored}").json()
    assert len(rows) == len(plan["choice"]["replicas"])
    assert client.get("/plans/pl-nothing/rows.csv").status_code == 404
