"""Request ids and JSON logs (issue 13, A2): ``X-Request-ID`` is taken or made up, echoed on the
response and in problem bodies, and every log line of the request carries it."""

from __future__ import annotations

import io
import json
import logging
import logging.config
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.ops.logs import REQUEST_ID, log_config
from service.settings import Settings
from tests.service.admin import AUTH, TOKEN
from tests.service.ops.test_metrics import SHEET


def test_a_sane_client_id_is_echoed_and_a_bad_one_replaced(client: TestClient[Any]) -> None:
    assert client.get("/health/live", headers={"X-Request-ID": "trace-42.a"}).headers["x-request-id"] == (
        "trace-42.a"
    )
    for bad in ("x" * 200, "two words", "", "a\tb", "<script>"):
        made = client.get("/health/live", headers={"X-Request-ID": bad}).headers["x-request-id"]
        assert made != bad and len(made) == 32 and int(made, 16) >= 0
    first, second = (client.get("/health/live").headers["x-request-id"] for _ in range(2))
    assert first != second


def test_problem_bodies_carry_the_request_id(client: TestClient[Any]) -> None:
    routed = client.get("/v1/no-such-thing", headers={"X-Request-ID": "abc-404"})  # a routing error
    assert routed.status_code == 404 and routed.json()["request_id"] == "abc-404"
    invalid = client.post("/v1/plans", json={"kind": "train"}, headers={"X-Request-ID": "abc-400"})
    assert invalid.status_code == 400
    assert invalid.json()["request_id"] == invalid.headers["x-request-id"] == "abc-400"
    made = client.get("/v1/plans/nope")
    assert made.json()["request_id"] == made.headers["x-request-id"]


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The process's logging set up by ``log_config`` (as ``gpuplan serve`` does), into a buffer."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    buffer = io.StringIO()
    config = log_config("INFO", "json")
    config["handlers"]["default"]["stream"] = buffer
    logging.config.dictConfig(config)
    yield buffer
    for handler in root.handlers:
        if handler not in saved[0]:
            root.removeHandler(handler)
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def test_log_lines_are_json_with_a_timestamp_and_the_request_id(json_lines: io.StringIO) -> None:
    token = REQUEST_ID.set("req-7")
    try:
        logging.getLogger("gpuplan.test").warning("planned %d GPUs", 4)
        logging.getLogger("uvicorn.access").info(
            '%s - "%s %s HTTP/%s" %d', "1.2.3.4", "GET", "/x", "1.1", 200
        )
    finally:
        REQUEST_ID.reset(token)
    logging.getLogger("gpuplan.test").warning("outside a request")
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    assert [line["message"] for line in lines] == [
        "planned 4 GPUs",
        '1.2.3.4 - "GET /x HTTP/1.1" 200',
        "outside a request",
    ]
    assert [line["request_id"] for line in lines] == ["req-7", "req-7", "-"]
    assert [line["logger"] for line in lines] == ["gpuplan.test", "uvicorn.access", "gpuplan.test"]
    assert all(
        line["level"] in ("WARNING", "INFO") and line["timestamp"].endswith("+00:00") for line in lines
    )


def test_text_format_names_the_request_id_too() -> None:
    config = log_config("DEBUG", "text")
    formatter = logging.Formatter(config["formatters"]["default"]["format"])
    record = logging.LogRecord("gpuplan", logging.INFO, __file__, 1, "hello", None, None)
    record.request_id = "r-1"
    assert "[r-1] hello" in formatter.format(record)


def test_lines_logged_in_worker_threads_carry_the_id(json_lines: io.StringIO, tmp_path: Path) -> None:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "acme"\nurl = "{sheet}"\nformat = "rental_csv"\n')
    store = Store.open(":memory:")
    settings = Settings(db_path=":memory:", sources_file=str(sources), admin_token=TOKEN)
    with TestClient(create_app(settings, store=store)) as client:
        ran = client.post(
            "/v1/price-sheets/refresh",
            params={"wait": "true"},
            headers={**AUTH, "X-Request-ID": "refresh-now"},
        )
        assert ran.status_code == 200, ran.text
    store.close()
    refreshes = [
        line
        for line in map(json.loads, json_lines.getvalue().splitlines())
        if line["logger"] == "gpuplan.refresh"
    ]
    # the run the request asked for (in a worker thread) and, if it ran by then, the scheduler's own
    assert "refresh-now" in {line["request_id"] for line in refreshes}
    assert all(line["request_id"] in ("refresh-now", "-") for line in refreshes)
