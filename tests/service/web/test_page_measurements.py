"""The measurements page in a real browser: a torchtitan log (the real fixture of
tests/pricing/measurements) imported through the form is listed, the next plan on the server uses it,
and a file missing its GPU is refused naming the field, storing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.service.admin import TOKEN
from tests.service.measurements.test_api_measurements import PRETRAIN_8B
from tests.service.web.conftest import ARTIFACTS

LOG = (
    Path(__file__).parents[2] / "pricing" / "measurements" / "fixtures" / "torchtitan_llama3_8b_bf16_8gpu.log"
)


def _import(page: Any, source: str, facts: dict[str, str]) -> Any:
    page.locator("#upload-format").select_option("torchtitan_log")
    page.locator("#upload-source").fill(source)
    for name, value in facts.items():
        page.locator(f"#upload-{name}").fill(value)
    page.locator("#upload-file").set_input_files(
        files=[{"name": LOG.name, "mimeType": "text/plain", "buffer": LOG.read_bytes()}]
    )
    page.locator("#upload-token").fill(TOKEN)
    page.get_by_role("button", name="Import").click()
    return page.locator("#upload-result")


def test_a_log_imported_through_the_page_is_listed_and_planned_on(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, errors = tab
    page.goto(f"{server}/measurements")
    facts = {"gpu": "H100 SXM", "gpu_count": "8", "model": "Llama 3 8B", "seq_len": "8192", "batch_size": "1"}
    result = _import(page, "titan-web", facts)
    result.get_by_text("stored").wait_for()
    page.reload()
    runs = page.locator("#runs").inner_text()
    assert "titan-web" in runs and "torchtitan_log" in runs and "50,484 tokens/s" in runs
    page.screenshot(path=str(ARTIFACTS / "measurements.png"), full_page=False)
    plan = httpx.post(f"{server}/v1/plans", json=PRETRAIN_8B, timeout=120).json()
    assert plan["estimate"]["throughput"]["route"] == "measured"
    assert [s["source"] for s in plan["estimate"]["throughput"]["sources"]] == ["titan-web"]
    query = "model=Llama%203%208B&kind=train&tokens=5000000000&seq_len=8192&batch_size=1"
    page.goto(f"{server}/plan?{query}&max_gpus=8&deadline_hours=30&gpus=H100%20SXM")
    assert "measured by titan-web" in page.locator("main").inner_text()
    assert TOKEN not in page.content()
    assert errors == []


def test_a_log_without_its_gpu_is_refused_on_the_page_naming_the_field(
    server: str, tab: tuple[Any, list[str]]
) -> None:
    page, _ = tab
    page.goto(f"{server}/measurements")
    result = _import(page, "titan-nogpu", {"gpu_count": "8", "model": "Llama 3 8B", "seq_len": "8192"})
    result.get_by_text("gpu:").wait_for()
    assert "the GPU is not in the file" in result.inner_text()
    listed = httpx.get(
        f"{server}/v1/measurements", params={"source": "titan-nogpu", "history": "true"}
    ).json()
    assert listed["total"] == 0
