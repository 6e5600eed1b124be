"""The home page over HTTP: the catalog, the sheet versions, and each scheduled source's last refresh."""

from __future__ import annotations

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
