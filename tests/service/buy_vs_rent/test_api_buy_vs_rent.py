from __future__ import annotations

import csv
import io
import itertools
import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from pricing.ownership.tco import OwnershipInputs
from service.buy_vs_rent.formats import (
    ASSUMPTIONS_HEADER,
    CSV_COLUMNS,
    SUMMARY_HEADER,
    safe_cell,
    write_csv_rows,
)

URL = "/v1/buy-vs-rent"
OWN_INPUTS = OwnershipInputs.__struct_fields__
Client = TestClient  # type: ignore[type-arg]


def body(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"gpu": "H100 SXM", "gpu_count": 8, "horizon_months": 36, "utilization": 0.7}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def post(client: Client, payload: dict[str, Any], path: str = URL, **kwargs: Any) -> Any:
    return client.post(path, json=payload, **kwargs)


def assert_bad(client: Client, payload: dict[str, Any], field: str, path: str = URL) -> dict[str, Any]:
    response = post(client, payload, path)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem: dict[str, Any] = response.json()
    assert problem["field"] == field, problem
    assert field in problem["detail"]
    return problem


def test_json_answer_with_defaults_and_their_sources(client: Client) -> None:
    response = post(client, body())
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["gpu_id"] == "h100-sxm" and answer["gpu_count"] == 8
    assert answer["rent_billing"] == "per_busy_hour"
    assert answer["utilization"] == pytest.approx(0.7)
    assert len(answer["monthly"]) == 37 and answer["monthly"][0]["own_capital_usd"] > 0
    last = answer["monthly"][-1]
    assert last["cumulative_own_usd"] == pytest.approx(answer["total_own_usd"])
    assert last["cumulative_rent_usd"] == pytest.approx(answer["total_rent_usd"])
    assert answer["recommendation"]["choice"] in ("own", "rent")
    assert answer["recommendation"]["reason"]
    by_name = {a["name"]: a for a in answer["assumptions"]}
    for name in OWN_INPUTS:
        assumption = by_name[name]
        assert assumption["source"] in ("ownership_sheet", "default"), name
        assert assumption["citation"], name
        if assumption["source"] == "ownership_sheet":
            assert assumption["sheet_version"] in answer["ownership_sheet_versions"], name
    assert by_name["discount_rate"]["value"] == 0.07
    rent = by_name["rent_usd_per_gpu_hour"]
    assert rent["source"] == "rental_sheet" and answer["rent_offer"]["offer_id"] in rent["citation"]
    offer = answer["rent_offer"]
    assert answer["rent_usd_per_gpu_hour"] == pytest.approx(
        offer["on_demand_usd_per_hour"] / offer["gpus_per_instance"]
    )
    assert {"capital_usd_per_gpu", "fixed_usd_per_gpu_hour", "monthly_discount_rate"} <= set(by_name)


def test_rent_is_the_cheapest_current_offer(client: Client) -> None:
    answer = post(client, body()).json()
    offers = client.get("/v1/offers", params={"gpu": "h100-sxm", "limit": 1}).json()["items"]
    assert answer["rent_usd_per_gpu_hour"] == pytest.approx(offers[0]["price_per_gpu_hour_usd"])


def test_request_values_override_defaults(client: Client) -> None:
    own = {"purchase_price_usd_per_gpu": 25_000, "server_overhead_factor": 1.4, "discount_rate": 0}
    answer = post(client, body(own=own, rent={"usd_per_gpu_hour": 2.49})).json()
    by_name = {a["name"]: a for a in answer["assumptions"]}
    assert by_name["purchase_price_usd_per_gpu"] == {
        "name": "purchase_price_usd_per_gpu",
        "value": 25_000,
        "unit": "USD per GPU",
        "source": "request",
        "citation": "request",
        "sheet_version": None,
        "confidence": None,
    }
    assert by_name["rent_usd_per_gpu_hour"]["source"] == "request" and answer["rent_offer"] is None
    assert answer["npv_own_usd"] == pytest.approx(answer["total_own_usd"])  # no discounting
    assert answer["monthly"][0]["own_capital_usd"] == pytest.approx(8 * 25_000 * 1.4)


def test_commitment_reserves_every_hour_with_the_providers_discount(client: Client) -> None:
    answer = post(client, body(rent={"commitment": "3y"})).json()
    assert answer["rent_billing"] == "reserved"
    by_name = {a["name"]: a for a in answer["assumptions"]}
    discount = by_name["commitment_discount_3y"]
    assert 0 < discount["value"] < 1 and discount["citation"]
    offer = answer["rent_offer"]
    assert answer["rent_usd_per_gpu_hour"] == pytest.approx(
        offer["on_demand_usd_per_gpu_hour"] * (1 - discount["value"])
    )
    assert answer["monthly"][5]["rent_usd"] == pytest.approx(8 * 730 * answer["rent_usd_per_gpu_hour"])
    assert answer["rent_usd_per_busy_gpu_hour"] == pytest.approx(answer["rent_usd_per_gpu_hour"] / 0.7)


def test_sensitivity_grid_and_tornado(client: Client) -> None:
    answer = post(client, body()).json()
    sensitivity = answer["sensitivity"]
    assert sensitivity["base_own_advantage_usd"] == pytest.approx(
        answer["npv_rent_usd"] - answer["npv_own_usd"]
    )
    assert len(sensitivity["grid"]) == 50
    swings = [bar["swing_usd"] for bar in sensitivity["tornado"]]
    assert swings == sorted(swings, reverse=True) and len(swings) == 14
    assert {bar["input"] for bar in sensitivity["tornado"]} >= {"utilization", "rent_usd_per_gpu_hour", "pue"}


def test_demand_profile_gets_a_hybrid(client: Client) -> None:
    profile = [5 * 730, 5 * 730, 5 * 730, 9 * 730, 5 * 730, 12 * 730]
    payload = body(gpu_count=None, utilization=None, monthly_demand_gpu_hours=profile, horizon_months=24)
    payload["rent"] = {"usd_per_gpu_hour": 4.0}
    response = post(client, payload)
    assert response.status_code == 200, response.text
    answer = response.json()
    hybrid = answer["hybrid"]
    assert answer["gpu_count"] == hybrid["peak_gpus"] == 12
    assert hybrid["npv_hybrid_usd"] <= min(hybrid["npv_all_own_usd"], hybrid["npv_all_rent_usd"]) + 1e-6
    assert hybrid["owned_gpu_hours"] + hybrid["rented_gpu_hours"] == pytest.approx(4 * sum(profile))
    assert hybrid["solver"]["status"] == "optimal"
    assert answer["npv_own_usd"] == pytest.approx(hybrid["npv_all_own_usd"])
    assert answer["monthly"][-1]["cumulative_hybrid_usd"] == pytest.approx(hybrid["total_hybrid_usd"])
    # the profile repeats to fill the horizon
    assert answer["monthly"][7]["rent_usd"] == pytest.approx(answer["monthly"][1]["rent_usd"])
    by_name = {a["name"]: a for a in answer["assumptions"]}
    assert by_name["gpu_count"]["source"] == "derived"


def test_csv_is_the_monthly_schedule_and_spreadsheet_safe(client: Client) -> None:
    for response in (
        post(client, body(), f"{URL}?format=csv"),
        post(client, body(), headers={"Accept": "text/csv"}),
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        assert "attachment" in response.headers["content-disposition"]
        every = list(csv.reader(io.StringIO(response.text)))
        rows, summary, assumptions = _sections(every)
        assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 38
        hybrid = (CSV_COLUMNS.index("hybrid_usd"), CSV_COLUMNS.index("cumulative_hybrid_usd"))
        for row in rows[1:]:
            assert [float(cell) for i, cell in enumerate(row) if i not in hybrid]  # numbers as numbers
            assert [row[i] for i in hybrid] == ["", ""]
        for cell in (c for row in every for c in row):
            if cell and cell[0] in "=+-@\t\r":
                float(cell)  # only a (negative) number may start like a formula
    answer = post(client, body()).json()
    assert float(rows[-1][6]) == pytest.approx(answer["total_own_usd"], abs=0.01)
    values = dict((r[0], r[1]) for r in summary[1:])
    assert (
        tuple(summary[0]) == SUMMARY_HEADER and values["recommendation"] == answer["recommendation"]["choice"]
    )
    assert float(values["npv_own_usd"]) == pytest.approx(answer["npv_own_usd"], abs=0.01)
    assert tuple(assumptions[0]) == ASSUMPTIONS_HEADER
    assert {r[0] for r in assumptions[1:]} == {a["name"] for a in answer["assumptions"]}


def _sections(rows: list[list[str]]) -> list[list[list[str]]]:
    """The CSV's sections: runs of rows between empty lines."""
    sections: list[list[list[str]]] = [[]]
    for row in rows:
        if row:
            sections[-1].append(row)
        else:
            sections.append([])
    return sections


@pytest.mark.parametrize("text", ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\t=1", "\r=1", '=HYPERLINK("x")'])
def test_formula_like_text_is_neutralised(text: str) -> None:
    assert safe_cell(text) == "'" + text
    row = next(csv.reader(io.StringIO(write_csv_rows([[text, -3.5, 7]]))))
    assert row == ["'" + text, "-3.5", "7"]
    assert safe_cell("plain") == "plain" and safe_cell(-1.25) == -1.25 and safe_cell(None) == ""


def test_present_values_book_value_payback_and_irr_in_json_and_csv(client: Client) -> None:
    paying = body(horizon_months=60, utilization=0.9, rent={"usd_per_gpu_hour": 3.0})
    answer = post(client, paying).json()
    assert answer["payback_month"] == answer["break_even_month"] is not None
    assert answer["discounted_payback_month"] >= answer["payback_month"]
    assert answer["irr_annual"] > 0
    monthly = answer["monthly"]
    assert monthly[-1]["cumulative_pv_own_usd"] == pytest.approx(answer["npv_own_usd"])
    assert monthly[-1]["cumulative_pv_rent_usd"] == pytest.approx(answer["npv_rent_usd"])
    assert monthly[0]["book_value_usd"] == pytest.approx(monthly[0]["own_capital_usd"])
    assert all(a["book_value_usd"] > b["book_value_usd"] for a, b in itertools.pairwise(monthly))
    text = post(client, paying, f"{URL}?format=csv").text
    rows = list(csv.DictReader(io.StringIO(text.split("\r\n\r\n")[0])))
    summary = dict(r for r in csv.reader(io.StringIO(text.split("\r\n\r\n")[1])))
    assert float(summary["irr_annual"]) == pytest.approx(answer["irr_annual"])
    assert int(summary["payback_month"]) == answer["payback_month"]
    assert float(rows[12]["book_value_usd"]) == pytest.approx(monthly[12]["book_value_usd"], abs=0.01)
    assert float(rows[12]["pv_rent_usd"]) == pytest.approx(monthly[12]["pv_rent_usd"], abs=0.01)
    never = post(client, body(rent={"usd_per_gpu_hour": 0.3})).json()
    assert never["payback_month"] is None and never["discounted_payback_month"] is None


def test_the_chart_has_dollar_axes_named_series_the_terminal_value_and_present_values(client: Client) -> None:
    chart = post(client, body(horizon_months=48, utilization=0.9, rent={"usd_per_gpu_hour": 3.0}),
                 f"{URL}?format=svg").content.decode()  # fmt: skip
    for text in ("$200,000", "buy 8 × H100 SXM", "rent 8 × H100 SXM", "present value", "break-even: month",
                 "remaining value of the owned GPUs credited"):  # fmt: skip
        assert text in chart, text


def test_svg_chart_is_xml_and_deterministic(client: Client) -> None:
    first = post(client, body(), f"{URL}?format=svg")
    assert first.status_code == 200 and first.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(first.content)
    assert root.tag.endswith("svg")
    assert b"<dc:date>" not in first.content
    second = post(client, body(), headers={"Accept": "image/svg+xml"})
    assert second.content == first.content
    profile = body(
        gpu_count=None, utilization=None, monthly_demand_gpu_hours=[730.0, 2190.0], horizon_months=12
    )
    hybrid = post(client, profile, f"{URL}?format=svg")
    assert hybrid.status_code == 200 and b"hybrid" in hybrid.content


def test_format_wins_over_accept_and_json_is_the_default(client: Client) -> None:
    response = post(client, body(), f"{URL}?format=json", headers={"Accept": "text/csv"})
    assert response.headers["content-type"].startswith("application/json")
    assert (
        post(client, body(), headers={"Accept": "*/*"}).headers["content-type"].startswith("application/json")
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"utilization": 0}, "utilization"),
        ({"utilization": 1.2}, "utilization"),
        ({"own": {"purchase_price_usd_per_gpu": -1}}, "own.purchase_price_usd_per_gpu"),
        ({"own": {"electricity_usd_per_kwh": -0.1}}, "own.electricity_usd_per_kwh"),
        ({"rent": {"usd_per_gpu_hour": -2}}, "rent.usd_per_gpu_hour"),
        ({"own": {"useful_life_years": 0}}, "own.useful_life_years"),
        ({"horizon_months": 241}, "horizon_months"),
        ({"horizon_months": 0}, "horizon_months"),
        ({"gpu_count": 0}, "gpu_count"),
        ({"rent": {"commitment": "5y"}}, "rent.commitment"),
        ({"own": {"pue": 0.9}}, "own.pue"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_values_are_400s_naming_the_field(client: Client, changes: dict[str, Any], field: str) -> None:
    assert_bad(client, body(**changes), field)


def test_cross_field_rules_are_400s_naming_the_field(client: Client) -> None:
    assert_bad(client, body(monthly_demand_gpu_hours=[100.0]), "utilization")
    assert_bad(client, body(utilization=None), "utilization")
    assert_bad(client, body(gpu_count=None), "gpu_count")
    profile = body(utilization=None, gpu_count=1, monthly_demand_gpu_hours=[2000.0])
    assert_bad(client, profile, "gpu_count")
    assert_bad(
        client,
        {**profile, "gpu_count": 3, "horizon_months": 1, "monthly_demand_gpu_hours": [1.0, 2.0]},
        "monthly_demand_gpu_hours",
    )
    assert_bad(
        client,
        {**profile, "gpu_count": 3, "monthly_demand_gpu_hours": [0.0, 0.5]},
        "monthly_demand_gpu_hours",
    )
    assert_bad(client, body(), "format", f"{URL}?format=xml")
    assert_bad(client, body(), "fmt", f"{URL}?fmt=csv")
    assert_bad(client, body(), "query", f"{URL}?=null")


def test_gpu_must_name_one_known_gpu(client: Client) -> None:
    ambiguous = assert_bad(client, body(gpu="H100"), "gpu")
    assert {"H100 SXM", "H100 PCIe"} <= set(ambiguous["suggestions"])
    assert_bad(client, body(gpu="H1000 SXM"), "gpu")


def test_gpu_without_a_purchase_price_asks_for_one(client: Client) -> None:
    problem = assert_bad(client, body(gpu="A10G"), "own.purchase_price_usd_per_gpu")
    assert "no purchase price" in problem["detail"]
    priced = post(client, body(gpu="A10G", own={"purchase_price_usd_per_gpu": 3000}))
    assert priced.status_code == 200, priced.text
    power = {a["name"]: a for a in priced.json()["assumptions"]}["power_kw_per_gpu"]
    assert "TDP" in power["citation"]


def test_openapi_documents_the_three_representations(client: Client) -> None:
    operation = client.get("/schema/openapi.json").json()["paths"][URL]["post"]
    assert set(operation["responses"]["200"]["content"]) == {"application/json", "text/csv", "image/svg+xml"}
    assert {"400", "422"} <= set(operation["responses"])
    fmt = next(p for p in operation["parameters"] if p["name"] == "format")
    assert "csv" in str(fmt["schema"])


def test_numbers_are_finite_at_the_extremes(client: Client) -> None:
    extreme = body(
        utilization=1e-6,
        gpu_count=100_000,
        horizon_months=240,
        own={"purchase_price_usd_per_gpu": 1e8, "discount_rate": 1, "useful_life_years": 30},
    )
    response = post(client, extreme)
    assert response.status_code == 200, response.text
    answer = response.json()
    for key in ("owned_usd_per_busy_gpu_hour", "npv_own_usd", "npv_rent_usd", "total_own_usd"):
        assert math.isfinite(answer[key]), key


def _finite_numbers(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_numbers(v) for v in value)
    return True


_fraction = st.floats(0, 1)
_own = st.fixed_dictionaries(
    {},
    optional={
        "purchase_price_usd_per_gpu": st.floats(1e-3, 1e8),
        "server_overhead_factor": st.floats(1, 10),
        "useful_life_years": st.floats(0.01, 30),
        "residual_fraction": _fraction,
        "power_kw_per_gpu": st.floats(1e-3, 100),
        "load_fraction": _fraction,
        "idle_power_fraction": _fraction,
        "pue": st.floats(1, 5),
        "electricity_usd_per_kwh": st.floats(0, 10),
        "colocation_usd_per_kw_month": st.floats(0, 100_000),
        "maintenance_fraction_per_year": _fraction,
        "discount_rate": _fraction,
    },
)
_bodies = st.fixed_dictionaries(
    {
        "gpu": st.sampled_from(["h100-sxm", "A100 80GB SXM", "rtx-4090", "MI300X", "L4", "B200"]),
        "horizon_months": st.integers(1, 240),
        "own": _own,
        "rent": st.fixed_dictionaries(
            {"commitment": st.sampled_from(["on_demand", "1y", "3y"])},
            optional={"usd_per_gpu_hour": st.floats(1e-3, 10_000)},
        ),
    }
).flatmap(
    lambda b: st.one_of(
        st.fixed_dictionaries({"utilization": st.floats(1e-6, 1), "gpu_count": st.integers(1, 100_000)}),
        st.fixed_dictionaries(
            {
                "monthly_demand_gpu_hours": st.lists(
                    st.floats(0, 1e6), min_size=1, max_size=b["horizon_months"]
                )
            }
        ),
    ).map(lambda mode: {**b, **mode})
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=_bodies)
def test_any_valid_body_for_a_real_gpu_answers_or_names_the_field(
    client: Client, payload: dict[str, Any]
) -> None:
    response = post(client, payload)
    assert response.status_code in (200, 400), response.text
    if response.status_code == 400:
        assert response.json()["field"]
        return
    answer = response.json()
    assert _finite_numbers(answer)
    assert len(answer["monthly"]) == payload["horizon_months"] + 1
