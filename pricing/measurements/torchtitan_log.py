"""torchtitan training logs (``[titan] ... - root - INFO - step: ...`` lines).

torchtitan's ``MetricsProcessor.log`` prints, every ``metrics.log_freq`` steps,
``step: N  loss: L  [grad_norm: G]  memory: M GiB(P%)  tps: T  [tflops: F  mfu: U%]``: ``memory`` is the
peak reserved memory of rank 0's GPU, ``tps`` its tokens per second (per GPU), ``tflops`` and ``mfu`` its
achieved TFLOPS and model FLOPs utilisation. Terminal colour codes are removed first. The first logged
step is warm-up (compilation, allocator growth) and is left out; the run's figures are the medians of
the other step lines, the peak memory their largest. The log also names the GPU (``CUDA capacity: NAME
with X GiB memory``) and the mesh (``Building device mesh with parallelism: pp=1, dp_replicate=1,
dp_shard=8, cp=1, tp=1``) where it prints them; otherwise the upload's ``gpu`` and ``gpu_count`` give
them. The model, the sequence length and the batch are the upload's (torchtitan prints its config only
with ``--job.print_config``).
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Final, NamedTuple

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, require, training_run

__all__ = ["MAX_LINE_CHARS", "log_lines", "parse_torchtitan_log", "text_of"]

_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
_STEP: Final = re.compile(r"\bstep:\s*(\d+)\b")
_MEMORY: Final = re.compile(r"\bmemory:\s*([\d.]+)\s*GiB\(")
_TPS: Final = re.compile(r"\b(?:tps|wps):\s*([\d,]+)")
_TFLOPS: Final = re.compile(r"\btflops:\s*([\d,.]+)")
_MFU: Final = re.compile(r"\bmfu:\s*([\d.]+)%")
_CAPACITY: Final = re.compile(r"CUDA capacity:\s*(?P<gpu>.+?)\s+with\s+[\d.]+\s*GiB memory")
_MESH: Final = re.compile(
    r"Building device mesh with parallelism:\s*(?P<dims>[a-z_]+=\d+(?:,\s*[a-z_]+=\d+)*)"
)


MAX_LINE_CHARS: Final = 4096
"""Longer lines are not log lines of these tools (theirs are a few hundred characters) and are skipped,
so that no pattern walks a megabyte-long line."""


def log_lines(text: str) -> list[str]:
    """The lines of a log that may be the tool's own (at most :data:`MAX_LINE_CHARS` long)."""
    return [line for line in text.splitlines() if len(line) <= MAX_LINE_CHARS]


def text_of(body: bytes, tool: str) -> str:
    try:
        return _ANSI.sub("", body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MeasurementError(
            "file", f"not a {tool}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


class _Step(NamedTuple):
    step: int
    memory_gib: float
    tps: float
    tflops: float | None
    mfu: float | None


def _number(pattern: re.Pattern[str], line: str) -> float | None:
    found = pattern.search(line)
    return float(found.group(1).replace(",", "")) if found else None


def _step(line: str) -> _Step | None:
    """One ``step:`` line's figures (each field found on its own: no pattern backtracks over the line)."""
    step, memory, tps = _STEP.search(line), _number(_MEMORY, line), _number(_TPS, line)
    if step is None or memory is None or tps is None:
        return None
    mfu = _number(_MFU, line)
    return _Step(
        int(step.group(1)), memory, tps, _number(_TFLOPS, line), mfu / 100 if mfu is not None else None
    )


def _mesh_size(lines: list[str]) -> int | None:
    found = next((m for m in map(_MESH.search, lines) if m), None)
    if not found:
        return None
    sizes = {k.strip(): int(v) for k, v in (part.split("=") for part in found.group("dims").split(","))}
    return math.prod(size for name, size in sizes.items() if name != "ep")


def parse_torchtitan_log(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The run of one torchtitan log (module docstring)."""
    text = text_of(body, "torchtitan log")
    lines = log_lines(text)
    steps = [step for step in map(_step, lines) if step is not None]
    if not steps:
        raise MeasurementError("file", "not a torchtitan log: no 'step: ... memory: ... tps: ...' line")
    if len(steps) < 2:
        raise MeasurementError("file", "one step line only: the first logged step is warm-up; log more steps")
    steady = steps[1:]
    capacity = next((m for m in map(_CAPACITY.search, lines) if m), None)
    gpu = capacity.group("gpu") if capacity else require(facts.gpu, "gpu", "the GPU")
    count = _mesh_size(lines) or require(facts.gpu_count, "gpu_count", "the number of GPUs")
    tps = statistics.median(step.tps for step in steady)
    tflops = [step.tflops for step in steady if step.tflops is not None]
    mfu = [step.mfu for step in steady if step.mfu is not None]
    return [
        training_run(
            facts,
            tool="torchtitan_log",
            engine="torchtitan",
            gpu=gpu,
            gpu_count=count,
            tokens_per_s=tps * count,
            tflops_per_gpu=statistics.median(tflops) if tflops else None,
            mfu=statistics.median(mfu) if mfu else None,
            peak_memory_gib=max(step.memory_gib for step in steps),
            steps=steps[-1].step,
        )
    ]
