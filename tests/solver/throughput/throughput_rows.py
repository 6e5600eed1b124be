"""Measured rows as the workloads they ran, so the accuracy tests can predict a row end to end.

:func:`predict_row` asks :func:`~solver.throughput.estimate.estimate_throughput` (or, for prompt-only rows,
:func:`~solver.throughput.estimate.prompt_seconds`) for the workload a row measured, on the row's own GPUs and
links, with a set of rows left out; ``None`` when the row cannot be put as a workload (a model outside
the catalog, a precision workloads cannot state such as NVFP4, a layout the model does not admit).
"""

from __future__ import annotations

from typing import Any

import msgspec

from solver.errors import SolverError
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.calibration import ProfileIndex
from solver.throughput.estimate import estimate_throughput, prompt_seconds
from solver.throughput.measured_runs import predict_run, run_family, scale_term
from solver.throughput.observations import Observation

__all__ = ["predict_estimate", "predict_row", "source_family"]

_PRECISION = {"bf16": "bf16", "fp32": "fp32", "fp8": "fp8", "int8": "int8", "int4": "int4"}
_NETWORKS = {"infiniband", "roce", "efa", "ethernet", "gpudirect_tcpx"}


def source_family(obs: Observation) -> str:
    """The publisher a row comes from (all of its files, pages and result rounds together)."""
    return run_family(obs)


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
    found = predict_estimate(obs, index, exclude)
    return None if found is None else found[0]


def predict_estimate(
    obs: Observation, index: ProfileIndex, exclude: frozenset[int]
) -> tuple[float, tuple[float, float] | None] | None:
    """The model's value for ``obs`` and its 10-90 % band (``None`` for prompt-only rows)."""
    gpu = index.gpus[obs.profile.gpu_id]
    try:
        if obs.mode == "train":
            run = predict_run(obs, index, exclude, scale_term(index, exclude))
            return None if run is None else (run.value, (run.band.low, run.band.high))
        if obs.row_class == "prefill" and obs.mode == "prefill" and obs.arch is not None:
            prompt = int(obs.work.setting.split("/")[0])
            precision = _PRECISION.get(obs.hardware.precision)
            if precision is None or obs.profile.gpu_count != 1:
                return None
            fields = {"kind": "batch_inference", "model": {"name": obs.arch.name}, "precision": precision,
                      "stack": obs.stack}  # fmt: skip
            workload = resolve_workload(msgspec.convert(fields, Workload))
            per_prompt, _ = prompt_seconds(workload, gpu, 1, "none", index, prompt, exclude=exclude)
            return prompt / per_prompt, None
        found = _inference_fields(obs)
        if found is None:
            return None
        fields, output = found
        workload = resolve_workload(msgspec.convert(fields, Workload))
        estimate = estimate_throughput(
            workload, gpu, obs.profile.gpu_count, obs.interconnect, [], index.gpus,
            index=index, output_len=output, exclude=exclude,
        )  # fmt: skip
        return estimate.value, (estimate.band.low, estimate.band.high)
    except (SolverError, msgspec.ValidationError):
        return None
