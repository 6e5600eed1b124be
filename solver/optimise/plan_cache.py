"""What plans learn on one catalog snapshot, kept for the next plan (the service creates one per snapshot).

A :class:`PlanCache` holds the layout searches' :class:`~solver.throughput.layout_search.LayoutCache`
(per-rank memory by layout, the chosen layout per GPU, count and topology) and, per workload and supply
shape, the steps of GPU counts a shape can run at (layouts and throughputs, not prices) and their hours
for one amount of work. Everything is keyed by the workload, so one cache serves every plan on the
snapshot; it is bounded (a full table drops its older half) and a lookup is one dict call.
"""

from __future__ import annotations

from typing import Final

from solver.throughput.layout_search import CacheTables, LayoutCache

__all__ = ["PLAN_CACHE_ENTRIES", "PlanCache"]

PLAN_CACHE_ENTRIES: Final = 20_000
"""Entries a table of a :class:`PlanCache` holds before it drops its older half."""


class PlanCache(CacheTables):
    """Layouts, supply-shape steps (``steps``) and their hour tables (``hours``) of one catalog snapshot."""

    TABLES = ("steps", "hours")

    def __init__(self, layouts: LayoutCache | None = None, max_entries: int = PLAN_CACHE_ENTRIES) -> None:
        super().__init__(max_entries)
        self.layouts = layouts if layouts is not None else LayoutCache()

    def __len__(self) -> int:
        return super().__len__() + len(self.layouts)
