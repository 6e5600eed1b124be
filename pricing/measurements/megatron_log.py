"""Megatron-LM / NeMo (Megatron Core) training logs.

Megatron's ``training_log`` prints, every ``--log-interval`` iterations, one ``|``-separated line:
``iteration N/ TOTAL | consumed samples: S | elapsed time per iteration (ms): T | [throughput per GPU
(TFLOP/s/GPU): F |] [tokens per GPU (tokens/s/GPU): K |] ... | global batch size: B | lm loss: L | ...``
(values may carry a rank prefix such as ``1:`` or ``[default0]:``; a ``a/b`` pair, as some forks print,
is read as its first value). ``report_memory`` prints ``[Rank R] (after N iterations) memory (MB) |
allocated: ... | max allocated: A | reserved: ... | max reserved: M`` from ``torch.cuda.max_memory_*``
(MB = 2^20 bytes). With ``--log-params-norm``/argument printing, the ``arguments`` block lists
``world_size``, ``seq_length``, ``micro_batch_size``, ``tensor_model_parallel_size`` … as
``  name ........ value`` lines, which are read where present.

The first logged iteration is warm-up and left out; the run's time per iteration is the median of the
others. Tokens/s over the run's GPUs: the logged tokens per GPU times the GPUs where Megatron prints them,
else ``global batch × seq_length / time per iteration``. The GPU, the model and, unless the arguments
block gives them, the number of GPUs and the sequence length come from the upload.
"""

from __future__ import annotations

import re
import statistics
from typing import Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, require, training_run
from pricing.measurements.torchtitan_log import log_lines, text_of

__all__ = ["parse_megatron_log"]

_ITERATION: Final = re.compile(r"\biteration\s+(\d+)\s*/\s*\d+\s*\|")
_FIELD: Final = re.compile(r"^\s*([^:|]+?)\s*:\s*([-+\d.,eE]+)")
_MAX_ALLOCATED: Final = re.compile(r"\bmax allocated:\s*([\d.]+)")
_MAX_RESERVED: Final = re.compile(r"\bmax reserved:\s*([\d.]+)")
_ARGUMENT: Final = re.compile(r"^\s*(\w+)\s\.{3,}\s(\S+)\s*$")
_MIB_PER_GIB: Final = 1024.0


def _fields(line: str) -> dict[str, float]:
    """The numeric ``name: value`` fields of one iteration line."""
    found: dict[str, float] = {}
    for part in line.split("|")[1:]:
        match = _FIELD.match(part)
        if match:
            try:
                found[match.group(1).strip().lower()] = float(match.group(2).replace(",", ""))
            except ValueError:
                continue
    return found


def _arguments(lines: list[str]) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in map(_ARGUMENT.match, lines) if m}


def _whole(arguments: dict[str, str], name: str) -> int | None:
    value = arguments.get(name, "")
    return int(value) if value.isdigit() else None


def _peak_gib(lines: list[str]) -> float | None:
    peaks = [
        float(found.group(1))
        for line in lines
        if "memory (MB)" in line
        for pattern in (_MAX_ALLOCATED, _MAX_RESERVED)
        if (found := pattern.search(line))
    ]
    return max(peaks) / _MIB_PER_GIB if peaks else None


def parse_megatron_log(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The run of one Megatron-LM / NeMo log (module docstring)."""
    text_lines = log_lines(text_of(body, "Megatron-LM log"))
    iterations = [line for line in text_lines if _ITERATION.search(line)]
    lines = [f for f in map(_fields, iterations) if "elapsed time per iteration (ms)" in f]
    if not lines:
        raise MeasurementError(
            "file", "not a Megatron-LM log: no 'iteration N/ M | ... elapsed time per iteration' line"
        )
    if len(lines) < 2:
        raise MeasurementError("file", "one iteration line only: the first logged one is warm-up; log more")
    steady = lines[1:]
    arguments = _arguments(text_lines)
    count = _whole(arguments, "world_size") or require(facts.gpu_count, "gpu_count", "the number of GPUs")
    seq_len = _whole(arguments, "seq_length") or require(facts.seq_len, "seq_len", "the sequence length")
    seconds = statistics.median(f["elapsed time per iteration (ms)"] for f in steady) / 1000
    per_gpu = [f["tokens per gpu (tokens/s/gpu)"] for f in steady if "tokens per gpu (tokens/s/gpu)" in f]
    batches = [f["global batch size"] for f in steady if "global batch size" in f]
    if per_gpu:
        tokens_per_s = statistics.median(per_gpu) * count
    elif batches:
        tokens_per_s = statistics.median(batches) * seq_len / seconds
    else:
        raise MeasurementError(
            "file", "the iteration lines state neither the global batch size nor tokens per GPU"
        )
    tflops = [
        f["throughput per gpu (tflop/s/gpu)"] for f in steady if "throughput per gpu (tflop/s/gpu)" in f
    ]
    return [
        training_run(
            facts,
            tool="megatron_log",
            engine="megatron",
            gpu_count=count,
            seq_len=seq_len,
            tp=_whole(arguments, "tensor_model_parallel_size"),
            batch_size=_whole(arguments, "micro_batch_size"),
            tokens_per_s=tokens_per_s,
            tflops_per_gpu=statistics.median(tflops) if tflops else None,
            peak_memory_gib=_peak_gib(text_lines),
            steps=int(_ITERATION.findall(iterations[-1])[0]),
        )
    ]
