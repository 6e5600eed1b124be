"""GET /v1/providers and ``gpuplan prices providers``: every provider's costs beyond the hour, as plans charge them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from service.cli import main

Client = TestClient[Any]


def test_every_provider_of_the_offers_and_owned_gpus_is_listed_with_its_origins(client: Client) -> None:
    response = client.get("/v1/providers")
    assert response.status_code == 200, response.text
    page = response.json()
    by_name = {p["provider"]: p for p in page["items"]}
    offers = client.get("/v1/offers", params={"limit": 1000}).json()
    assert {o["provider"] for o in offers["items"]} | {"owned"} == set(by_name)
    aws, vast = by_name["aws"], by_name["vast"]
    assert aws["provider_class"] == "hyperscaler" and aws["values"]["egress_usd_per_gb"] == 0.09
    assert aws["origins"]["egress_usd_per_gb"] == "aws's published figure"
    assert (
        vast["provider_class"] == "marketplace"
        and vast["origins"]["storage_usd_per_gb_month"] == "marketplace default"
    )
    assert by_name["owned"]["values"]["preemptions_per_hour"] == 0
    assert all(
        set(p["values"]) == set(page["figures"]) == set(p["origins"]) and p["citation"] for p in page["items"]
    )
    only = client.get("/v1/providers", params={"provider_class": "hyperscaler"}).json()
    assert {p["provider"] for p in only["items"]} == {"aws", "azure", "gcp", "oci"}
    assert client.get("/v1/providers", params={"provider_class": "cloud"}).status_code == 400


def test_the_cli_lists_them_and_marks_published_figures(
    cli_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prices", "providers", "--db", cli_db]) == 0
    out = capsys.readouterr().out
    aws = next(line for line in out.splitlines() if line.startswith("aws "))
    assert "hyperscaler" in aws and "0.09*" in aws
    assert main(["prices", "providers", "--db", cli_db, "--class", "owned", "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert [p["provider"] for p in page["items"]] == ["owned"]
