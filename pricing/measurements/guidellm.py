"""GuideLLM ``benchmarks.json``: the ``GenerativeBenchmarksReport`` that ``guidellm run`` writes.

The report (``metadata.version`` 2, GuideLLM 0.8) holds the run's ``config.spec`` (``backend.model``, the
``backend.kind``) and one ``GenerativeBenchmark`` per load in ``benchmarks``: its
``config.strategy`` (``type_`` ``synchronous``, ``concurrent`` with ``streams``, ``throughput``,
``constant`` / ``poisson`` with ``rate`` ...) and its ``metrics``, each a ``StatusDistributionSummary``
whose ``successful`` part is read: ``request_totals`` (the requests that completed),
``requests_per_second``, ``output_tokens_per_second`` and ``tokens_per_second`` (their ``mean`` is the
rate over the benchmark), ``prompt_token_count`` / ``output_token_count`` (tokens per request),
``time_to_first_token_ms`` and ``time_per_output_token_ms`` (``median`` and ``percentiles.p99``). Each
benchmark is a run. GuideLLM writes no GPU nor layout: ``gpu``, ``tp`` (and ``replicas``) come from the
upload; the engine is ``vllm`` for GuideLLM's in-process ``vllm_python*`` backends, else the upload's
``engine`` (else ``unknown``: an HTTP endpoint does not say what serves it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, number, serving_run, whole
from pricing.measurements.vllm_bench import read_json_objects

__all__ = ["parse_guidellm"]

_TOOL: Final = "GuideLLM benchmarks report"
_REQUIRED: Final = (
    "request_totals",
    "requests_per_second",
    "output_tokens_per_second",
    "prompt_token_count",
    "output_token_count",
)


def _successful(metrics: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The ``successful`` part of metric ``name`` (a number for ``request_totals``, else a distribution)."""
    metric = metrics.get(name)
    part = metric.get("successful") if isinstance(metric, dict) else None
    return part if isinstance(part, dict) else {"value": part}


def _percentile(metrics: Mapping[str, Any], name: str, key: str) -> float | None:
    percentiles = _successful(metrics, name).get("percentiles")
    return number(percentiles, key) if isinstance(percentiles, dict) else None


def _backend(report: Mapping[str, Any], facts: UploadFacts) -> tuple[str | None, str]:
    """The model the report's backend named, and the engine."""
    config = report.get("config")
    spec = config.get("spec") if isinstance(config, dict) else None
    backend = spec.get("backend") if isinstance(spec, dict) else None
    backend = backend if isinstance(backend, dict) else {}
    model, kind = backend.get("model"), str(backend.get("kind") or "")
    engine = "vllm" if kind.startswith("vllm_python") else facts.engine or "unknown"
    return (model if isinstance(model, str) and model.strip() else None), engine


def _load(benchmark: Mapping[str, Any]) -> tuple[float | None, int | None]:
    """(request rate, concurrency) of the benchmark's strategy."""
    config = benchmark.get("config")
    strategy = config.get("strategy") if isinstance(config, dict) else None
    strategy = strategy if isinstance(strategy, dict) else {}
    kind = strategy.get("type_")
    concurrency = {"synchronous": 1, "concurrent": whole(strategy, "streams")}.get(str(kind))
    if kind == "throughput":
        concurrency = whole(strategy, "max_concurrency")
    return number(strategy, "rate"), concurrency


def _run(benchmark: Mapping[str, Any], facts: UploadFacts, model: str | None, engine: str) -> MeasuredRun:
    metrics = benchmark.get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    missing = [name for name in _REQUIRED if name not in metrics]
    if missing:
        raise MeasurementError("file", f"not a {_TOOL}: a benchmark has no {', '.join(map(repr, missing))}")
    completed = int(number(_successful(metrics, "request_totals"), "value") or 0)
    rate, concurrency = _load(benchmark)
    mean = {
        name: number(_successful(metrics, name), "mean")
        for name in ("requests_per_second", "output_tokens_per_second", "tokens_per_second")
    }
    return serving_run(
        facts,
        tool="guidellm",
        engine=engine,
        completed=completed,
        input_tokens=(number(_successful(metrics, "prompt_token_count"), "mean") or 0) * completed,
        output_tokens=(number(_successful(metrics, "output_token_count"), "mean") or 0) * completed,
        model=model,
        request_rate=rate,
        max_concurrency=concurrency,
        requests_per_s=mean["requests_per_second"],
        output_tokens_per_s=mean["output_tokens_per_second"],
        total_tokens_per_s=mean["tokens_per_second"],
        ttft_p50_ms=number(_successful(metrics, "time_to_first_token_ms"), "median"),
        ttft_p99_ms=_percentile(metrics, "time_to_first_token_ms", "p99"),
        tpot_p50_ms=number(_successful(metrics, "time_per_output_token_ms"), "median"),
        tpot_p99_ms=_percentile(metrics, "time_per_output_token_ms", "p99"),
    )


def parse_guidellm(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """Every benchmark of a GuideLLM ``benchmarks.json`` (module docstring)."""
    runs: list[MeasuredRun] = []
    for report in read_json_objects(body, _TOOL):
        benchmarks = report.get("benchmarks")
        if not isinstance(benchmarks, list) or not benchmarks:
            raise MeasurementError("file", f"not a {_TOOL}: no 'benchmarks'")
        model, engine = _backend(report, facts)
        runs.extend(_run(b if isinstance(b, dict) else {}, facts, model, engine) for b in benchmarks)
    return runs
