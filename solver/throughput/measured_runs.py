"""Measured training runs as the jobs they were: their workload, layout and links, predicted end to end.

:func:`run_workload` puts a training row as a workload with what its source states held (tensor,
pipeline, virtual and context parallel sizes, micro-batch and global batch from the ``notes`` keys,
checkpointing, FSDP full sharding), :func:`run_topology` its nodes (8 GPUs, 72 for GB200/GB300 racks)
and network (the one it names; the bandwidth per node its source states, ``node_gbps``, else
400 Gbit/s per GPU), and :func:`predict_run` what the API would answer
for it: the layout search over what the row leaves out, then the estimate (with the efficiency-at-scale
term it is given). :func:`scale_term` fits that term (:mod:`solver.throughput.at_scale`) on the at-scale
runs of the allowed sources, without the rows to exclude (remembered per index).
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

import msgspec

from solver.catalog.network import Network
from solver.errors import SolverError
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.at_scale import AT_SCALE_GPUS, ScalePoint, ScaleTerm, fit_scale_term, in_scale_sources
from solver.throughput.calibration import IndexMemo, ProfileIndex
from solver.throughput.class_rows import row_recompute, stated_node_gbps
from solver.throughput.estimate import ThroughputEstimate, Topology, estimate_throughput
from solver.throughput.layout_search import LayoutCache, LayoutFailure, search_layout
from solver.throughput.observations import Observation
from solver.throughput.workclass import notes_fields

__all__ = ["predict_run", "run_family", "run_topology", "run_workload", "scale_term"]

_PRECISION: Final = {"bf16": "bf16", "fp32": "fp32", "fp8": "fp8", "int8": "int8", "int4": "int4"}
_NETWORKS: Final = {"infiniband", "roce", "efa", "ethernet", "gpudirect_tcpx"}
_FULL_SHARD: Final = re.compile(r"FULL_SHARD|zero-?3", re.IGNORECASE)
_TERMS: IndexMemo[frozenset[int], ScaleTerm] = IndexMemo(256)
_LAYOUTS: IndexMemo[str, LayoutCache] = IndexMemo(4)


def run_family(obs: Observation) -> str:
    """The publisher a row comes from (all of its files, pages and result rounds together)."""
    return obs.group.split(" (suite")[0]


def run_topology(obs: Observation) -> Topology:
    count = obs.profile.gpu_count
    per_node = 72 if obs.profile.gpu_id.startswith(("gb200", "gb300")) else 8
    per_instance = count if not obs.multinode else min(count, per_node)
    kind = obs.network if obs.network in _NETWORKS else "infiniband"
    gbps = stated_node_gbps(obs.profile.notes) or 400.0 * per_instance
    network = Network(network_class=kind, gbps=gbps, derived=False, rule="the row's cluster")  # type: ignore[arg-type]
    return Topology(gpus_per_instance=per_instance, interconnect=obs.interconnect, network=network)


def _stated_layout(fields: dict[str, str], count: int, heads: int, seq: int) -> dict[str, Any]:
    """The layout fields the row's notes state (those that divide the run)."""
    stated: dict[str, Any] = {}
    for key, field in (("tp", "tp"), ("pp", "pp"), ("cp", "cp"), ("vp", "vpp"), ("mbs", "micro_batch")):
        value = fields.get(key, "")
        if value.isdigit() and int(value) >= 1:
            stated[field] = int(value)
    tp, pp, cp = stated.get("tp", 1), stated.get("pp", 1), stated.get("cp", 1)
    if count % (tp * pp * cp) or heads % tp or (stated.get("vpp", 1) > 1 and pp < 2):
        return {}
    gbs = fields.get("gbs", "")
    if gbs.isdigit():
        stated["global_batch_tokens"] = int(gbs) * max(seq, 1)
    return stated


def run_workload(obs: Observation) -> Workload | None:
    """The training row as a workload, its stated layout held (``None`` when it cannot be put)."""
    arch, precision = obs.arch, _PRECISION.get(obs.hardware.precision)
    if arch is None or precision is None:
        return None
    notes = obs.profile.notes
    fields = notes_fields(notes)
    method = fields.get("method", "full") if obs.row_class == "lora" else "full"
    if method == "qlora":
        precision = "nf4" if "nf4" in notes.lower() else "int4"
    seq = int(obs.work.setting) if obs.work.setting.isdigit() else 0
    body: dict[str, Any] = {
        "kind": "train" if obs.row_class in ("pretrain", "encoder_vision") and obs.profile.task == "train" else "fine_tune",
        "model": {"name": arch.name}, "precision": precision, "method": method,
        "recompute": row_recompute(notes), "seq_len": seq or None, "gpu_count": obs.profile.gpu_count,
        "stack": obs.stack, "micro_batch": max(1, obs.profile.batch_size or 1),
    }  # fmt: skip
    body |= _stated_layout(fields, obs.profile.gpu_count, arch.attention_heads or 1, seq)
    if _FULL_SHARD.search(notes) and obs.profile.gpu_count > body.get("tp", 1):
        body["sharding"] = "zero3"
    try:
        return msgspec.convert(body, Workload)
    except msgspec.ValidationError:
        return None


def predict_run(
    obs: Observation, index: ProfileIndex, exclude: frozenset[int], scale: ScaleTerm | None
) -> ThroughputEstimate | None:
    """The API's answer for the row (its units, its GPUs): the layout search over what it leaves out,
    then the estimate; ``None`` when the row cannot be put as a workload."""
    workload = run_workload(obs)
    if workload is None:
        return None
    gpu, topology = index.gpus[obs.profile.gpu_id], run_topology(obs)
    count = obs.profile.gpu_count
    try:
        resolved = resolve_workload(workload)
        found = search_layout(resolved, gpu, count, topology, index, cache=_LAYOUTS.of(index).setdefault("", LayoutCache()),
                              exclude=exclude)  # fmt: skip
        laid = resolved if isinstance(found, LayoutFailure) else found.workload  # it ran: take it as stated
        estimate = estimate_throughput(laid, gpu, count, obs.interconnect, [], index.gpus, index=index,
                                       topology=topology, exclude=exclude, scale=scale)  # fmt: skip
    except SolverError:
        return None
    return estimate


def _scale_runs(index: ProfileIndex, exclude: frozenset[int]) -> list[Observation]:
    """The at-scale pretraining runs of the allowed sources (:data:`~solver.throughput.at_scale.SCALE_SOURCES`)
    not in ``exclude``."""
    return [
        obs
        for obs in index.observations
        if obs.mode == "train" and obs.row_class == "pretrain" and obs.profile.gpu_count >= AT_SCALE_GPUS
        and obs.profile.profile_id not in exclude and in_scale_sources(run_family(obs))
    ]  # fmt: skip


def scale_term(index: ProfileIndex, exclude: frozenset[int] = frozenset()) -> ScaleTerm:
    """The efficiency-at-scale term fitted on ``index``'s at-scale runs without ``exclude``.

    Each run is compared with what the model makes of it with every at-scale run hidden: the term
    corrects the class and step models, so a run must not be answered by a measured profile (its own,
    or a twin of it from another release of the same table), which would read as a ratio of 1."""
    memo = _TERMS.of(index)
    found = memo.get(exclude)
    if found is None:
        runs = _scale_runs(index, exclude)
        hidden = exclude | {obs.profile.profile_id for obs in runs}
        points = []
        for obs in runs:
            predicted = predict_run(obs, index, hidden, None)
            if predicted is not None and predicted.value > 0:
                ratio = math.log(obs.profile.value / predicted.value)
                points.append(ScalePoint(gpus=obs.profile.gpu_count, params=obs.arch.params_b * 1e9 if obs.arch else 1e11,
                                         log_ratio=ratio, source=run_family(obs),
                                         architecture=index.gpus[obs.profile.gpu_id].architecture))  # fmt: skip
        found = memo[exclude] = fit_scale_term(points)
    return found
