"""The web pages in a real browser: the buy-vs-rent form gives the API's answer, a shared URL reopens
it, the chart loads, no console errors, usable at 1,280 px and at a phone's width; screenshots kept."""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.service.admin import TOKEN
from tests.service.web.conftest import ARTIFACTS

PAYING = {"gpu": "H100 SXM", "gpu_count": 8, "utilization": 0.9, "horizon_months": 60}


def test_the_home_page_lists_the_catalog_and_its_sources(server: str, tab: tuple[Any, list[str]]) -> None:
    page, errors = tab
    page.goto(f"{server}/")
    assert page.locator("h1").inner_text() == "What gpuplan knows"
    assert "seed" in page.locator("table").inner_text()
    page.get_by_role("link", name="Buy vs rent").first.click()
    page.wait_for_url(f"{server}/buy-vs-rent")
    assert errors == []


def test_filling_the_buy_vs_rent_form_gives_the_apis_break_even(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    page.goto(f"{server}/buy-vs-rent")
    page.get_by_label("GPU", exact=True).select_option("H100 SXM")
    page.get_by_label("GPUs").fill("8")
    page.get_by_label("Utilisation").fill("0.9")
    page.get_by_label("Horizon").fill("60")
    page.get_by_label("Rent, $ per GPU-hour").fill("3")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_selector("#break-even-month")
    api = httpx.post(f"{server}/v1/buy-vs-rent", json={**PAYING, "rent": {"usd_per_gpu_hour": 3.0}}).json()
    assert page.locator("#break-even-month").inner_text() == f"month {api['break_even_month']}"
    assert page.locator("#irr").inner_text() == f"{api['irr_annual']:.1%}"
    assert "rent_usd_per_gpu_hour=3" in page.url and "gpu=H100+SXM" in page.url  # the inputs are in the URL
    chart = page.locator("figure img")
    chart.scroll_into_view_if_needed()
    expect(chart).to_have_js_property("complete", True)  # no wait_for_function: the page's CSP forbids eval
    assert chart.evaluate("img => img.naturalWidth") > 0
    assert re.search(r"\$\d{1,3}(,\d{3})+", page.locator(".cards").inner_text())  # dollars with separators
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "buy-vs-rent.png"), full_page=False)
    assert errors == []


def test_a_shared_url_reopens_the_answer_and_bad_input_names_its_field(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(f"{server}/buy-vs-rent?gpu=H100%20SXM&gpu_count=8&utilization=0.7&horizon_months=60")
    assert page.locator("#verdict").inner_text().startswith("RENT")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, "no horizontal scrolling of the page itself on a phone"
    page.screenshot(path=str(ARTIFACTS / "buy-vs-rent-phone.png"), full_page=False)
    response = page.goto(f"{server}/buy-vs-rent?gpu=H100%20SXM&gpu_count=8&utilization=7&horizon_months=60")
    assert response is not None and response.status == 200  # the form again, with the error
    assert page.get_by_role("alert").inner_text().startswith("utilization")
    assert page.get_by_label("Utilisation").get_attribute("aria-invalid") == "true"
    assert errors == []


def test_a_plan_url_runs_the_plan_and_shows_the_choice_and_the_pareto_chart(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    query = "model=Llama%203.1%208B&kind=fine_tune&method=lora&tokens=2000000000&seq_len=2048&batch_size=4"
    page.goto(f"{server}/plan?{query}")
    choice = page.locator("#choice").inner_text()
    chart = page.locator("svg.chart")  # inline: the plan is not stored yet
    chart.scroll_into_view_if_needed()
    assert chart.locator("g.point").count() > 0 and chart.bounding_box()["width"] > 0
    with page.expect_navigation():
        page.get_by_role("button", name="Save this plan").click()  # a GET stores nothing; Save does
    link = page.url.removeprefix(server)
    assert link.startswith("/plans/pl-")
    stored = httpx.get(f"{server}/v1{link}").json()
    assert f"{stored['choice']['gpu_count']} × {stored['choice']['gpu_name']}" in choice
    layout = stored["choice"]["layout"]
    assert f"Layout: tp {layout['tp']}, pp {layout['pp']}" in choice  # the plan page shows the layout
    assert page.locator("#total-cost").inner_text() == f"${stored['cost']['total_usd']:,.2f}"
    chart = page.locator("svg.chart")
    chart.scroll_into_view_if_needed()
    assert chart.locator("g.point").count() == len(stored["pareto"])
    assert page.get_by_role("heading", name="GPUs that cannot be used").is_visible()
    page.screenshot(path=str(ARTIFACTS / "plan.png"), full_page=False)
    page.goto(f"{server}{link}")  # the stored plan reopens as it was made
    assert page.locator("#total-cost").inner_text() == f"${stored['cost']['total_usd']:,.2f}"
    assert errors == []


def test_a_plan_with_a_bad_model_names_the_field_and_suggests(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    page.goto(f"{server}/plan")
    page.locator("#model").fill("Lama 3 8B")
    page.locator("#tokens").fill("1000000")
    page.get_by_role("button", name="Plan").click()
    alert = page.get_by_role("alert").inner_text()
    assert alert.startswith("model") and "did you mean" in alert
    assert page.locator("#model").get_attribute("aria-invalid") == "true"
    assert errors == []


def test_the_serving_form_sizes_the_fleet_the_api_sizes(server: str, tab: tuple[Any, list[str]]) -> None:
    page, errors = tab
    page.goto(f"{server}/serving")
    page.locator("#model").fill("Llama-2-7b")
    page.get_by_label("Requests per second").fill("20")
    for row, (prompt, output, share) in enumerate(((20, 20, 0.5), (800, 1500, 0.5))):
        page.get_by_label(f"row {row + 1} input tokens").fill(str(prompt))
        page.get_by_label(f"row {row + 1} output tokens").fill(str(output))
        page.get_by_label(f"row {row + 1} share").fill(str(share))
    page.get_by_role("button", name="Size the fleet").click()
    body = {
        "kind": "serving", "model": {"name": "Llama-2-7b"}, "requests_per_s": 20,
        "request_mix": [{"input_tokens": 20, "output_tokens": 20, "share": 0.5},
                        {"input_tokens": 800, "output_tokens": 1500, "share": 0.5}],
    }  # fmt: skip
    api = httpx.post(f"{server}/v1/plans", json=body).json()
    assert page.locator("#fleet-cost strong").inner_text() == f"${api['cost']['usd_per_hour']:,.2f} an hour"
    assert page.locator("table").last.locator("tbody tr").count() == len(api["choice"]["replicas"])
    page.get_by_label("row 1 share").fill("0.7")
    page.get_by_role("button", name="Size the fleet").click()
    assert "shares must sum to 1" in page.get_by_role("alert").inner_text()
    assert errors == []


def test_the_stored_serving_plan_shows_each_replica_type_in_full(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    """Before: the stored serving plan page showed GPU, tp and replicas only."""
    page, errors = tab
    body = {
        "kind": "serving", "model": {"name": "Llama-2-7b"}, "requests_per_s": 5,
        "slo": {"ttft_ms": 500, "tpot_ms": 50}, "survive_instance_loss": True,
        "request_mix": [{"input_tokens": 500, "output_tokens": 200, "share": 1}],
    }  # fmt: skip
    plan = httpx.post(f"{server}/v1/plans", json=body, timeout=120).json()  # the first plan simulates
    page.goto(f"{server}/plans/{plan['plan_id']}")
    why = page.locator("#fleet-why").inner_text()
    assert why.startswith(f"{plan['choice']['gpus']} GPU") and plan["choice"]["why"] in why
    rows = page.locator("table").last.locator("tbody tr")
    assert rows.count() == len(plan["choice"]["replicas"])
    for i, replica in enumerate(plan["choice"]["replicas"]):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[1] == replica["precision"] and cells[4] == str(replica["instances"])
        assert cells[5] == str(replica["gpus"]) and f"({replica['offer']['region']})" in cells[6]
        p90 = replica["latency"]["ttft_ms"]["p90"]
        assert cells[10].startswith("TTFT ") and f"{p90:,.0f}" in cells[10] and "TPOT" in cells[10]
    assert errors == []


SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd
webco,w.h100x8,H100 SXM,8,eu-1,{price}
webco,w.l4,L4,1,eu-1,0.5
"""


def _upload(page: Any, price: str) -> str:
    page.locator("#upload-source").fill("webco")
    page.locator("#upload-format").select_option("rental_csv")
    page.locator("#upload-file").set_input_files(
        files=[{"name": "webco.csv", "mimeType": "text/csv", "buffer": SHEET.format(price=price).encode()}]
    )
    page.locator("#upload-token").fill(TOKEN)
    page.get_by_role("button", name="Upload").click()
    status = page.get_by_role("status")
    status.get_by_text("stored").wait_for()
    return str(status.inner_text())


def test_an_uploaded_sheet_appears_in_the_list_and_the_diff_shows_its_price_change(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    page.goto(f"{server}/price-sheets")
    first = int(re.findall(r"Version (\d+)", _upload(page, "20.0"))[0])
    second = int(re.findall(r"Version (\d+)", _upload(page, "18.5"))[0])
    page.reload()
    versions = page.locator("#versions").inner_text()
    assert re.search(rf"{second}\s+webco\s+rental", versions)
    page.locator("#from").select_option(str(first))
    page.locator("#to").select_option(str(second))
    page.get_by_role("button", name="Show the diff").click()
    assert "1 price changes" in page.locator("#diff-heading").inner_text()
    diff = page.locator("#diff").inner_text()
    assert "w.h100x8" in diff and "h100-sxm" in diff and "$20.00 → $18.50/h" in diff
    page.screenshot(path=str(ARTIFACTS / "price-sheets.png"), full_page=False)
    assert TOKEN not in page.content()  # the token was never written into the page
    assert errors == []
