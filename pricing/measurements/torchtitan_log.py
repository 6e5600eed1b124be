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
from typing import Final

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, require, stated_peak

__all__ = ["parse_torchtitan_log", "text_of"]

_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
_STEP: Final = re.compile(
    r"step:\s*(?P<step>\d+)\b.*?loss:\s*(?P<loss>-?[\d.]+|nan|inf).*?"
    r"memory:\s*(?P<memory>[\d.]+)\s*GiB\((?P<percent>[\d.]+)%\)\s+"
    r"(?:tps|wps):\s*(?P<tps>[\d,]+)"
    r"(?:\s+tflops:\s*(?P<tflops>[\d,.]+))?(?:\s+mfu:\s*(?P<mfu>[\d.]+)%)?"
)
_CAPACITY: Final = re.compile(r"CUDA capacity:\s*(?P<gpu>.+?)\s+with\s+[\d.]+\s*GiB memory")
_MESH: Final = re.compile(
    r"Building device mesh with parallelism:\s*(?P<dims>[a-z_]+=\d+(?:,\s*[a-z_]+=\d+)*)"
)


def text_of(body: bytes, tool: str) -> str:
    try:
        return _ANSI.sub("", body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MeasurementError(
            "file", f"not a {tool}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def _mesh_size(text: str) -> int | None:
    found = _MESH.search(text)
    if not found:
        return None
    sizes = {k.strip(): int(v) for k, v in (part.split("=") for part in found.group("dims").split(","))}
    return math.prod(size for name, size in sizes.items() if name != "ep")


def parse_torchtitan_log(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The run of one torchtitan log (module docstring)."""
    text = text_of(body, "torchtitan log")
    steps = [m for m in (_STEP.search(line) for line in text.splitlines()) if m]
    if not steps:
        raise MeasurementError("file", "not a torchtitan log: no 'step: ... memory: ... tps: ...' line")
    if len(steps) < 2:
        raise MeasurementError("file", "one step line only: the first logged step is warm-up; log more steps")
    steady = steps[1:]
    capacity = _CAPACITY.search(text)
    gpu = capacity.group("gpu") if capacity else require(facts.gpu, "gpu", "the GPU")
    count = _mesh_size(text) or require(facts.gpu_count, "gpu_count", "the number of GPUs")
    tps = statistics.median(float(m.group("tps").replace(",", "")) for m in steady)
    tflops = [float(m.group("tflops").replace(",", "")) for m in steady if m.group("tflops")]
    mfu = [float(m.group("mfu")) / 100 for m in steady if m.group("mfu")]
    return [
        MeasuredRun(
            kind="training",
            tool="torchtitan_log",
            model=require(facts.model, "model", "the model"),
            gpu=gpu,
            gpu_count=count,
            tp=facts.tp or 1,
            engine="torchtitan",
            engine_version=facts.engine_version,
            precision=facts.precision or "bf16",
            task=facts.task or "train",
            method=facts.method or "full",
            seq_len=require(facts.seq_len, "seq_len", "the sequence length"),
            batch_size=facts.batch_size,
            tokens_per_s=tps * count,
            tflops_per_gpu=statistics.median(tflops) if tflops else None,
            mfu=statistics.median(mfu) if mfu else None,
            peak_memory_gib=max(float(m.group("memory")) for m in steps) or stated_peak(facts),
            steps=int(steps[-1].group("step")),
        )
    ]
