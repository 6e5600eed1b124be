"""The index the throughput model queries: measured rows by exact setup, and the fitted class model.

A :class:`ProfileIndex` holds every usable measured row as an :class:`~solver.throughput.observations.Observation`
(the measured route answers a query from the rows of exactly its work and setup), each GPU's
:class:`~solver.throughput.hardware.Hardware` view, the rows in the class model's terms
(:mod:`solver.throughput.class_rows`) and the :class:`~solver.throughput.class_fit.ClassModel` fitted to all of them.
:meth:`ProfileIndex.class_model` refits with a set of rows left out (the accuracy tests hide a row, a
cell or a whole source and predict it from the rest through the same code path as production).

:class:`IndexMemo` lets other modules keep bounded caches of their own results on the index they came
from, so that a new catalog snapshot never reads stale entries.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from solver.catalog.gpus import GpuSpec
from solver.catalog.profiles import MeasuredProfile
from solver.throughput.class_fit import ClassModel, FitRow, fit_class_model
from solver.throughput.class_rows import fit_row
from solver.throughput.hardware import Hardware, hardware_of
from solver.throughput.observations import Observation, Setup, WorkKey, observe, setup_of

__all__ = ["IndexMemo", "ProfileIndex"]

_REFIT_LIMIT: Final = 64


class IndexMemo[K, V]:
    """A bounded cache of results that depend on one :class:`ProfileIndex`, kept on that index.

    Each index holds its own store (dropped with the index); a store that grows past ``limit`` entries
    is emptied. Every operation is a single dict call, so stores can be shared between threads (a race
    at worst computes a result twice).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def of(self, index: ProfileIndex) -> dict[K, V]:
        """The store of ``index`` (created on first use, emptied when over the limit)."""
        store = index.memos.get(self)
        if store is None:
            store = index.memos.setdefault(self, {})
        elif len(store) > self.limit:
            store.clear()
        return cast(dict[K, V], store)


class ProfileIndex:
    """Measured rows indexed for the throughput model, and the class model fitted to them."""

    def __init__(self, profiles: Sequence[MeasuredProfile], gpus: Mapping[str, GpuSpec]) -> None:
        self.gpus: dict[str, GpuSpec] = dict(gpus)
        self.observations: list[Observation] = [
            obs for obs in (observe(profile, gpus) for profile in profiles) if obs is not None
        ]
        self.by_id: dict[int, Observation] = {obs.profile.profile_id: obs for obs in self.observations}
        self.by_exact: dict[tuple[WorkKey, Setup], list[Observation]] = {}
        self.works_of_task: dict[tuple[str, str, str], list[WorkKey]] = {}
        """Measured works (in row order) by (model, variant, metric)."""
        self.works: set[WorkKey] = set()
        for obs in self.observations:
            self.by_exact.setdefault((obs.work, setup_of(obs)), []).append(obs)
            if obs.work not in self.works:
                self.works.add(obs.work)
                self.works_of_task.setdefault(obs.work[:3], []).append(obs.work)
        self._hardware: dict[str, Hardware] = {gpu_id: hardware_of(gpu, gpus) for gpu_id, gpu in gpus.items()}
        self.fit_rows: list[FitRow] = [
            row
            for row in (
                fit_row(obs, self.gpus[obs.profile.gpu_id], self._hardware[obs.profile.gpu_id])
                for obs in self.observations
                if obs.profile.gpu_id in self.gpus
            )
            if row is not None
        ]
        self.model: ClassModel = fit_class_model(self.fit_rows)
        """The class model fitted to every usable row."""
        self.memos: dict[IndexMemo[Any, Any], dict[Any, Any]] = {}
        """Stores of the :class:`IndexMemo` caches that other modules keep for this index."""
        self._refits: dict[frozenset[int], ClassModel] = {}
        self._lock = threading.Lock()

    def hardware(self, gpu_id: str) -> Hardware:
        """The hardware view of a catalog GPU."""
        return self._hardware[gpu_id]

    def class_model(self, exclude: frozenset[int] = frozenset()) -> ClassModel:
        """The class model fitted without the rows whose ids are in ``exclude`` (memoised)."""
        if not exclude or not any(row.profile_id in exclude for row in self.fit_rows):
            return self.model
        with self._lock:
            found = self._refits.get(exclude)
        if found is None:
            found = fit_class_model([row for row in self.fit_rows if row.profile_id not in exclude])
            with self._lock:
                if len(self._refits) >= _REFIT_LIMIT:
                    self._refits.clear()
                self._refits[exclude] = found
        return found
