"""The home page over HTTP: the catalog, the sheet versions, and each scheduled source's last refresh."""

from __future__ import annotations

import re
from pathlib import Path

from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN


def test_the_home_page_shows_each_scheduled_source_and_its_last_refresh(tmp_path: Path) -> None:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\nacme,a.l4,L4,1,eu-1,0.5\n"
    )
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "acme-live"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    store = Store.open(":memory:")
    settings = Settings(db_path=":memory:", sources_file=str(sources), admin_token=TOKEN)
    with TestClient(create_app(settings, store=store)) as client:
        ran = client.post("/v1/price-sheets/refresh", params={"wait": "true"}, headers=AUTH)
        assert ran.status_code == 200, ran.text
        home = client.get("/")
    store.close()
    assert home.status_code == 200 and home.headers["content-type"].startswith("text/html")
    row = home.text[home.text.index('id="sources"') :]
    assert "acme-live" in row and "rental_csv" in row and ("ok" in row or "unchanged" in row)
    assert "h ago" in row


def test_without_sources_the_home_page_says_how_to_schedule_them(client: TestClient) -> None:  # type: ignore[type-arg]
    home = client.get("/")
    assert "No scheduled sources" in home.text and "seed" in home.text


def _total_cost(page: str) -> float:
    found = re.search(r'id="total-cost"[^>]*>\$([\d,.]+)<', page)
    assert found is not None, page[:500]
    return float(found.group(1).replace(",", ""))


def test_the_plan_page_takes_the_memory_headroom_and_names_it_when_out_of_range(client: TestClient) -> None:  # type: ignore[type-arg]
    query = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000"}
    edge = client.get("/plan", params={**query, "memory_headroom": "0"})
    default = client.get("/plan", params=query)
    assert edge.status_code == default.status_code == 200
    assert 'name="memory_headroom"' in default.text
    # headroom costs: the default plan takes a smaller micro-batch than the one at the edge of memory
    assert _total_cost(edge.text) < _total_cost(default.text)
    refused = client.get("/plan", params={**query, "memory_headroom": "0.9"})
    assert 'aria-invalid="true"' in refused.text and "memory_headroom" in refused.text


def test_the_home_page_flags_sheets_older_than_the_price_age_limit(client: TestClient) -> None:  # type: ignore[type-arg]
    home = client.get("/").text
    table = home[home.index("<h2>Price sources</h2>") : home.index("<h2>Scheduled sources</h2>")]
    assert "stale" in table  # the shipped rental sheet is over a year old
    assert 'class="num stale"' in table


def test_the_buy_vs_rent_sensitivity_speaks_a_readers_words() -> None:
    from service.web.labels import input_label, input_value

    assert input_label("rent_usd_per_gpu_hour") == "rent price"
    assert input_value("rent_usd_per_gpu_hour", 2.75) == "$2.75/GPU-hour"
    assert input_value("electricity_usd_per_kwh", 0.00565415) == "$0.006/kWh"
    assert input_value("purchase_price_usd_per_gpu", 37500) == "$37,500"
    assert input_label("pue") == "data-centre PUE"


def test_the_buy_vs_rent_page_labels_its_inputs_and_leaves_out_flat_rows(client: TestClient) -> None:  # type: ignore[type-arg]
    query = {"gpu": "H100 SXM", "gpu_count": "8", "utilization": "0.7", "horizon_months": "60"}
    page = client.get("/buy-vs-rent", params=query).text
    table = page[page.index("<h2>Sensitivity</h2>") : page.index("<h2>Monthly schedule</h2>")]
    assert "rent price" in table and "data-centre PUE" in table
    assert "rent usd per gpu hour" not in table and "_" not in table.split("<tbody>")[1].split("style=")[0]
    assert "$0 </td>" not in table


def test_the_plan_page_shows_the_region_and_country_of_the_chosen_offer(client: TestClient) -> None:  # type: ignore[type-arg]
    query = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000"}
    page = client.get("/plan", params=query).text
    found = re.search(r'id="choice">.*?\(([^,()]+), ([A-Z]{2}|country unknown)\)', page, re.S)
    assert found is not None, page[:800]


def test_the_price_sheets_page_shows_each_versions_age_and_flags_stale_current_ones(
    client: TestClient,
) -> None:  # type: ignore[type-arg]
    page = client.get("/price-sheets").text
    table = page[page.rindex("<thead>") :]
    assert '<th scope="col" class="num">age</th>' in table and " days" in table
    assert "<strong>stale</strong>" in table  # the shipped rental sheet is current and over a year old
    links = re.findall(r'<a href="(/v1/price-sheets/\d+)"', table)  # each version links to its JSON
    assert links and all(client.get(link).status_code == 200 for link in links)


def test_the_plan_page_shows_what_the_memory_headroom_costs(client: TestClient) -> None:  # type: ignore[type-arg]
    query = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000"}
    page = client.get("/plan", params=query).text
    section = page[page.index('id="headroom-cost"') :]
    assert "L40S" in section and "of 48 GiB" in section  # L40S at a larger micro-batch, 42 of 48 GiB
    chart = page[page.index('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') :].split("</svg>")[0]
    assert "<title>fits only below the memory headroom: " in chart and 'stroke="#e08a00"' in chart
    edge = client.get("/plan", params={**query, "memory_headroom": "0"}).text
    assert 'id="headroom-cost"' not in edge
