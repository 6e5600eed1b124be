"""Measured rows as the workloads they ran, so the accuracy tests can predict a row end to end.

:func:`predict_row` asks :func:`~solver.throughput.estimate_throughput` (or, for prompt-only rows,
:func:`~solver.throughput.prompt_seconds`) for the workload a row measured, on the row's own GPUs and
links, with a set of rows left out; ``None`` when the row cannot be put as a workload (a model outside
the catalog, a precision workloads cannot state such as NVFP4, a layout the model does not admit).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from solver.calibration import ProfileIndex
from solver.class_rows import row_recompute
from solver.errors import SolverError
from solver.network import Network
from solver.observations import Observation
from solver.throughput import Topology, estimate_throughput, prompt_seconds
from solver.workclass import notes_fields
from solver.workload import Workload, resolve_workload

__all__ = ["predict_row", "source_family"]

_PRECISION = {"bf16": "bf16", "fp32": "fp32", "fp8": "fp8", "int8": "int8", "int4": "int4"}
_NETWORKS = {"infiniband", "roce", "efa", "ethernet", "gpudirect_tcpx"}


def source_family(obs: Observation) -> str:
    """The publisher a row comes from (all of its files, pages and result rounds together)."""
    return obs.group.split(" (suite")[0]


def _topology(obs: Observation) -> Topology:
    count = obs.profile.gpu_count
    per_node = 72 if obs.profile.gpu_id.startswith(("gb200", "gb300")) else 8
    per_instance = count if not obs.multinode else min(count, per_node)
    kind = obs.network if obs.network in _NETWORKS else "infiniband"
    network = Network(network_class=kind, gbps=400.0 * per_instance, derived=False, rule="the row's cluster")  # type: ignore[arg-type]
    return Topology(gpus_per_instance=per_instance, interconnect=obs.interconnect, network=network)


def _training_fields(obs: Observation) -> dict[str, Any] | None:
    arch = obs.arch
    if arch is None:
        return None
    notes = obs.profile.notes
    fields = notes_fields(notes)
    method = fields.get("method", "full") if obs.row_class == "lora" else "full"
    precision = _PRECISION.get(obs.hardware.precision)
    if precision is None:
        return None
    if method == "qlora":
        precision = "nf4" if "nf4" in notes.lower() else "int4"
    count = obs.profile.gpu_count
    tp = int(fields.get("tp", "1") or 1)
    tp = tp if count % tp == 0 and arch.attention_heads % tp == 0 else 1
    sharded = re.search(r"FULL_SHARD|zero-?3", notes, re.IGNORECASE)
    return {
        "kind": "train"
        if obs.row_class in ("pretrain", "encoder_vision") and obs.profile.task == "train"
        else "fine_tune",
        "model": {"name": arch.name},
        "precision": precision,
        "method": method,
        "recompute": row_recompute(notes),
        "batch_size": max(1, obs.profile.batch_size or 1),
        "seq_len": int(obs.work.setting) if obs.work.setting.isdigit() else None,
        "gpu_count": count,
        "tp": tp,
        "sharding": "zero3" if sharded and count // tp > 1 else "none",
        "stack": obs.stack,
    }


def _inference_fields(obs: Observation) -> tuple[dict[str, Any], int | None] | None:
    arch = obs.arch
    precision = _PRECISION.get(obs.hardware.precision)
    if arch is None or precision is None or not arch.is_transformer:
        return None
    base: dict[str, Any] = {"model": {"name": arch.name}, "precision": precision, "stack": obs.stack}
    count = obs.profile.gpu_count
    lengths = obs.work.setting.split("/")
    if len(lengths) != 2 or not all(part.isdigit() for part in lengths):
        if obs.work.setting.isdigit():  # encoder inference over fixed-length samples
            return {
                **base,
                "kind": "batch_inference",
                "seq_len": int(obs.work.setting),
                "gpu_count": count,
            }, None
        return None
    prompt, output = int(lengths[0]), int(lengths[1])
    if obs.row_class == "decode" and output > 0:
        return {
            **base,
            "kind": "serving",
            "seq_len": prompt + output,
            "batch_size": 1,
            "gpu_count": count,
        }, None
    if obs.row_class == "offline" and output > 0:
        if arch.attention_heads % count:
            return None
        fields = {
            **base,
            "kind": "batch_inference",
            "seq_len": prompt + output,
            "gpu_count": count,
            "tp": count,
        }
        return fields, output
    return None


def predict_row(obs: Observation, index: ProfileIndex, exclude: frozenset[int]) -> float | None:
    """The model's value for ``obs`` (in the row's own units and GPU count) with ``exclude`` hidden."""
    gpu = index.gpus[obs.profile.gpu_id]
    try:
        if obs.mode == "train":
            fields = _training_fields(obs)
            if fields is None:
                return None
            workload = resolve_workload(msgspec.convert(fields, Workload))
            estimate = estimate_throughput(
                workload, gpu, obs.profile.gpu_count, obs.interconnect, [], index.gpus,
                index=index, topology=_topology(obs), exclude=exclude,
            )  # fmt: skip
            return estimate.value
        if obs.row_class == "prefill" and obs.mode == "prefill" and obs.arch is not None:
            prompt = int(obs.work.setting.split("/")[0])
            precision = _PRECISION.get(obs.hardware.precision)
            if precision is None or obs.profile.gpu_count != 1:
                return None
            fields = {"kind": "batch_inference", "model": {"name": obs.arch.name}, "precision": precision,
                      "stack": obs.stack}  # fmt: skip
            workload = resolve_workload(msgspec.convert(fields, Workload))
            per_prompt, _ = prompt_seconds(workload, gpu, 1, "none", index, prompt, exclude=exclude)
            return prompt / per_prompt
        found = _inference_fields(obs)
        if found is None:
            return None
        fields, output = found
        workload = resolve_workload(msgspec.convert(fields, Workload))
        estimate = estimate_throughput(
            workload, gpu, obs.profile.gpu_count, obs.interconnect, [], index.gpus,
            index=index, output_len=output, exclude=exclude,
        )  # fmt: skip
        return estimate.value
    except (SolverError, msgspec.ValidationError):
        return None
