"""Throughput estimates for the planner, cached across requests so repeated plans reuse the model's work.

A bounded, thread-safe LRU of *tables*: one per (model generation, the plan's workload, output
length), so a snapshot whose profiles or GPUs changed never reads stale entries, while a new price sheet
(same model inputs, :meth:`~service.db.snapshot.CatalogSnapshot.model_generation`) keeps them; only the
newest generation's tables are kept. Inside a table an estimate is keyed by the
few plain values a candidate varies — GPU, count, layout and topology — so a plan that asks for
thousands of candidates hashes the (large) workload once, not once per candidate. The reason no
estimate exists is cached too (and re-raised as :class:`~solver.errors.ThroughputUnavailable`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import msgspec

from service.db.snapshot import CatalogSnapshot, Derived
from service.estimates.throughput import layout_cache
from solver import (
    GpuSpec,
    InvalidWorkload,
    PlanCache,
    ResolvedWorkload,
    ThroughputEstimate,
    ThroughputFn,
    ThroughputUnavailable,
    Topology,
    estimate_throughput,
    scale_term,
)

__all__ = ["PLAN_CACHE", "ThroughputCache", "ThroughputKey", "plan_cache"]

PLAN_CACHE: Derived[PlanCache] = Derived(
    "plan cache", lambda snapshot: PlanCache(layouts=layout_cache(snapshot)), CatalogSnapshot.model_inputs
)
"""What plans learn on one snapshot (layouts, each supply shape's counts, not prices), kept by the next
snapshot while its model inputs are the same (a price sheet), dropped with the last one that has them."""


def plan_cache(snapshot: CatalogSnapshot) -> PlanCache:
    """The :class:`~solver.PlanCache` of ``snapshot`` (its layouts shared with the throughput estimates)."""
    return snapshot.derive(PLAN_CACHE)


_Result = ThroughputEstimate | str  # a str is the reason no estimate exists
_Table = dict[Hashable, Any]


class ThroughputKey(msgspec.Struct, frozen=True, kw_only=True):
    """What a table of estimates depends on: the snapshot's model inputs (``generation``: its
    :meth:`~service.db.snapshot.CatalogSnapshot.model_generation`), the plan's workload, its output length."""

    generation: int
    workload: ResolvedWorkload
    output_len: int | None
    part: str = "estimates"


class ThroughputCache:
    """Least-recently-used tables of estimates (and of the reasons none exists), one per plan workload,
    of the newest snapshot only."""

    def __init__(self, max_tables: int = 256, max_entries_per_table: int = 20_000) -> None:
        self._tables: OrderedDict[ThroughputKey, _Table] = OrderedDict()
        self._lock = threading.Lock()
        self._max_tables = max_tables
        self._max_entries = max_entries_per_table
        self._newest = 0

    def table(self, key: ThroughputKey) -> _Table:
        """The table of ``key`` (created on first use; the least recently used one is dropped).

        Only the newest model generation's tables are kept: the first request on a snapshot with new
        model inputs drops every older table (nothing could hit it again), and a request still running
        on an older one gets a table of its own that is not kept. Without this, every change left up to
        ``max_tables`` tables of dead snapshots behind (RSS 309 → 554 MB over 30 upload-and-plan rounds,
        when every price sheet was a new generation).
        """
        with self._lock:
            if key.generation > self._newest:
                self._newest = key.generation
                for old in [k for k in self._tables if k.generation < key.generation]:
                    del self._tables[old]
            elif key.generation < self._newest:
                return {}
            found = self._tables.get(key)
            if found is None:
                found = self._tables[key] = {}
                while len(self._tables) > self._max_tables:
                    self._tables.popitem(last=False)
            else:
                self._tables.move_to_end(key)
            return found

    def generations(self) -> list[int]:
        """The model generation of every table held (the newest only, see :meth:`table`)."""
        with self._lock:
            return [key.generation for key in self._tables]

    def capacities(self, snapshot: CatalogSnapshot, workload: ResolvedWorkload) -> dict[Hashable, Any]:
        """The serving planner's table of replica capacities for ``workload``'s model on ``snapshot``
        (keyed by GPU, tp, interconnect, request size and SLO; the rate is not part of it)."""
        return self.table(
            ThroughputKey(
                generation=snapshot.model_generation(), workload=workload, output_len=None, part="capacities"
            )
        )

    def estimator(
        self, snapshot: CatalogSnapshot, workload: ResolvedWorkload, output_len: int | None
    ) -> ThroughputFn:
        """The planner's throughput function for ``workload`` on ``snapshot``, through this cache."""
        index = snapshot.profile_index()
        table = self.table(
            ThroughputKey(generation=snapshot.model_generation(), workload=workload, output_len=output_len)
        )
        limit = self._max_entries
        scale = scale_term(index)

        def estimate(
            job: ResolvedWorkload, gpu: GpuSpec, gpu_count: int, topology: Topology
        ) -> ThroughputEstimate:
            network = topology.network
            key = (
                gpu.gpu_id, gpu_count, job.tp, job.pp, job.vpp, job.cp, job.sharding, job.recompute,
                job.recompute_auto, job.batch_size, job.gradient_accumulation_steps, job.global_batch_tokens,
                topology.gpus_per_instance, topology.interconnect, network.network_class, network.gbps,
            )  # fmt: skip
            found = table.get(key)
            if found is None:
                try:
                    found = estimate_throughput(
                        job, gpu, gpu_count, topology.interconnect, snapshot.profiles, snapshot.gpus,
                        output_len=output_len, index=index, topology=topology, scale=scale,
                    )  # fmt: skip
                except (ThroughputUnavailable, InvalidWorkload) as exc:
                    found = str(exc)
                if len(table) >= limit:
                    table.clear()
                table[key] = found  # one dict call: safe to share between threads
            if isinstance(found, ThroughputEstimate):
                return found
            raise ThroughputUnavailable(found)  # a fresh exception each time: no traceback piles up

        return estimate
