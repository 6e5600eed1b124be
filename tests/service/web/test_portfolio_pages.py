"""The portfolio pages: the form with its example, POST plans and stores it (303), the stored page draws
the Gantt and the owned-vs-rented charts; an infeasible or malformed body comes back to the form."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from litestar.testing import TestClient

from service.web.portfolio_pages import EXAMPLE
from tests.service.portfolios.bodies import PRETRAIN_1B, portfolio, ten_jobs

Client = TestClient[Any]


def _svgs(html: str) -> list[str]:
    return [
        base64.b64decode(m).decode() for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    ]


def _post(client: Client, body: object) -> Any:
    return client.post("/portfolio", data={"body": json.dumps(body)}, follow_redirects=False)


def test_the_form_holds_the_example_and_saving_it_opens_the_stored_page(client: Client) -> None:
    form = client.get("/portfolio")
    assert form.status_code == 200 and "lora-support" in form.text
    saved = _post(client, EXAMPLE)
    assert saved.status_code == 303, saved.text
    location = saved.headers["location"]
    assert location.startswith("/portfolios/pf-")
    stored = client.get(location)
    assert stored.status_code == 200
    gantt, stacked = _svgs(stored.text)
    assert "Schedule" in gantt and "lora-support" in gantt and "pretrain-1b" in gantt
    assert "Owned vs rented" in stacked
    answer = client.get(f"/v1{location}").json()
    assert f"{answer['total_usd']:,.2f}" in stored.text


def test_a_ten_job_portfolio_draws_a_bar_per_job(client: Client) -> None:
    saved = _post(client, portfolio(ten_jobs(), owned=[{"gpu": "H100 SXM", "count": 16}]))
    assert saved.status_code == 303, saved.text
    gantt, _ = _svgs(client.get(saved.headers["location"]).text)
    assert all(f"job-{i}" in gantt for i in range(10))


def test_an_infeasible_portfolio_returns_to_the_form_with_the_fix(client: Client) -> None:
    response = _post(client, portfolio([{"name": "rushed", "plan": PRETRAIN_1B, "deadline": 1.0}]))
    assert response.status_code == 422
    assert "rushed" in response.text and "move the deadline to hour" in response.text


def test_a_malformed_body_returns_to_the_form(client: Client) -> None:
    response = client.post("/portfolio", data={"body": "{not json"}, follow_redirects=False)
    assert response.status_code == 400 and "{not json" in response.text
    assert client.get("/portfolios/pf-none").status_code == 404
