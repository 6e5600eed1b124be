"""A bounded, thread-safe cache of throughput estimates, so repeated plans reuse the model's work.

Keys hold the profile index they were computed from, so a new snapshot never reads stale entries.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.throughput import ThroughputEstimate

__all__ = ["ThroughputCache"]

_Result = ThroughputEstimate | str  # a str is the reason no estimate exists


class ThroughputCache:
    """Least-recently-used cache of estimates, and of the reasons none exists (re-raised as
    :class:`~solver.errors.ThroughputUnavailable`)."""

    def __init__(self, max_entries: int = 50_000) -> None:
        self._entries: OrderedDict[Hashable, _Result] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def get(self, key: Hashable, compute: Callable[[], ThroughputEstimate]) -> ThroughputEstimate:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
        if found is None:
            try:
                found = compute()
            except (ThroughputUnavailable, InvalidWorkload) as exc:
                found = str(exc)
            with self._lock:
                self._entries[key] = found
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
        if isinstance(found, ThroughputEstimate):
            return found
        raise ThroughputUnavailable(found)  # a fresh exception each time: no traceback piles up
