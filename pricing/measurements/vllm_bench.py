"""``vllm bench serve --save-result`` (``benchmarks/benchmark_serving.py``) result files.

The file is the JSON object vLLM's ``vllm/benchmarks/serve.py`` writes: ``model_id``, ``backend``,
``request_rate`` (a number, or ``"inf"``), ``max_concurrency``, ``completed``, ``total_input_tokens``,
``total_output_tokens``, ``request_throughput``, ``output_throughput``, ``total_token_throughput`` and the
``{mean,median,std,p99}_{ttft,tpot,itl}_ms`` latencies, plus every ``--metadata KEY=VALUE`` pair at the
top level. vLLM writes no GPU: a ``gpu`` metadata value (``"H100"`` or ``"4xNVIDIA_L40S"``: count ×
name) is read, else the upload's ``gpu``. ``tensor_parallel_size`` / ``tp`` metadata, else the upload's
``tp``; when the run went through several replicas (``replicas``, from the upload) its throughputs are
divided among them. With ``--append-result`` the file holds one object per line; each is a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, number, require, whole
from pricing.sheets import MAX_JSON_DEPTH, json_depth_exceeds

__all__ = ["parse_vllm_bench", "read_json_objects"]

_REQUIRED: Final = (
    "model_id",
    "completed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
)
_COUNTED_GPU: Final = re.compile(r"^\s*(\d+)\s*[xX×]\s*(.+?)\s*$")


def read_json_objects(body: bytes, tool: str) -> list[dict[str, Any]]:
    """The JSON object(s) of ``body``: one document, or one object per line (JSON Lines)."""
    if json_depth_exceeds(body):
        raise MeasurementError(
            "file", f"not a {tool} result: JSON nested deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MeasurementError("file", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        document = json.loads(text)
        objects = document if isinstance(document, list) else [document]
    except json.JSONDecodeError:
        objects = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                objects.append(json.loads(line))
            except json.JSONDecodeError as exc:
                reason = f"not a {tool} result: line {line_no} is not JSON ({exc.msg} at column {exc.colno})"
                raise MeasurementError("file", reason) from None
    if not objects or not all(isinstance(o, dict) for o in objects):
        raise MeasurementError("file", f"not a {tool} result: expected a JSON object")
    return objects


def _gpu(data: Mapping[str, Any], facts: UploadFacts) -> tuple[str, int | None]:
    text = data.get("gpu")
    if not isinstance(text, str) or not text.strip():
        return require(facts.gpu, "gpu", "the GPU"), facts.gpu_count
    counted = _COUNTED_GPU.match(text)
    if counted:
        return counted.group(2).replace("_", " "), int(counted.group(1))
    return text.replace("_", " ").strip(), facts.gpu_count


def _layout(data: Mapping[str, Any], facts: UploadFacts, count: int | None) -> tuple[int, int]:
    """(tp, replicas) of the run."""
    replicas = facts.replicas or 1
    tp = whole(data, "tensor_parallel_size") or whole(data, "tp") or facts.tp
    if tp is None and count is not None:
        if count % replicas:
            raise MeasurementError("replicas", f"{replicas} replicas do not divide the {count} GPUs")
        tp = count // replicas
    return require(tp, "tp", "the tensor-parallel degree"), replicas


def _run(data: Mapping[str, Any], facts: UploadFacts) -> MeasuredRun:
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise MeasurementError("file", f"not a vllm bench serve result: no {', '.join(map(repr, missing))}")
    completed = whole(data, "completed")
    if not completed:
        raise MeasurementError("file", "the run completed no request ('completed' is 0)")
    gpu, count = _gpu(data, facts)
    tp, replicas = _layout(data, facts, count)
    rate = data.get("request_rate")
    inputs, outputs = number(data, "total_input_tokens"), number(data, "total_output_tokens")
    requests, output_tokens, total_tokens = (
        value / replicas if value is not None else None
        for value in (
            number(data, "request_throughput"),
            number(data, "output_throughput"),
            number(data, "total_token_throughput"),
        )
    )
    return MeasuredRun(
        kind="serving",
        tool="vllm_bench",
        model=facts.model or str(data["model_id"]),
        gpu=gpu,
        gpu_count=tp,
        tp=tp,
        engine="vllm",
        engine_version=facts.engine_version,
        precision=facts.precision or "bf16",
        input_tokens=inputs / completed if inputs is not None else None,
        output_tokens=outputs / completed if outputs is not None else None,
        request_rate=float(rate) if isinstance(rate, int | float) else None,
        max_concurrency=whole(data, "max_concurrency"),
        ttft_p50_ms=number(data, "median_ttft_ms"),
        ttft_p99_ms=number(data, "p99_ttft_ms"),
        tpot_p50_ms=number(data, "median_tpot_ms"),
        tpot_p99_ms=number(data, "p99_tpot_ms"),
        requests_per_s=requests,
        output_tokens_per_s=output_tokens,
        total_tokens_per_s=total_tokens,
    )


def parse_vllm_bench(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """Every run of a ``vllm bench serve`` result file (module docstring)."""
    return [_run(data, facts) for data in read_json_objects(body, "vllm bench serve")]
