"""Multi-GPU scaling calibrated from measured rows, and the index the throughput model queries.

A :class:`ProfileIndex` lays the :class:`~solver.observations.Observation` rows out as two-way tables
(work × hardware, per comparable group) and answers, with any set of rows left out (leave-one-out tests
use the same code path as production):

- the value of a cell: raw at a GPU count (``per_setup``), or **1-GPU equivalent** (``per_gpu``: each
  row divided by the scaling factor of its GPU count, then the median);
- the **scaling efficiency per doubling of GPUs** ``e``, so that ``n`` GPUs give
  ``S(n) = n · e^log2(n)`` times one GPU. ``e`` is the median over pairs of measured rows that differ
  only in GPU count (rows marked ``SUSPECT:`` and multi-node rows left out), at the most specific level
  with pairs: this work on this GPU (level 0), this GPU in this mode (1), all GPUs in this mode (2);
  else :data:`DEFAULT_EFFICIENCY` (3). The classes are then made monotone (a better interconnect never
  scales worse) and clamped to ``[0.5, 1]`` (more GPUs never give less); GPUs beyond
  :data:`GPUS_PER_NODE` cross nodes at ``min(e, MULTINODE_EFFICIENCY)`` per further doubling.

Building an index also computes every cell's value with nothing left out (and the scaling fits they
need), so that queries only read them; :class:`IndexMemo` lets other modules keep bounded caches of
their own results on the index they came from.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import msgspec

from solver.gpus import INTERCONNECT_RANK, GpuSpec, Interconnect
from solver.observations import (
    HardwareKey,
    Mode,
    Observation,
    Setup,
    WorkKey,
    observe,
    setup_of,
    weighted_median,
)
from solver.profiles import MeasuredProfile

__all__ = [
    "DEFAULT_EFFICIENCY",
    "GPUS_PER_NODE",
    "MULTINODE_EFFICIENCY",
    "Cell",
    "IndexMemo",
    "ProfileIndex",
    "ScalingFit",
    "TwoWayTable",
    "scaling_factor",
]

DEFAULT_EFFICIENCY: Final[dict[str, float]] = {"none": 0.85, "pcie": 0.90, "nvlink": 0.95, "nvswitch": 0.97}
"""Scaling efficiency per doubling of GPUs when no measured pair calibrates it (``none`` with several
GPUs means separate single-GPU instances talking over the network)."""

GPUS_PER_NODE: Final = 8
MULTINODE_EFFICIENCY: Final = 0.97
"""Efficiency cap per doubling beyond one node of :data:`GPUS_PER_NODE` GPUs. Llama 3 405B trained at
38–43 % MFU on 8–16k H100s (Dubey et al. 2024, table 4), about 0.98 per doubling past one node against
a single node's ~50 %; 0.97 errs low. No measured row here spans nodes for training."""

_E_MIN: Final = 0.5
_E_MAX: Final = 1.0


class ScalingFit(msgspec.Struct, frozen=True, kw_only=True):
    """A scaling efficiency per doubling of GPUs and where it came from."""

    efficiency: float
    basis: str
    level: int
    """0: this work on this GPU, 1: this GPU in this mode, 2: all GPUs in this mode, 3: default."""
    profile_ids: tuple[int, ...] = ()


def scaling_factor(count: int, efficiency: float) -> float:
    """Throughput of ``count`` GPUs in units of one GPU: ``n · e^log2(n)``, capped across nodes."""
    within = min(count, GPUS_PER_NODE)
    factor = count * math.pow(efficiency, math.log2(within))
    if count > GPUS_PER_NODE:
        factor *= math.pow(min(efficiency, MULTINODE_EFFICIENCY), math.log2(count / GPUS_PER_NODE))
    return factor


class TwoWayTable[K]:
    """Rows of one comparable group laid out as (work × hardware) cells, hardware keyed by ``K``."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, WorkKey, K], list[Observation]] = {}
        self.hardware_of: dict[tuple[str, WorkKey], list[K]] = {}
        self.work_on: dict[tuple[str, K], list[WorkKey]] = {}

    def add(self, obs: Observation, key: K) -> None:
        """File ``obs`` under (its group, its work, ``key``)."""
        cell = (obs.group, obs.work, key)
        if cell not in self.cells:
            self.cells[cell] = []
            self.hardware_of.setdefault((obs.group, obs.work), []).append(key)
            self.work_on.setdefault((obs.group, key), []).append(obs.work)
        self.cells[cell].append(obs)


Cell = tuple[str, WorkKey, HardwareKey]
"""A ``per_gpu`` cell: (group, work, hardware)."""

_Pair = tuple[float, int, int]
_Fit = tuple[float, int, tuple[int, ...]]
_Value = tuple[float | None, tuple[int, ...]]
_MEMO_LIMIT: Final = 200_000
_SCALED_CLASSES: Final[tuple[Interconnect, ...]] = ("none", "pcie", "nvlink", "nvswitch")


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
    """Observations indexed for the throughput model; every query may leave a set of rows out.

    ``per_gpu`` holds 1-GPU-equivalent cells (hardware = GPU and precision), ``per_setup`` raw cells at
    each GPU count and interconnect. Results that do not depend on left-out rows are cached.
    """

    def __init__(self, profiles: Sequence[MeasuredProfile], gpus: Mapping[str, GpuSpec]) -> None:
        self.gpus: dict[str, GpuSpec] = dict(gpus)
        self.observations: list[Observation] = [
            obs for obs in (observe(profile, gpus) for profile in profiles) if obs is not None
        ]
        self.by_id: dict[int, Observation] = {obs.profile.profile_id: obs for obs in self.observations}
        self.per_gpu: TwoWayTable[HardwareKey] = TwoWayTable()
        self.per_setup: TwoWayTable[Setup] = TwoWayTable()
        self.by_exact: dict[tuple[WorkKey, Setup], list[Observation]] = {}
        self.groups_of: dict[WorkKey, list[str]] = {}
        for obs in self.observations:
            self.per_gpu.add(obs, obs.hardware)
            self.per_setup.add(obs, setup_of(obs))
            self.by_exact.setdefault((obs.work, setup_of(obs)), []).append(obs)
            groups = self.groups_of.setdefault(obs.work, [])
            if obs.group not in groups:
                groups.append(obs.group)
        self._pairs: dict[tuple[object, ...], list[_Pair]] = {}
        for rows in self.per_gpu.cells.values():
            self._add_pairs(rows)
        self.cells_of_mode: dict[Mode, list[tuple[Cell, Observation]]] = {}
        """``per_gpu`` cells (in table order) with their first row, by mode."""
        self.works_of_task: dict[tuple[str, str, str], list[WorkKey]] = {}
        """Measured works (in ``groups_of`` order) by (model, variant, metric)."""
        self.setups_of: dict[HardwareKey, list[tuple[int, Interconnect]]] = {}
        """Distinct (GPU count, interconnect) of the multi-GPU ``per_setup`` cells of each hardware."""
        for cell, members in self.per_gpu.cells.items():
            self.cells_of_mode.setdefault(members[0].mode, []).append((cell, members[0]))
        for work in self.groups_of:
            self.works_of_task.setdefault(work[:3], []).append(work)
        for _group, setup in self.per_setup.work_on:
            found = self.setups_of.setdefault(HardwareKey(setup.gpu_id, setup.precision), [])
            if setup.gpu_count > 1 and (setup.gpu_count, setup.interconnect) not in found:
                found.append((setup.gpu_count, setup.interconnect))
        self.memos: dict[IndexMemo[Any, Any], dict[Any, Any]] = {}
        """Stores of the :class:`IndexMemo` caches that other modules keep for this index."""
        self._scaling_cache: dict[tuple[object, ...], tuple[ScalingFit, frozenset[int]]] = {}
        self._value_cache: dict[tuple[object, ...], tuple[_Value, frozenset[int]]] = {}
        self._fit_memo: dict[tuple[object, ...], _Fit | None] = {}
        self._scaling_memo: dict[tuple[object, ...], ScalingFit] = {}
        self._value_memo: dict[tuple[object, ...], _Value] = {}
        self._depends: dict[frozenset[int], frozenset[int]] = {}
        for cell in self.per_gpu.cells:  # every route reads these: compute them (and their scaling) once
            self.value(self.per_gpu, cell)

    def _trim_memos(self) -> None:
        """Forget remembered results when they grow past a bound (queries about new work add entries)."""
        stores: tuple[dict[Any, Any], ...] = (
            self._fit_memo,
            self._scaling_memo,
            self._value_memo,
            self._scaling_cache,
            self._value_cache,
            self._depends,
        )
        if sum(map(len, stores)) > _MEMO_LIMIT:
            for store in stores:
                store.clear()

    def _add_pairs(self, rows: list[Observation]) -> None:
        usable = [
            o for o in rows if not o.suspect and not o.multinode and o.profile.gpu_count <= GPUS_PER_NODE
        ]
        for a in usable:
            for b in usable:
                count_a, count_b = a.profile.gpu_count, b.profile.gpu_count
                if (
                    count_a >= count_b
                    or a.profile.value <= 0
                    or (count_a > 1 and a.interconnect != b.interconnect)
                ):
                    continue
                ratio = (b.profile.value / count_b) / (a.profile.value / count_a)
                pair = (
                    ratio ** (1.0 / math.log2(count_b / count_a)),
                    a.profile.profile_id,
                    b.profile.profile_id,
                )
                ic = b.interconnect
                for key in (
                    (0, a.group, a.work, a.hardware, ic),
                    (1, a.mode, a.hardware.gpu_id, ic),
                    (2, a.mode, ic),
                ):
                    self._pairs.setdefault(key, []).append(pair)

    def _fit_at(self, key: tuple[object, ...], exclude: frozenset[int]) -> _Fit | None:
        memo_key = (key, exclude)
        if memo_key in self._fit_memo:
            return self._fit_memo.get(memo_key)
        pairs = [p for p in self._pairs.get(key, ()) if p[1] not in exclude and p[2] not in exclude]
        result = None
        if pairs:
            ids = sorted({pid for _, a, b in pairs for pid in (a, b)})
            result = weighted_median((e, 1.0) for e, _, _ in pairs), len(pairs), tuple(ids)
        self._trim_memos()
        self._fit_memo[memo_key] = result
        return result

    def _raw_fit(
        self, obs: tuple[str, WorkKey, HardwareKey, Mode], ic: Interconnect, exclude: frozenset[int]
    ) -> tuple[ScalingFit, int]:
        group, work, hardware, mode = obs
        keys = ((0, group, work, hardware, ic), (1, mode, hardware.gpu_id, ic), (2, mode, ic))
        for level, key in enumerate(keys):
            fit = self._fit_at(key, exclude)
            if fit is not None:
                if level == 0:
                    text = f"{fit[1]} measured pairs of this work on {hardware.gpu_id}"
                elif level == 1:
                    text = f"{fit[1]} measured {mode} pairs on {hardware.gpu_id}"
                else:
                    text = f"{fit[1]} measured {mode} pairs, all GPUs"
                basis = f"{ic}: calibrated from {text}"
                return ScalingFit(efficiency=fit[0], basis=basis, level=level, profile_ids=fit[2]), level
        default = len(keys)
        return ScalingFit(efficiency=DEFAULT_EFFICIENCY[ic], basis=f"{ic}: default", level=default), default

    def scaling(
        self,
        obs: tuple[str, WorkKey, HardwareKey, Mode],
        ic: Interconnect,
        exclude: frozenset[int] = frozenset(),
    ) -> ScalingFit:
        """Scaling efficiency per doubling on ``ic`` for (group, work, hardware, mode) ``obs``.

        Each class takes its most specific calibration; classes are then fixed most specific first,
        each clamped between the classes already fixed below and above it, so ``e`` never falls as the
        interconnect improves.
        """
        cached = self._scaling_cache.get((obs, ic))
        if cached is not None and exclude.isdisjoint(cached[1]):
            return cached[0]
        memo_key = (obs, ic, exclude)
        hit = self._scaling_memo.get(memo_key)
        if hit is not None:
            return hit
        raw = {cls: self._raw_fit(obs, cls, exclude) for cls in _SCALED_CLASSES}
        fixed: dict[Interconnect, ScalingFit] = {}
        for cls in sorted(_SCALED_CLASSES, key=lambda c: (raw[c][1], -INTERCONNECT_RANK[c])):
            fit, rank = raw[cls][0], INTERCONNECT_RANK[cls]
            low = max((f.efficiency for c, f in fixed.items() if INTERCONNECT_RANK[c] < rank), default=_E_MIN)
            high = min(
                (f.efficiency for c, f in fixed.items() if INTERCONNECT_RANK[c] > rank), default=_E_MAX
            )
            value = min(max(fit.efficiency, low, _E_MIN), high, _E_MAX)
            if value != fit.efficiency:
                fit = ScalingFit(
                    efficiency=value,
                    basis=f"{fit.basis}, clamped to {value:.3f}",
                    level=fit.level,
                    profile_ids=fit.profile_ids,
                )
            fixed[cls] = fit
        self._trim_memos()
        if exclude:
            for cls, fit in fixed.items():  # every class was fixed on the way: remember them all
                self._scaling_memo[obs, cls, exclude] = fit
        else:
            depends = frozenset(itertools.chain.from_iterable(f.profile_ids for f in fixed.values()))
            depends = self._depends.setdefault(depends, depends)  # many works share theirs: keep one
            for cls, fit in fixed.items():
                self._scaling_cache[obs, cls] = (fit, depends)
        return fixed[ic]

    def value[K](
        self, table: TwoWayTable[K], cell: tuple[str, WorkKey, K], exclude: frozenset[int] = frozenset()
    ) -> _Value:
        """Log of a cell's median value and the rows behind it (``None`` when no row is usable).

        In ``per_gpu`` each row is first divided by the scaling factor of its GPU count (1-GPU
        equivalent); rows marked ``SUSPECT:`` are left out of both tables.
        """
        key = (id(table), cell)
        cached = self._value_cache.get(key)
        if cached is not None and exclude.isdisjoint(cached[1]):
            return cached[0]
        hit = self._value_memo.get((key, exclude))
        if hit is not None:
            return hit
        values: list[tuple[float, float]] = []
        used: list[int] = []
        depends: set[int] = set()
        for obs in table.cells.get(cell, ()):
            pid = obs.profile.profile_id
            depends.add(pid)
            if pid in exclude or obs.suspect or obs.profile.value <= 0:
                continue
            factor = 1.0
            if table is self.per_gpu and obs.profile.gpu_count > 1:
                fit = self.scaling((obs.group, obs.work, obs.hardware, obs.mode), obs.interconnect, exclude)
                depends.update(fit.profile_ids)
                factor = scaling_factor(obs.profile.gpu_count, fit.efficiency)
            values.append((math.log(obs.profile.value / factor), 1.0))
            used.append(pid)
        result = (weighted_median(values) if values else None, tuple(used))
        self._trim_memos()
        if exclude:
            self._value_memo[key, exclude] = result
        else:
            self._value_cache[key] = (result, frozenset(depends))
        return result
