"""NVIDIA AIPerf ``profile_export_aiperf.json``: one benchmark run's aggregated statistics.

AIPerf's ``JsonExporter`` writes each metric as ``{"unit", "avg", "p50", "p99", ...}`` keyed by its tag:
under ``records`` (AIPerf 0.1, the ``MetricResult`` with ``tag`` and ``header`` too) or at the top
level (``JsonExportData`` of later versions, which mirrors GenAI-Perf's export). Read: ``request_count``
(the requests that completed), ``request_throughput`` (requests/s), ``output_token_throughput``
(tokens/s), ``input_sequence_length`` / ``output_sequence_length`` (tokens per request),
``benchmark_duration`` with ``total_isl`` / ``total_osl`` (the total token throughput), ``ttft`` /
``time_to_first_token`` and ``inter_token_latency`` (ms, AIPerf's per-request
``(latency - TTFT) / (output tokens - 1)``, vLLM's TPOT). ``input_config`` is the ``UserConfig`` the run
had: the model is ``endpoint.model_names[0]``, the load ``loadgen.concurrency`` / ``loadgen.request_rate``.
AIPerf writes no GPU, layout nor engine: ``gpu``, ``tp`` (and ``replicas``) come from the upload, and
the engine from its ``engine`` (else ``unknown``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, number, serving_run, whole
from pricing.measurements.vllm_bench import read_json_objects

__all__ = ["parse_aiperf"]

_TOOL: Final = "AIPerf profile export"
_REQUIRED: Final = (
    "request_count",
    "request_throughput",
    "output_token_throughput",
    "input_sequence_length",
    "output_sequence_length",
)


def _metrics(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Each metric's statistics by tag (``records`` of AIPerf 0.1, else the top level)."""
    records = data.get("records")
    source = records if isinstance(records, dict) else data
    return {
        tag: stats
        for tag, stats in source.items()
        if isinstance(stats, dict) and isinstance(stats.get("unit"), str) and "avg" in stats
    }


def _stat(metrics: Mapping[str, Mapping[str, Any]], stat: str, *tags: str) -> float | None:
    for tag in tags:
        if tag in metrics:
            return number(metrics[tag], stat)
    return None


def _first(items: Any, key: str) -> Any:
    """``items[0][key]`` where ``items`` is a non-empty list of objects, else ``None``."""
    return items[0].get(key) if isinstance(items, list) and items and isinstance(items[0], dict) else None


def _config(data: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The model the run named and its load settings (``concurrency``, ``request_rate`` / ``rate``): the
    ``UserConfig`` of AIPerf 0.1 (``endpoint.model_names``, ``loadgen``) or the ``BenchmarkConfig`` of later
    versions (``models.items[].name``, the ``profiling`` phase of ``phases``)."""
    config = data.get("input_config")
    config = config if isinstance(config, dict) else {}
    endpoint, models = config.get("endpoint") or {}, config.get("models") or {}
    names = endpoint.get("model_names") if isinstance(endpoint, dict) else None
    model = names[0] if isinstance(names, list) and names else None
    model = model or (_first(models.get("items"), "name") if isinstance(models, dict) else None)
    phases = config.get("phases")
    loads: list[Mapping[str, Any]] = [
        phase
        for phase in (phases if isinstance(phases, list) else [])
        if isinstance(phase, dict) and phase.get("kind") == "profiling"
    ]
    loadgen = config.get("loadgen")
    load = loadgen if isinstance(loadgen, dict) else (loads or [{}])[0]
    return (model if isinstance(model, str) and model.strip() else None), load


def _gpu(data: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """The GPU AIPerf's DCGM telemetry saw (``telemetry_data.endpoints.*.gpus.*.gpu_name``) and how many."""
    telemetry = data.get("telemetry_data")
    endpoints = telemetry.get("endpoints") if isinstance(telemetry, dict) else None
    gpus = [
        gpu
        for endpoint in (endpoints or {}).values()
        if isinstance(endpoint, dict) and isinstance(endpoint.get("gpus"), dict)
        for gpu in endpoint["gpus"].values()
        if isinstance(gpu, dict) and isinstance(gpu.get("gpu_name"), str)
    ]
    names = {gpu["gpu_name"] for gpu in gpus}
    if len(names) > 1:
        raise MeasurementError("gpu", f"the telemetry names several GPUs ({', '.join(sorted(names))})")
    return (names.pop(), len(gpus)) if names else (None, None)


def _total_tokens_per_s(metrics: Mapping[str, Mapping[str, Any]]) -> float | None:
    stated = _stat(metrics, "avg", "total_token_throughput")
    duration = _stat(metrics, "avg", "benchmark_duration")
    total_in, total_out = _stat(metrics, "avg", "total_isl"), _stat(metrics, "avg", "total_osl")
    if stated is not None or not duration or total_in is None or total_out is None:
        return stated
    return (total_in + total_out) / duration


def _run(data: Mapping[str, Any], facts: UploadFacts) -> MeasuredRun:
    metrics = _metrics(data)
    missing = [tag for tag in _REQUIRED if tag not in metrics]
    if missing:
        raise MeasurementError("file", f"not an {_TOOL}: no {', '.join(map(repr, missing))} statistics")
    completed = int(_stat(metrics, "avg", "request_count") or 0)
    (model, load), (gpu, count) = _config(data), _gpu(data)
    ttft = ("ttft", "time_to_first_token")
    return serving_run(
        facts,
        tool="aiperf",
        engine=facts.engine or "unknown",
        completed=completed,
        input_tokens=(_stat(metrics, "avg", "input_sequence_length") or 0) * completed,
        output_tokens=(_stat(metrics, "avg", "output_sequence_length") or 0) * completed,
        model=model,
        gpu=gpu,
        gpu_count=count,
        request_rate=number(load, "request_rate") or number(load, "rate"),
        max_concurrency=whole(load, "concurrency"),
        requests_per_s=_stat(metrics, "avg", "request_throughput"),
        output_tokens_per_s=_stat(metrics, "avg", "output_token_throughput"),
        total_tokens_per_s=_total_tokens_per_s(metrics),
        ttft_p50_ms=_stat(metrics, "p50", *ttft),
        ttft_p99_ms=_stat(metrics, "p99", *ttft),
        tpot_p50_ms=_stat(metrics, "p50", "inter_token_latency"),
        tpot_p99_ms=_stat(metrics, "p99", "inter_token_latency"),
    )


def parse_aiperf(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The run of an AIPerf ``profile_export_aiperf.json`` (module docstring)."""
    return [_run(data, facts) for data in read_json_objects(body, _TOOL)]
