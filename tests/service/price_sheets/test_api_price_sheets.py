"""Price-sheet uploads, versions, history and admin auth, through HTTP on a store of their own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

SHEET = """provider,instance_type,gpu,gpus_per_instance,interconnect,region,price_per_hour_usd,spot_price_per_hour_usd,billing_increment_s
acme,a.h100x8,H100 SXM,8,nvswitch,eu-1,20.0,8.0,1
acme,a.h100x1,H100 SXM,1,,eu-1,2.6,,
acme,a.l4,L4,1,,eu-1,0.5,,3600
"""
Client = TestClient[Any]


def upload(client: Client, body: str, fmt: str = "rental_csv", source: str = "acme", **params: str) -> Any:
    query = {"source": source, "format": fmt, **params}
    return client.post("/v1/price-sheets", params=query, content=body.encode(), headers=AUTH)


def test_upload_creates_a_version_and_replaces_only_that_sources_offers(admin: Client) -> None:
    before = admin.get("/v1/offers", params={"limit": 1}).json()["total"]
    response = upload(admin, SHEET)
    assert response.status_code == 201, response.text
    report = response.json()
    assert report["result"] == "ok" and report["version"] and report["accepted_rows"] == 3
    assert len(report["diff"]["added"]) == 3
    assert admin.get("/v1/offers", params={"limit": 1}).json()["total"] == before + 3
    offers = admin.get("/v1/offers", params={"provider": "acme"}).json()["items"]
    by_type = {o["instance_type"]: o for o in offers}
    assert (
        by_type["a.h100x8"]["interconnect"] == "nvswitch" and not by_type["a.h100x8"]["interconnect_derived"]
    )
    assert by_type["a.h100x1"]["interconnect"] == "none" and by_type["a.h100x1"]["interconnect_derived"]
    assert by_type["a.l4"]["billing_increment_s"] == 3600
    # a second version of the same source replaces its offers; the seed is untouched
    smaller = "\n".join(SHEET.splitlines()[:3]) + "\n"
    second = upload(admin, smaller).json()
    assert second["result"] == "ok" and second["diff"]["removed"] == [by_type["a.l4"]["offer_id"]]
    assert admin.get("/v1/offers", params={"provider": "acme"}).json()["total"] == 2
    assert admin.get("/v1/offers", params={"limit": 1}).json()["total"] == before + 2


def test_identical_content_creates_no_version(admin: Client) -> None:
    assert upload(admin, SHEET).status_code == 201
    again = upload(admin, SHEET)
    assert again.status_code == 200 and again.json()["result"] == "unchanged"
    versions = admin.get("/v1/price-sheets", params={"source": "acme"}).json()
    assert versions["total"] == 1 and versions["items"][0]["current"]


def test_a_sheet_with_any_error_is_rejected_whole_with_lines(admin: Client) -> None:
    bad = SHEET + "acme,a.x,Z9000,1,,eu-1,1.0,,\nacme,a.y,L4,1,,eu-1,-3,,\nacme,a.z,L4,one,,eu-1,1,,\n"
    response = upload(admin, bad)
    assert response.status_code == 422
    report = response.json()
    assert report["result"] == "rejected"
    assert [(p["line"], p["column"]) for p in report["problems"]] == [
        (5, "gpu"),
        (6, "price_per_hour_usd"),
        (7, "gpus_per_instance"),
    ]
    assert admin.get("/v1/offers", params={"provider": "acme"}).status_code == 400  # still no such provider


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("provider,instance_type\nacme,x\n", "missing required column"),
        ("", "the sheet is empty"),
        (SHEET + SHEET.splitlines()[1] + "\n", "duplicate"),
    ],
)
def test_structural_problems(admin: Client, body: str, reason: str) -> None:
    response = upload(admin, body)
    assert response.status_code == 422
    assert reason in json.dumps(response.json()["problems"])


def test_implausible_price_move_is_flagged(admin: Client) -> None:
    upload(admin, SHEET)
    report = upload(admin, SHEET.replace("20.0", "90.0")).json()
    assert report["result"] == "ok"
    assert any("a.h100x8" in w and "price_per_hour_usd" in w for w in report["warnings"])
    assert report["diff"]["changed"] == [
        {
            "offer_id": report["diff"]["changed"][0]["offer_id"],
            "field": "price_per_hour_usd",
            "old": 20.0,
            "new": 90.0,
            "provider": "acme",
            "instance_type": "a.h100x8",
            "region": "eu-1",
            "gpu": "h100-sxm",
        }
    ]
    version = admin.get(f"/v1/price-sheets/{report['version']}").json()
    assert version["report"]["warnings"] == report["warnings"] and version["source"] == "acme"


def test_offer_history_tracks_price_over_versions(admin: Client) -> None:
    upload(admin, SHEET)
    upload(admin, SHEET.replace("20.0", "24.0"))
    offer = admin.get("/v1/offers", params={"provider": "acme", "min_gpus": 8}).json()["items"][0]
    history = admin.get(f"/v1/offers/{offer['offer_id']}/history").json()
    assert [p["price_per_hour_usd"] for p in history["points"]] == [20.0, 24.0]
    assert history["in_current_catalog"] is True
    assert admin.get("/v1/offers/of-nope/history").status_code == 404


def test_json_and_cloud_catalog_formats(admin: Client) -> None:
    offers = [
        {
            "provider": "acme",
            "instance_type": "j1",
            "gpu": "A100-80GB",
            "gpus_per_instance": 1,
            "region": "r",
            "price_per_hour_usd": 1.5,
        }
    ]
    response = upload(admin, json.dumps({"offers": offers}), fmt="rental_json", source="acme-json")
    assert response.status_code == 422  # "A100-80GB" is ambiguous without a known provider rule
    offers[0]["gpu"] = "A100 80GB SXM"
    assert upload(admin, json.dumps(offers), fmt="rental_json", source="acme-json").status_code == 201
    vms = (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
        "gpu_1x_h100_sxm5,H100,1,26,225,\"{'Gpus': [{'Name': 'H100', 'MemoryInfo': {'SizeInMiB': 81920}}]}\",3.29,,us-east-1,us-east-1a\n"
        "gpu_1x_h100_sxm5,H100,1,26,225,,3.10,,us-east-1,us-east-1b\n"
        "cpu_only,,,4,16,,0.2,,us-east-1,us-east-1a\n"
    )
    missing = upload(admin, vms, fmt="cloud_catalog_csv", source="lambda-live")
    assert missing.status_code == 400 and missing.json()["field"] == "provider"
    report = upload(admin, vms, fmt="cloud_catalog_csv", source="lambda-live", provider="lambda").json()
    assert report["result"] == "ok" and report["accepted_rows"] == 1
    offer = admin.get("/v1/offers", params={"provider": "lambda", "max_price": 3.2}).json()["items"]
    assert any(o["instance_type"] == "gpu_1x_h100_sxm5" and o["price_per_hour_usd"] == 3.10 for o in offer)


def test_ownership_sheet(admin: Client) -> None:
    sheet = (
        "gpu,purchase_price_usd,price_date,source,notes\nH100 SXM,28000,2026-06,vendor quote,scope=gpu_only\n"
    )
    report = upload(admin, sheet, fmt="ownership_csv", source="quotes").json()
    assert report["kind"] == "ownership" and report["result"] == "ok"


def test_writes_need_the_admin_token(admin: Client) -> None:
    params = {"source": "acme", "format": "rental_csv"}
    missing = admin.post("/v1/price-sheets", params=params, content=SHEET.encode())
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = admin.post(
        "/v1/price-sheets", params=params, content=SHEET.encode(), headers={"Authorization": "Bearer x"}
    )
    assert wrong.status_code == 401


def test_without_a_configured_token_writes_are_refused(client: Client) -> None:
    response = client.post(
        "/v1/price-sheets",
        params={"source": "acme", "format": "rental_csv"},
        content=SHEET.encode(),
        headers=AUTH,
    )
    assert response.status_code == 403
    assert "GPUPLAN_ADMIN_TOKEN" in response.json()["detail"]


@pytest.mark.parametrize(("source", "field"), [("seed", "source"), ("Bad Name!", "source")])
def test_bad_source_names(admin: Client, source: str, field: str) -> None:
    response = upload(admin, SHEET, source=source)
    assert response.status_code == 400 and response.json()["field"] == field


def test_body_size_limit(admin: Client) -> None:
    from service.http import MAX_UPLOAD_BYTES

    big = SHEET + ("#" * 1000 + "\n") * (MAX_UPLOAD_BYTES // 1000 + 10)
    assert upload(admin, big).status_code == 413


def test_options_lists_every_method_of_a_path(client: Client) -> None:
    for path in ("/v1/price-sheets", "/v1/price-sheets/refresh"):
        response = client.options(path)
        assert response.status_code == 204
        assert response.headers["allow"] == "GET, OPTIONS, POST"
