"""The API documentation pages, Swagger UI (``/schema``) and Scalar (``/schema/scalar``), render every
operation in headless Chromium with the network closed: their scripts and styles are this server's
(pinned releases shipped in ``service/data/openapi_ui``), and they ask nothing of any other host."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.service.web.conftest import ARTIFACTS


@pytest.fixture
def offline(browser: Any, server: str) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A page whose every request to another host is refused (and recorded), with its console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    elsewhere: list[str] = []

    def only_the_server(route: Any) -> None:
        if route.request.url.startswith(server + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, elsewhere, errors
    context.close()


def _operations(server: str) -> list[tuple[str, str, dict[str, Any]]]:
    document = httpx.get(f"{server}/schema/openapi.json", timeout=30).json()
    return [
        (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def test_swagger_ui_renders_every_operation_offline(
    offline: tuple[Any, list[str], list[str]], server: str
) -> None:
    page, elsewhere, errors = offline
    page.goto(f"{server}/schema/")
    page.locator(".opblock").first.wait_for(timeout=60_000)
    operations = _operations(server)
    assert page.locator(".opblock").count() == len(operations)
    shown = {  # Swagger breaks long paths with zero-width spaces after each slash
        (
            block.locator(".opblock-summary-method").inner_text(),
            block.locator(".opblock-summary-path").inner_text().replace("\u200b", ""),
        )
        for block in page.locator(".opblock").all()
    }
    assert shown == {(method, path) for method, path, _ in operations}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "api-docs-swagger.png"))
    assert elsewhere == [] and errors == []


def test_scalar_renders_every_operation_offline(
    offline: tuple[Any, list[str], list[str]], server: str
) -> None:
    page, elsewhere, errors = offline
    page.goto(f"{server}/schema/scalar")
    page.get_by_text("HealthHandler").first.wait_for(timeout=60_000)
    operations = _operations(server)
    for tag in sorted({t for _, _, operation in operations for t in operation.get("tags", [])}):
        page.get_by_text(tag, exact=True).first.click()  # each group of the sidebar opens
    text = page.inner_text("body")
    missing = [o.get("summary") for _, _, o in operations if o.get("summary") and o["summary"] not in text]
    assert missing == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "api-docs-scalar.png"))
    assert elsewhere == [] and errors == []
