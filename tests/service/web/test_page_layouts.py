"""Every page at a desktop's 1,400 px and a phone's 400 px in headless Chromium (issue 25): a
screenshot of each under pytest's tmp_path, and the layout facts measured in the page — the body never
scrolls sideways, charts keep a readable width (they scroll in their own box), "why it lost" keeps a
readable column, a table's key column stays in view when its box scrolls, no console errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

LORA = "model=Llama%203.1%208B&kind=fine_tune&method=lora&tokens=2000000000&seq_len=2048&batch_size=4"
FLEET = {
    "kind": "serving", "model": {"name": "Llama-2-7b"}, "requests_per_s": 5,
    "request_mix": [{"input_tokens": 100, "output_tokens": 100, "share": 1}],
}  # fmt: skip
JOB = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora", "tokens": 2_000_000_000,
       "seq_len": 2048, "batch_size": 4}  # fmt: skip
PAGES = ("home", "plan-form", "plan-result", "stored-plan", "serving-form", "stored-serving", "plans",
         "price-sheets", "buy-vs-rent", "infeasible")  # fmt: skip
MIN_CHART_PX = 480
MIN_WHY_PX = 150


@pytest.fixture(scope="module")
def paths(server: str) -> dict[str, str]:
    """Each page's path; the stored ones made through the API first."""
    job = httpx.post(f"{server}/v1/plans", json=JOB, timeout=120).json()["plan_id"]
    fleet = httpx.post(f"{server}/v1/plans", json=FLEET, timeout=120).json()["plan_id"]
    return {
        "home": "/", "plan-form": "/plan", "plan-result": f"/plan?{LORA}", "stored-plan": f"/plans/{job}",
        "serving-form": "/serving", "stored-serving": f"/plans/{fleet}", "plans": "/plans",
        "price-sheets": "/price-sheets",
        "buy-vs-rent": "/buy-vs-rent?gpu=H100%20SXM&gpu_count=8&utilization=0.7&horizon_months=60",
        "infeasible": f"/plan?{LORA}&deadline_hours=1",
    }  # fmt: skip


@pytest.fixture(params=[1400, 400], ids=["1400px", "400px"])
def sized(browser: Any, request: pytest.FixtureRequest) -> Iterator[tuple[Any, int, list[str]]]:
    width: int = request.param
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, width, errors
    context.close()


def _sticky_key_stays(page: Any) -> list[str]:
    """For every table box that scrolls sideways: whether its key (first) column stays at the box's left."""
    script = """() => [...document.querySelectorAll('.scroll')].filter(b => b.querySelector('tbody tr')
        && b.scrollWidth > b.clientWidth + 1).map(b => { const key = b.querySelector('tbody tr > :first-child');
        b.scrollLeft = b.scrollWidth; const moved = Math.abs(key.getBoundingClientRect().left
        - b.getBoundingClientRect().left); b.scrollLeft = 0; return moved < 2 ? 'kept' : 'lost'; })"""
    result: list[str] = page.evaluate(script)
    return result


@pytest.mark.parametrize("name", PAGES)
def test_each_page_reads_at_desktop_and_phone_width(
    server: str, paths: dict[str, str], sized: tuple[Any, int, list[str]], name: str, tmp_path: Path
) -> None:
    page, width, errors = sized
    response = page.goto(f"{server}{paths[name]}")
    assert response is not None and response.status == 200
    page.wait_for_load_state("load")
    page.screenshot(path=str(tmp_path / f"{name}-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1, "the body scrolls sideways"
    for chart in page.locator(".chart").all():
        assert chart.bounding_box()["width"] >= MIN_CHART_PX, "a chart shrank below a readable width"
    for cell in page.locator("td.why, td.wide").all()[:20]:
        box = cell.bounding_box()
        assert box is not None and box["width"] >= MIN_WHY_PX, "a reason wraps a few letters per line"
    assert "lost" not in _sticky_key_stays(page), "a key column scrolled out of view"
    assert errors == []


def test_the_plan_pages_have_what_each_shows(server: str, paths: dict[str, str], browser: Any) -> None:
    """The result pages carry their parts: chart and points, alternatives, downloads, relaxations."""
    context = browser.new_context(viewport={"width": 400, "height": 900})
    page = context.new_page()
    page.goto(f"{server}{paths['plan-result']}")
    assert page.locator("svg.chart g.point").count() == page.locator("#pareto-points tbody tr").count() > 0
    assert page.locator("#alternatives th.key").count() > 0 and page.locator("#download-json").count() == 1
    assert "kept" in _sticky_key_stays(page)  # at 400 px the alternatives scroll, their GPU column stays
    with page.expect_download() as download:
        page.locator("#download-csv").click()
    assert download.value.suggested_filename.endswith(".csv")
    page.goto(f"{server}{paths['infeasible']}")
    assert page.locator("#relax li").count() >= 1 and page.locator("#rejected tbody tr").count() > 1
    page.goto(f"{server}{paths['stored-serving']}")
    assert page.locator("#download-json").count() == 1
    page.goto(f"{server}{paths['buy-vs-rent']}")
    with page.expect_download() as download:
        page.locator("#download-json").click()
    assert download.value.suggested_filename.endswith(".json")
    context.close()


def test_the_form_shows_the_apis_message_beside_the_field_in_a_browser(server: str, browser: Any) -> None:
    """QLoRA on the default precision: the message stands under Precision, which is marked invalid; a
    refused country opens the folded section that holds it."""
    context = browser.new_context(viewport={"width": 400, "height": 900})
    page = context.new_page()
    page.goto(f"{server}/plan")
    page.locator("#model").fill("Llama 3.1 8B")
    page.locator("#tokens").fill("1000000")
    page.locator("#method").select_option("qlora")
    page.get_by_role("button", name="Plan").click()
    beside = page.locator("#error-precision")
    assert beside.is_visible() and beside.inner_text().startswith("qlora needs a 4-bit base")
    assert page.locator("#precision").get_attribute("aria-invalid") == "true"
    field_box, message_box = page.locator("#precision").bounding_box(), beside.bounding_box()
    assert 0 <= message_box["y"] - (field_box["y"] + field_box["height"]) < 40  # right under the field
    page.locator("#precision").select_option("nf4")
    page.locator("summary", has_text="Where").click()
    page.locator("#countries").fill("USA")
    page.get_by_role("button", name="Plan").click()
    assert page.locator("#group-where").get_attribute("open") is not None
    assert page.locator("#error-countries").is_visible()
    context.close()
