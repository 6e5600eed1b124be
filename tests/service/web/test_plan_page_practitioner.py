"""Issue 24's practitioner rules on the plan page (``/plan``), as ``POST /v1/plans`` has them: stacks as
they are, true rejection reasons, every price kind side by side, purchase units and countries. (The
memory headroom and what it costs: ``test_home.py``.)"""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]


def _page(client: Client, **query: str) -> str:
    response = client.get("/plan", params=query)
    assert response.status_code == 200, response.text[:300]
    return response.text


def _text(html: str, start: str, length: int = 4000) -> str:
    """The page's text from the element that holds ``start``, tags removed."""
    at = html.index(start)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[at : at + length]))


def test_a_70b_qlora_on_the_standard_stack_is_laid_out_without_tensor_parallelism(client: Client) -> None:
    page = _page(client, model="Llama 3 70B", kind="fine_tune", method="qlora", precision="nf4",
                 seq_len="2048", tokens="100000000")  # fmt: skip
    choice = _text(page, 'id="choice"', 1500)
    assert "Layout: tp 1, pp 1, cp 1" in choice, choice


def test_a_deadline_rejection_on_the_page_names_the_limit_that_would_admit_it(client: Client) -> None:
    page = _page(client, model="Llama 3.1 8B", kind="train", seq_len="4096", tokens="100000000000",
                 deadline_hours="150")  # fmt: skip
    table = _text(page, "<h2>GPUs that cannot be used</h2>", 60_000)
    assert "deadline" in table and "the fastest configuration tried" in table
    assert "a deadline of" in table and "max_gpus would admit it" in table


def test_every_kind_of_price_is_shown_side_by_side(client: Client) -> None:
    page = _page(client, model="Llama 3.1 8B", kind="train", seq_len="4096", tokens="300000000000",
                 gpus="H100 SXM", max_gpus="64", deadline_hours="300", spot="on")  # fmt: skip
    table = _text(page, 'id="pricing-options"')
    assert "on-demand" in table and "spot" in table and "(chosen)" in table


def test_owned_gb200_under_one_rack_is_refused_for_its_purchase_unit(client: Client) -> None:
    page = _page(client, model="Llama 3.1 70B", kind="train", tokens="100000000000", acquisition="own",
                 gpus="GB200", max_gpus="64")  # fmt: skip
    assert 'role="alert"' in page
    assert "72 GPUs" in _text(page, "<h2>Why nothing fits</h2>", 20_000)


def test_countries_keep_the_plan_in_them_and_a_bad_code_names_the_field(client: Client) -> None:
    query = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000"}
    finland = _text(_page(client, **query, countries="FI"), 'id="choice"', 600)
    assert re.search(r"\(([^()]*, )?FI\)", finland), finland  # the offer's (region, country)
    refused = _page(client, **query, countries="XX")
    assert 'id="countries"' in refused and re.search(r'id="countries"[^>]*aria-invalid="true"', refused)
    assert "ISO 3166-1 alpha-2" in _text(refused, 'role="alert"', 400)
