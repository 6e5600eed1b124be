"""Keeping a replica's catalog snapshot current when other processes write the shared database.

A PostgreSQL trigger (migration 9) sends a notice on :data:`CATALOG_CHANNEL` from every transaction
that changes what the snapshot is read from; PostgreSQL delivers it on commit. One daemon thread per
store listens on a connection of its own and, on a notice or every ``poll_s`` whichever comes first,
asks whether the catalog state changed (``Store.reload_if_changed``): the poll is the fallback for a
notice lost with its connection, and reconnecting is retried on every poll. Requests in flight keep the
snapshot they started with.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from service.db.backend import Listener
from service.db.store_errors import STORE_ERRORS
from service.errors import ServiceError

__all__ = ["CATALOG_CHANNEL", "CatalogWatcher"]

CATALOG_CHANNEL: Final = "gpuplan_catalog"

_log = logging.getLogger("gpuplan.store")
_SLICE_S: Final = 0.25
"""The longest wait for a notice before looking whether the watcher was stopped."""
_ERRORS: Final[tuple[type[Exception], ...]] = (*STORE_ERRORS, ServiceError, OSError)


class CatalogWatcher:
    """Calls ``check`` after each notice ``listen()``'s listener hears, and at least every ``poll_s``
    (only then when ``listen()`` gives no listener)."""

    def __init__(
        self, listen: Callable[[], Listener | None], check: Callable[[], object], *, poll_s: float
    ) -> None:
        self._listen = listen
        self._check = check
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._listener: Listener | None = None
        self._thread = threading.Thread(target=self._loop, name="gpuplan-catalog-watch", daemon=True)

    def start(self) -> None:
        """Listen (here, so no notice sent after this returns is missed), then watch in the thread."""
        self._connect()
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (within a quarter second, or a check under way) and close its connection."""
        self._stop.set()
        self._thread.join(timeout=10)

    def _connect(self) -> None:
        try:
            self._listener = self._listen()
        except _ERRORS as exc:
            _log.warning("catalog notices unavailable (polling every %g s): %s", self.poll_s, exc)

    def _wait(self) -> None:
        """Until a notice, ``poll_s``, or a lost connection (then polling continues without one)."""
        if self._listener is None:
            self._stop.wait(self.poll_s)
            return
        deadline = time.monotonic() + self.poll_s
        try:  # in slices, so that stop() is seen soon
            while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
                if self._listener.wait(min(left, _SLICE_S)):
                    return
        except _ERRORS as exc:
            _log.warning("catalog notices lost (reconnecting; polling meanwhile): %s", exc)
            self._drop()

    def _drop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(*_ERRORS):
                self._listener.close()
            self._listener = None

    def _loop(self) -> None:
        try:  # a check first: a write between the snapshot's read and the LISTEN sent no notice we heard
            while not self._stop.is_set():
                try:
                    self._check()
                except _ERRORS as exc:  # the database is away: the next poll tries again
                    _log.warning("catalog state not readable: %s", exc)
                except Exception:  # a bug in one reload must not end every later one: logged, tried again
                    _log.exception("catalog reload failed; trying again at the next notice or poll")
                if self._listener is None:
                    self._connect()
                self._wait()
        finally:
            self._drop()
