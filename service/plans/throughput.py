"""Throughput estimates for the planner, cached across requests so repeated plans reuse the model's work.

A bounded, thread-safe LRU keyed by :class:`ThroughputKey`, which includes the snapshot generation the
estimate was computed from, so a new snapshot never reads stale entries. The reason no estimate exists
is cached too (and re-raised as :class:`~solver.errors.ThroughputUnavailable`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import msgspec

from service.db.snapshot import CatalogSnapshot
from solver.candidates import ThroughputFn
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.gpus import GpuSpec
from solver.throughput import ThroughputEstimate, Topology, estimate_throughput
from solver.workload import ResolvedWorkload

__all__ = ["ThroughputCache", "ThroughputKey"]

_Result = ThroughputEstimate | str  # a str is the reason no estimate exists


class ThroughputKey(msgspec.Struct, frozen=True, kw_only=True):
    """Everything an estimate depends on."""

    generation: int
    workload: ResolvedWorkload
    gpu_id: str
    gpu_count: int
    topology: Topology
    output_len: int | None


class ThroughputCache:
    """Least-recently-used cache of estimates, and of the reasons none exists."""

    def __init__(self, max_entries: int = 50_000) -> None:
        self._entries: OrderedDict[ThroughputKey, _Result] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def get(self, key: ThroughputKey, compute: Callable[[], ThroughputEstimate]) -> ThroughputEstimate:
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

    def estimator(self, snapshot: CatalogSnapshot, output_len: int | None) -> ThroughputFn:
        """The planner's throughput function on ``snapshot``, through this cache."""
        index = snapshot.profile_index()

        def estimate(
            workload: ResolvedWorkload, gpu: GpuSpec, gpu_count: int, topology: Topology
        ) -> ThroughputEstimate:
            key = ThroughputKey(
                generation=snapshot.generation,
                workload=workload,
                gpu_id=gpu.gpu_id,
                gpu_count=gpu_count,
                topology=topology,
                output_len=output_len,
            )
            return self.get(
                key,
                lambda: estimate_throughput(
                    workload,
                    gpu,
                    gpu_count,
                    topology.interconnect,
                    snapshot.profiles,
                    snapshot.gpus,
                    output_len=output_len,
                    index=index,
                    topology=topology,
                ),
            )

        return estimate
