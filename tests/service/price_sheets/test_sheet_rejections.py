"""A rejected upload is an RFC 9457 problem naming what is wrong, with every problem of every line;
out-of-range, implausible and malformed cells are 422s naming line and column, never 500s."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.service.admin import AUTH

Client = TestClient[Any]
HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd"
PROFILE_HEADER = (
    "model,gpu,tp,input_len_lo_excl,input_len_hi_incl,output_len_lo_excl,output_len_hi_incl,"
    "max_requests_per_s,source"
)


def upload(client: Client, body: bytes, fmt: str = "rental_csv") -> Any:
    params = {"source": "acme", "format": fmt}
    return client.post("/v1/price-sheets", params=params, content=body, headers=AUTH)


def rejected(response: Any) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem: dict[str, Any] = response.json()
    assert (
        problem["status"] == 422 and problem["title"] == "Sheet rejected" and problem["result"] == "rejected"
    )
    return problem


@pytest.mark.parametrize(
    ("row", "column", "reason"),
    [
        ("acme,a,L4,2147483648,eu,1", "gpus_per_instance", "must be at most 1,024"),
        ("acme,a,L4," + "9" * 5000 + ",eu,1", "gpus_per_instance", "must be at most 1,024"),
        ("acme,a,L4,1,eu,1e308", "price_per_hour_usd", "must be at most 10,000"),
        ("acme,a,L4,1,eu,inf", "price_per_hour_usd", "must be a positive number"),
        ("acme,a\x00b,L4,1,eu,1", "instance_type", "contains the control character U+0000"),
    ],
)
def test_implausible_cells_are_422_naming_line_and_column(
    admin: Client, row: str, column: str, reason: str
) -> None:
    problem = rejected(upload(admin, f"{HEADER}\n{row}\n".encode()))
    (found,) = problem["problems"]
    assert (found["line"], found["column"]) == (2, column) and found["reason"].startswith(reason)
    assert f"line 2, column {column}: {reason}" in problem["detail"]


def test_json_sheets_need_numbers_and_bounded_integers(admin: Client) -> None:
    row = {"provider": "acme", "instance_type": "a", "gpu": "L4", "region": "eu", "price_per_hour_usd": "1"}
    body = json.dumps([row | {"gpus_per_instance": 1}]).encode().replace(b"1}", b"9" * 5000 + b"}")
    problem = rejected(upload(admin, body, "rental_json"))
    assert {(p["line"], p["column"]) for p in problem["problems"]} == {
        (1, "gpus_per_instance"),
        (1, "price_per_hour_usd"),  # "1" is a string where a number belongs
    }


def test_a_json_network_rate_must_be_a_json_number(admin: Client) -> None:
    row = {
        "provider": "acme",
        "instance_type": "a",
        "gpu": "L4",
        "gpus_per_instance": 1,
        "region": "eu",
        "price_per_hour_usd": 1.0,
        "network_class": "ethernet",
    }
    problem = rejected(
        upload(admin, json.dumps([row, row | {"network_gbps": "100"}]).encode(), "rental_json")
    )
    (found,) = problem["problems"]
    assert (found["line"], found["column"], found["value"]) == (2, "network_gbps", "100")
    assert found["reason"] == "a JSON number is expected, not the string '100'"


def test_every_problem_of_a_line_is_reported(admin: Client) -> None:
    problem = rejected(upload(admin, f"{HEADER}\nacme,a,Z9000,x,eu,-1\n".encode()))
    assert [(p["line"], p["column"]) for p in problem["problems"]] == [
        (2, "gpus_per_instance"),
        (2, "price_per_hour_usd"),
        (2, "gpu"),
    ]
    assert problem["detail"].startswith("acme.csv: 3 problem(s) on 1 line(s)")


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"", "acme.csv: the sheet is empty"),
        (b"\xffprovider\n", "acme.csv: not UTF-8 text"),
        (HEADER.encode() + b"\n", "acme.csv: the sheet has a header but no rows"),
        (
            f"{HEADER}acme,a,L4,1,eu,1".encode(),
            "acme.csv: the sheet has a header but no rows; the body has no line breaks: `curl -d`",
        ),
        (f"{HEADER},gpu\nacme,a,L4,1,eu,1,H100\n".encode(), "acme.csv: the header names a column twice: gpu"),
    ],
)
def test_whole_sheet_rejections_say_what_is_wrong(admin: Client, body: bytes, detail: str) -> None:
    problem = rejected(upload(admin, body))
    assert problem["detail"].startswith(detail) and problem["problems"][0]["line"] == 0


def test_the_schema_says_a_rejection_is_a_problem(admin: Client) -> None:
    document = admin.get("/schema/openapi.json").json()
    for path in ("/v1/price-sheets", "/v1/profiles"):
        answer = document["paths"][path]["post"]["responses"]["422"]["content"]
        (media_type,) = answer
        ref = answer[media_type]["schema"]["$ref"].rsplit("/", 1)[1]
        properties = document["components"]["schemas"][ref]["properties"]
        assert media_type == "application/problem+json" and {"detail", "problems", "status"} <= set(
            properties
        )


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("Llama 3.1 8B,L4,1,0,1e300,0,128,3,me", "input_len_hi_incl"),
        ("Llama 3.1 8B,L4,2147483648,0,128,0,128,3,me", "tp"),
        ("Llama 3.1 8B,L4,1,0,128,0," + "9" * 5000 + ",3,me", "output_len_hi_incl"),
    ],
)
def test_profile_integers_out_of_range_are_422(admin: Client, row: str, column: str) -> None:
    params = {"source": "me", "format": "csv"}
    response = admin.post(
        "/v1/profiles", params=params, content=f"{PROFILE_HEADER}\n{row}\n".encode(), headers=AUTH
    )
    problem = rejected(response)
    assert [(p["line"], p["column"]) for p in problem["problems"]] == [(2, column)]
    assert "must be at most" in problem["problems"][0]["reason"]


@pytest.mark.parametrize(
    ("fmt", "body", "column"),
    [
        ("rental_csv", f"{HEADER},spot_price_per_hr_usd\nacme,a,L4,1,eu,1,0.5\n", "spot_price_per_hr_usd"),
        (
            "rental_json",
            json.dumps(
                [
                    {
                        "provider": "acme",
                        "instance_type": "a",
                        "gpu": "L4",
                        "gpus_per_instance": 1,
                        "region": "eu",
                        "price_per_hour_usd": 1,
                        "Region": "x",
                    }
                ]
            ),
            "Region",
        ),
        ("ownership_csv", "gpu,purchase_price_usd,source,price_dat\nL4,2500,me,2024-01\n", "price_dat"),
        (
            "provider_costs_csv",
            "provider,provider_class,source,egress_usd_per_gib\nacme,neocloud,me,0.1\n",
            "egress_usd_per_gib",
        ),
    ],
)
def test_an_unknown_column_is_a_422_naming_it(admin: Client, fmt: str, body: str, column: str) -> None:
    problem = rejected(upload(admin, body.encode(), fmt))
    (found,) = problem["problems"]
    assert found["line"] == 0 and found["column"] == column and repr(column) in found["reason"]


def test_a_cloud_catalog_column_left_unread_is_a_warning(admin: Client) -> None:
    body = b"InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,Generation\ng2,L4,1,0.7,0,us,2\n"
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "skyext", "format": "cloud_catalog_csv", "provider": "skyext"},
        content=body,
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    assert any("'Generation'" in w for w in response.json()["warnings"])


def test_cost_rows_for_a_provider_nobody_offers_are_a_warning(admin: Client) -> None:
    body = b"provider,provider_class,storage_usd_per_gb_month,source\nnosuchcloud,neocloud,0.1,me\naws,hyperscaler,0.1,me\n"
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "costs", "format": "provider_costs_csv"},
        content=body,
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    (warning,) = response.json()["warnings"]
    assert "nosuchcloud" in warning and "aws" not in warning


def test_a_profile_tp_beyond_64_and_an_unknown_profile_column_are_422(admin: Client) -> None:
    params = {"source": "me", "format": "csv"}
    big = f"{PROFILE_HEADER}\nLlama 3.1 8B,L4,1000000,0,128,0,128,3,me\n".encode()
    problem = rejected(admin.post("/v1/profiles", params=params, content=big, headers=AUTH))
    assert [(p["line"], p["column"]) for p in problem["problems"]] == [(2, "tp")]
    assert problem["problems"][0]["reason"].startswith("must be at most 64")
    misspelt = f"{PROFILE_HEADER},max_request_per_s\nLlama 3.1 8B,L4,1,0,128,0,128,3,me,4\n".encode()
    problem = rejected(admin.post("/v1/profiles", params=params, content=misspelt, headers=AUTH))
    assert [(p["line"], p["column"]) for p in problem["problems"]] == [(0, "max_request_per_s")]
