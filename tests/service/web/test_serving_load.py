"""The serving load page in a real browser: it answers what ``POST /v1/throughput`` (kind serving)
answers — the throughput and the simulated TTFT, TPOT and end-to-end p50/p90/p99 — and a bad input
names its field."""

from __future__ import annotations

from typing import Any

import httpx

from tests.service.web.conftest import ARTIFACTS


def test_the_load_form_shows_the_apis_simulated_percentiles(server: str, tab: tuple[Any, list[str]]) -> None:
    page, errors = tab
    page.goto(f"{server}/serving")
    page.get_by_role("link", name="what one GPU type does at a load").click()
    page.wait_for_url(f"{server}/serving/load")
    page.locator("#model").fill("Llama-2-7b")
    page.locator("#gpu").fill("H100 SXM")
    page.get_by_label("Input tokens").fill("500")
    page.get_by_label("Output tokens").fill("200")
    page.get_by_label("Engine").select_option("sglang")
    page.get_by_label("Load", exact=True).select_option("requests_per_s")
    page.get_by_label("Load value").fill("3")
    page.get_by_role("button", name="Simulate").click()
    page.wait_for_selector("#load-latency")
    body = {"kind": "serving", "model": {"name": "Llama-2-7b"}, "gpu": "H100 SXM", "gpu_count": 1,
            "input_tokens": 500, "output_tokens": 200, "engine": "sglang", "load": {"requests_per_s": 3}}  # fmt: skip
    api = httpx.post(f"{server}/v1/throughput", json=body, timeout=60).json()["serving"]
    verdict = page.locator("#load-verdict").inner_text()
    assert verdict.startswith(f"{api['output_tokens_per_s']:,.0f} output tokens/s") and "(sglang)" in verdict
    rows = page.locator("#load-latency tbody tr")
    for i, (name, fmt) in enumerate((("ttft_ms", "{:,.0f}"), ("tpot_ms", "{:,.1f}"), ("e2e_ms", "{:,.0f}"))):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells == [fmt.format(api[name][p]) for p in ("p50", "p90", "p99")]
    assert "load=requests_per_s" in page.url and "engine=sglang" in page.url  # the inputs are in the URL
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "serving-load.png"), full_page=True)
    assert errors == []


def test_a_bad_load_input_names_its_field(server: str, tab: tuple[Any, list[str]]) -> None:
    page, errors = tab
    page.goto(f"{server}/serving/load?model=Llama-2-7b&gpu=H100+SXM&input_tokens=4000&output_tokens=200")
    alert = page.get_by_role("alert").inner_text()
    assert alert.startswith("output_tokens") and "context of 4,096" in alert
    assert page.locator("#output_tokens").get_attribute("aria-invalid") == "true"
    page.goto(
        f"{server}/serving/load?model=Llama-2-7b&gpu=H100+SXM&input_tokens=40&output_tokens=20&load=concurrency"
    )
    assert page.get_by_role("alert").inner_text().startswith("load_value")
    assert errors == []
