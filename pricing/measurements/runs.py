"""What one benchmark run measured, in the tool's own figures (no catalog lookups: the service resolves names).

A :class:`MeasuredRun` is either a serving run (one replica's request throughput, token throughputs and
latency percentiles at a load) or a training run (tokens/s over all its GPUs, TFLOPS and MFU per GPU,
peak memory). :class:`UploadFacts` are the facts an upload states for what the tool's file leaves out;
what the file states wins over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from pricing.errors import MeasurementError

__all__ = [
    "MeasuredRun",
    "RunKind",
    "UploadFacts",
    "number",
    "require",
    "serving_run",
    "stated_peak",
    "training_run",
    "whole",
]

RunKind = Literal["serving", "training"]


class UploadFacts(msgspec.Struct, frozen=True, kw_only=True):
    """Facts given with an upload, each used only where the file does not state it."""

    model: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    tp: int | None = None
    replicas: int | None = None
    seq_len: int | None = None
    batch_size: int | None = None
    precision: str | None = None
    engine_version: str | None = None
    engine: str | None = None
    """Serving: the engine behind the benchmarked endpoint, where the tool does not know it (AIPerf, GuideLLM)."""
    task: str | None = None
    """Training: ``train`` (pretraining) or ``fine_tune``; each format has its default."""
    method: str | None = None
    """Training: ``full``, ``lora`` or ``qlora`` (default ``full``)."""
    max_memory_allocated_gib: float | None = None
    """``torch.cuda.max_memory_allocated()`` of the run's busiest GPU, in GiB, where the file gives no peak."""
    max_memory_reserved_gib: float | None = None
    """``torch.cuda.max_memory_reserved()``, in GiB: the peak a plan must fit (taken before the allocated one)."""


class MeasuredRun(msgspec.Struct, frozen=True, kw_only=True):
    """One run as its tool reported it. Serving figures are per replica (``tp`` GPUs); training figures
    cover ``gpu_count`` GPUs (``tokens_per_s``) or one GPU (``tflops_per_gpu``, ``mfu``, ``peak_memory_gib``)."""

    kind: RunKind
    tool: str
    model: str
    gpu: str
    gpu_count: int
    tp: int = 1
    engine: str
    engine_version: str | None = None
    precision: str = "bf16"
    # serving
    input_tokens: float | None = None
    output_tokens: float | None = None
    request_rate: float | None = None
    max_concurrency: int | None = None
    requests_per_s: float | None = None
    output_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    tpot_p50_ms: float | None = None
    tpot_p99_ms: float | None = None
    # training
    task: str = "train"
    method: str = "full"
    seq_len: int | None = None
    batch_size: int | None = None
    tokens_per_s: float | None = None
    tflops_per_gpu: float | None = None
    mfu: float | None = None
    peak_memory_gib: float | None = None
    steps: int | None = None


def stated_peak(facts: UploadFacts) -> float | None:
    """The peak memory the upload states: ``max_memory_reserved`` (what the allocator held), else
    ``max_memory_allocated``."""
    return facts.max_memory_reserved_gib or facts.max_memory_allocated_gib


def require[T](value: T | None, field: str, what: str) -> T:
    """``value``, or a :class:`MeasurementError` naming ``field`` (the upload parameter that can give it)."""
    if value is None:
        raise MeasurementError(field, f"{what} is not in the file; give it as the upload parameter {field!r}")
    return value


def training_run(
    facts: UploadFacts, *, tool: str, engine: str, default_task: str = "train", **measured: Any
) -> MeasuredRun:
    """A training run of ``tool``: what the file measured (``measured``: ``gpu_count``, ``tokens_per_s``
    … and, where the file states them, ``gpu``, ``seq_len``, ``tp``, ``batch_size``), the rest from the
    upload (a fact neither gives is a :class:`MeasurementError` naming it)."""
    stated: dict[str, Any] = {
        "gpu": facts.gpu,
        "seq_len": facts.seq_len,
        "tp": facts.tp or 1,
        "batch_size": facts.batch_size,
        **{name: value for name, value in measured.items() if value is not None},
    }
    return MeasuredRun(
        kind="training",
        tool=tool,
        engine=engine,
        model=require(facts.model, "model", "the model"),
        engine_version=facts.engine_version,
        precision=facts.precision or "bf16",
        task=facts.task or default_task,
        method=facts.method or "full",
        **{
            **stated,
            "gpu": require(stated["gpu"], "gpu", "the GPU"),
            "seq_len": require(stated["seq_len"], "seq_len", "the sequence length"),
            "peak_memory_gib": measured.get("peak_memory_gib") or stated_peak(facts),
        },
    )


def number(data: Mapping[str, Any], key: str) -> float | None:
    """``data[key]`` where it is a JSON number (not a boolean), else ``None``."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def whole(data: Mapping[str, Any], key: str) -> int | None:
    """``data[key]`` where it is a whole number (or a string of digits, as ``--metadata`` writes), else ``None``."""
    value = data.get(key)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_PER_REPLICA = ("requests_per_s", "output_tokens_per_s", "total_tokens_per_s")


def serving_run(
    facts: UploadFacts,
    *,
    tool: str,
    engine: str,
    completed: int,
    input_tokens: float | None,
    output_tokens: float | None,
    **measured: Any,
) -> MeasuredRun:
    """One replica's serving run of ``tool``: ``completed`` requests of ``input_tokens`` / ``output_tokens``
    in all; what the file measured (``measured``: ``requests_per_s`` ... over the whole run, and where the
    file states them ``model``, ``gpu``, ``gpu_count`` (over all replicas), ``tp``, ``replicas``,
    ``engine_version``), the rest from the upload. The upload's ``model`` wins over the file's (a served
    name may be a local path); the throughputs are divided among the replicas (the file's, else the
    upload's, else one), and without a stated ``tp`` each replica has ``gpu_count / replicas`` GPUs."""
    if completed <= 0:
        raise MeasurementError("file", "the run completed no request")
    stated = {name: value for name, value in measured.items() if value is not None}
    replicas = int(stated.pop("replicas", None) or facts.replicas or 1)
    count = stated.pop("gpu_count", None)  # the GPUs the file saw, over all replicas
    if count and not (stated.get("tp") or facts.tp):
        if count % replicas:
            raise MeasurementError("replicas", f"{replicas} replicas do not divide the {count} GPUs")
        stated["tp"] = count // replicas
    for name in _PER_REPLICA:
        if name in stated:
            stated[name] = stated[name] / replicas
    return MeasuredRun(
        kind="serving",
        tool=tool,
        engine=engine,
        precision=facts.precision or "bf16",
        input_tokens=input_tokens / completed if input_tokens is not None else None,
        output_tokens=output_tokens / completed if output_tokens is not None else None,
        **{
            "engine_version": facts.engine_version,
            **stated,
            "model": require(facts.model or stated.get("model"), "model", "the model"),
            "gpu": require(stated.get("gpu") or facts.gpu, "gpu", "the GPU"),
            "tp": (tp := require(stated.get("tp") or facts.tp, "tp", "the tensor-parallel degree")),
            "gpu_count": tp,
        },
    )
