"""A price-sheet source for the replica tests: a local HTTP server that serves one sheet, notes when
each fetch arrived, and can hold a fetch halfway through its body (a slow source) until released."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SourceServer", "source_server"]


class SourceServer:
    """What the handler serves and what it saw (shared with the handler's threads)."""

    def __init__(self, sheet: str) -> None:
        self.url = ""
        self.sheet = sheet.encode()
        self.fetched_at: list[float] = []
        """``time.monotonic()`` of each fetch's arrival."""
        self.holding = threading.Event()
        """Set when a held fetch has sent half its body."""
        self._hold: threading.Event | None = None
        self._lock = threading.Lock()

    def serve(self, sheet: str, *, hold: bool = False) -> None:
        """Serve ``sheet`` from the next fetch on; with ``hold``, stop each fetch halfway until
        :meth:`release`."""
        with self._lock:
            self.sheet = sheet.encode()
            self._hold = threading.Event() if hold else None
            self.holding.clear()

    def release(self) -> None:
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.set()

    def fetched_between(self, start: float, end: float) -> list[float]:
        with self._lock:
            return [t for t in self.fetched_at if start <= t <= end]

    def answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.fetched_at.append(time.monotonic())
            body, hold = self.sheet, self._hold
        handler.send_response(200)
        handler.send_header("Content-Type", "text/csv")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        half = len(body) // 2
        try:
            handler.wfile.write(body[:half])
            handler.wfile.flush()
            if hold is not None:
                self.holding.set()
                hold.wait(30)
            handler.wfile.write(body[half:])
        except OSError:  # the fetching replica was killed meanwhile
            pass


@contextmanager
def source_server(sheet: str) -> Iterator[SourceServer]:
    """A :class:`SourceServer` on a free loopback port (its ``url`` set), serving ``sheet``."""
    source = SourceServer(sheet)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            source.answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    source.url = f"http://127.0.0.1:{server.server_address[1]}/live.csv"
    try:
        yield source
    finally:
        source.release()
        server.shutdown()
        server.server_close()
