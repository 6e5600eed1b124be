"""Concurrent imports: version numbers never collide, and no import replaces a version stored after it
started (an upload whose client has gone, a racing refresh)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.db.store import Store
from service.errors import ImportSuperseded
from service.price_sheets import importer
from service.price_sheets.importer import import_sheet
from service.price_sheets.refresh import Refresher
from service.price_sheets.sources import SourceConfig
from tests.service.admin import AUTH
from tests.service.current import current_offers

HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"


def sheet(source: str, price: float) -> bytes:
    return (HEADER + f"{source},t1,H100 SXM,1,eu-1,{price}\n{source},t2,L4,1,eu-1,0.5\n").encode()


def test_forty_concurrent_uploads_to_two_sources_get_unique_versions_or_a_clean_409(
    admin: TestClient[Any],
) -> None:
    def upload(i: int) -> tuple[int, Any]:
        source = ("alpha", "beta")[i % 2]
        response = admin.post(
            "/v1/price-sheets",
            params={"source": source, "format": "rental_csv"},
            content=sheet(source, 1.0 + i / 100),
            headers=AUTH,
        )
        return response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(upload, range(40)))
    statuses = [status for status, _ in answers]
    assert set(statuses) <= {201, 409}, statuses
    assert statuses.count(201) >= 2  # at least the first of each source
    for status, body in answers:
        if status == 409:
            assert body["title"] == "Conflict" and "was stored while" in body["detail"]
    versions = admin.get("/v1/price-sheets").json()
    numbers = [v["version"] for v in (versions["items"] if isinstance(versions, dict) else versions)]
    assert len(numbers) == len(set(numbers))
    stored = sorted(body["version"] for status, body in answers if status == 201)
    assert len(stored) == len(set(stored)) and set(stored) <= set(numbers)


def test_an_import_never_replaces_a_version_stored_after_it_started(
    db_target: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The slow import reads its base version, then (while it validates) a newer version is stored: it
    stores nothing and says so, and the newer version stays current."""
    store = Store.open(db_target)
    first = import_sheet(store, source="acme", fmt="rental_csv", body=sheet("acme", 1.0), origin="t")
    parse = importer._parse
    newer: list[int | None] = []

    def parse_while_another_upload_lands(*args: Any) -> Any:
        monkeypatch.setattr(importer, "_parse", parse)  # the racing upload itself parses as usual
        report = import_sheet(store, source="acme", fmt="rental_csv", body=sheet("acme", 3.0), origin="t")
        newer.append(report.version)
        return parse(*args)

    monkeypatch.setattr(importer, "_parse", parse_while_another_upload_lands)
    with pytest.raises(ImportSuperseded, match=f"version {first.version}"):
        import_sheet(store, source="acme", fmt="rental_csv", body=sheet("acme", 2.0), origin="t")
    prices = {o.price_per_hour_usd for o in current_offers(store) if o.provider == "acme"}
    assert newer[0] is not None and newer[0] > (first.version or 0) and prices == {3.0, 0.5}
    store.close()


def test_a_refresh_superseded_by_an_upload_tries_again(
    db_target: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An upload to the source lands while the refresh validates: that attempt stores nothing, the next
    one imports the source's sheet on top of the upload."""
    store = Store.open(db_target)
    sheet_file = tmp_path / "acme.csv"
    sheet_file.write_bytes(sheet("acme", 2.0))
    parse = importer._parse

    def parse_while_an_upload_lands(*args: Any) -> Any:
        monkeypatch.setattr(importer, "_parse", parse)
        import_sheet(store, source="acme", fmt="rental_csv", body=sheet("acme", 3.0), origin="upload")
        return parse(*args)

    monkeypatch.setattr(importer, "_parse", parse_while_an_upload_lands)
    waits: list[float] = []
    source = SourceConfig(name="acme", url=str(sheet_file), format="rental_csv", retries=3)
    run = Refresher(store, [source], sleep=waits.append).run("acme")
    prices = {o.price_per_hour_usd for o in current_offers(store) if o.provider == "acme"}
    store.close()
    assert (run.result, run.attempts, waits) == ("ok", 2, [1.0])
    assert prices == {2.0, 0.5}


def test_thirty_concurrent_uploads_of_one_source_are_all_stored_one_after_another(
    admin: TestClient[Any],
) -> None:
    """Issue 28 D22: each racing upload used to start from the same base version, so all but one were
    refused as superseded (and, retrying, some never got in); in one process they now queue."""

    def upload(i: int) -> int:
        response = admin.post(
            "/v1/price-sheets",
            params={"source": "gamma", "format": "rental_csv"},
            content=sheet("gamma", 1.0 + i / 100),
            headers=AUTH,
        )
        return response.status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(upload, range(30)))
    assert statuses == [201] * 30
