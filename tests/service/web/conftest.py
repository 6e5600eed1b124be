"""A real server and a real browser for the web pages: ``gpuplan serve`` on a free port over a fresh
database, and headless Chromium (Debian's ``/usr/bin/chromium``, installed by ``make test``) driven by
Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service.admin import TOKEN
from tests.service.live_server import serve_process

CHROMIUM = os.environ.get("GPUPLAN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("GPUPLAN_TEST_ARTIFACTS", "test-artifacts"))


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a ``gpuplan serve`` process on a seeded database of its own."""
    db = tmp_path_factory.mktemp("web") / "gpuplan.duckdb"
    with serve_process(db, env={"GPUPLAN_ADMIN_TOKEN": TOKEN}) as (url, _process):
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium; fails (never skips) when the browser is missing: ``make test`` installs it."""
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        pytest.fail(
            f"no Chromium at {CHROMIUM}: run `make test` (it installs Debian's chromium) or set GPUPLAN_CHROMIUM"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A page of its own at 1,280 px, with the console errors it logs."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    context.close()
