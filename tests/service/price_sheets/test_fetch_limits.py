"""A refresh fetch is bounded as a whole: ``timeout_seconds`` is a deadline for the fetch, not per read,
and ``max_bytes`` holds for any file, including ones that report no size."""

from __future__ import annotations

import http.server
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.errors import FetchError
from service.price_sheets.sources import SourceConfig, fetch

_HEADER = b"provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"


class _Drip(http.server.BaseHTTPRequestHandler):
    """Answers at once, then sends one byte every 0.3 s: each read is well inside any read timeout."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.end_headers()
        try:
            for byte in _HEADER * 10:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:  # the client gave up, as it should
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def drip_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sheet.csv"
    server.shutdown()
    server.server_close()


def test_timeout_is_a_deadline_for_the_whole_fetch(drip_url: str) -> None:
    source = SourceConfig(name="drip", url=drip_url, format="rental_csv", timeout_seconds=1.0)
    started = time.monotonic()
    with pytest.raises(FetchError, match="timeout_seconds"):
        fetch(source)
    assert time.monotonic() - started < 2.0


def test_file_sources_honour_max_bytes_whatever_size_the_file_reports(tmp_path: Path) -> None:
    zero = SourceConfig(name="zero", url="/dev/zero", format="rental_csv", max_bytes=1000)
    with pytest.raises(FetchError, match="max_bytes"):
        fetch(zero)
    sheet = tmp_path / "s.csv"
    sheet.write_bytes(_HEADER)
    exact = SourceConfig(name="s", url=f"file://{sheet}", format="rental_csv", max_bytes=len(_HEADER))
    assert fetch(exact) == _HEADER
    smaller = SourceConfig(name="s", url=str(sheet), format="rental_csv", max_bytes=len(_HEADER) - 1)
    with pytest.raises(FetchError, match="max_bytes"):
        fetch(smaller)


def _fetch_in_time(source: SourceConfig, within_s: float) -> bytes | FetchError:
    """What ``fetch`` gives within ``within_s`` (the test fails, instead of hanging, when it blocks)."""
    got: list[bytes | FetchError] = []

    def run() -> None:
        try:
            got.append(fetch(source))
        except FetchError as exc:
            got.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(within_s)
    assert got, f"fetch of {source.url} still blocked after {within_s} s"
    return got[0]


def test_a_fifo_with_a_stalled_writer_fails_at_the_deadline(tmp_path: Path) -> None:
    fifo = tmp_path / "sheet.csv"
    os.mkfifo(fifo)
    opened = threading.Event()

    def stall() -> None:  # opens the pipe, writes part of a sheet, then never closes nor writes again
        with fifo.open("wb", buffering=0) as pipe:
            pipe.write(_HEADER)
            opened.wait(5)

    writer = threading.Thread(target=stall, daemon=True)
    writer.start()
    source = SourceConfig(name="fifo", url=str(fifo), format="rental_csv", timeout_seconds=0.5)
    started = time.monotonic()
    got = _fetch_in_time(source, 3.0)
    opened.set()
    assert isinstance(got, FetchError) and "timeout_seconds" in str(got)
    assert time.monotonic() - started < 1.5


def test_a_fifo_nobody_writes_never_blocks_the_run(tmp_path: Path) -> None:
    fifo = tmp_path / "sheet.csv"
    os.mkfifo(fifo)
    source = SourceConfig(name="fifo", url=f"file://{fifo}", format="rental_csv", timeout_seconds=0.5)
    got = _fetch_in_time(source, 3.0)
    assert got == b"" or (isinstance(got, FetchError) and "timeout_seconds" in str(got))
