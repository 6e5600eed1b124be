"""``python -m sglang.bench_serving --output-file FILE`` results: one JSON object a line, one line a run.

``bench_serving.benchmark`` appends its ``result`` dictionary to the file: the arguments (``backend``,
``dataset_name``, ``request_rate`` (a number, ``Infinity`` or ``"trace"``), ``max_concurrency``,
``random_input_len`` ...) and the results (``duration``, ``completed``, ``total_input_tokens``,
``total_output_tokens``, ``total_output_tokens_retokenized``, ``output_throughput``, the
``{mean,median,std,p99}_e2e_latency_ms`` and ``median_ttft_ms`` / ``median_itl_ms``). Later versions add
``request_throughput``, ``total_throughput``, ``p99_ttft_ms``, ``{median,p99}_tpot_ms`` and
``server_info`` (the server's ``/get_server_info``: ``model_path``, ``served_model_name``, ``tp_size``,
``dp_size``, ``version``). Where a line has no ``request_throughput`` it is ``completed / duration``, and
the total token throughput ``(total_input_tokens + total_output_tokens) / duration``, as bench_serving
computes them. SGLang writes no GPU: it comes from the upload's ``gpu``; the model, tensor-parallel degree
and replicas (``dp_size``) from ``server_info`` where the line has it, else from the upload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, number, serving_run, whole
from pricing.measurements.vllm_bench import read_json_objects

__all__ = ["parse_sglang_bench"]

_TOOL: Final = "sglang bench_serving"
_REQUIRED: Final = (
    "backend",
    "completed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "output_throughput",
)


def _server(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the line's ``server_info`` states: model, tp, replicas, engine version."""
    info = data.get("server_info")
    if isinstance(info, list) and info and isinstance(info[0], dict):
        info = info[0]
    if not isinstance(info, dict):
        return {}
    model = info.get("served_model_name") or info.get("model_path")
    version = info.get("version")
    return {
        "model": model if isinstance(model, str) and model.strip() else None,
        "tp": whole(info, "tp_size"),
        "replicas": whole(info, "dp_size"),
        "engine_version": version if isinstance(version, str) else None,
    }


def _per_second(data: Mapping[str, Any], key: str, total: float | None, duration: float) -> float | None:
    stated = number(data, key)
    return stated if stated is not None else (total / duration if total is not None else None)


def _run(data: Mapping[str, Any], facts: UploadFacts, line: int) -> MeasuredRun:
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise MeasurementError(
            "file", f"not a {_TOOL} result: run {line} has no {', '.join(map(repr, missing))}"
        )
    completed, duration = whole(data, "completed") or 0, number(data, "duration")
    if not completed or not duration:
        raise MeasurementError("file", f"run {line} completed no request ('completed' is 0)")
    inputs, outputs = number(data, "total_input_tokens"), number(data, "total_output_tokens")
    rate = number(data, "request_rate")
    return serving_run(
        facts,
        tool="sglang_bench",
        engine="sglang",
        completed=completed,
        input_tokens=inputs,
        output_tokens=outputs,
        **_server(data),
        request_rate=rate if rate is not None and rate != float("inf") else None,
        max_concurrency=whole(data, "max_concurrency"),
        requests_per_s=_per_second(data, "request_throughput", float(completed), duration),
        output_tokens_per_s=number(data, "output_throughput"),
        total_tokens_per_s=_per_second(
            data, "total_throughput", (inputs or 0) + (outputs or 0) if inputs is not None else None, duration
        ),
        ttft_p50_ms=number(data, "median_ttft_ms"),
        ttft_p99_ms=number(data, "p99_ttft_ms"),
        tpot_p50_ms=number(data, "median_tpot_ms"),
        tpot_p99_ms=number(data, "p99_tpot_ms"),
    )


def parse_sglang_bench(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """Every run of an SGLang ``bench_serving`` output file (module docstring)."""
    return [_run(data, facts, n) for n, data in enumerate(read_json_objects(body, _TOOL), start=1)]
