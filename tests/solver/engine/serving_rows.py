"""The shipped serving measurements the engine model is fitted and scored on, as simulation inputs.

- TensorRT-LLM's performance overview (``throughput_profiles.csv``, ``NVIDIA/TensorRT-LLM`` rows):
  ``trtllm-bench`` offline max-load output tokens/s per ISL/OSL; rows with pipeline stages are left
  out (the engine model is one tensor-parallel replica).
- Mélange (``serving_profiles_melange.csv``, vLLM, Llama 2 7B on L4/A10G/A100/H100): the largest
  request rate per (input, output) length bucket; taken as the replica's saturated rate (the latency
  SLO behind it is not stated), at the buckets' midpoints.
"""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path
from typing import NamedTuple

from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec, gpu_id_for
from solver.throughput.calibration import ProfileIndex

DATA = Path(__file__).resolve().parents[3] / "service" / "data"
_TP_PP = re.compile(r"TP(\d+) PP(\d+)")


class ServingRow(NamedTuple):
    source: str
    engine: str
    model: str
    gpu_id: str
    tp: int
    precision: str
    input_tokens: int
    output_tokens: int
    metric: str  # output_tokens_per_s (whole replica) or requests_per_s
    measured: float


@functools.cache
def catalog() -> tuple[ProfileIndex, dict[str, GpuSpec]]:
    seed = read_seed_catalog()
    gpus = {gpu.gpu_id: gpu for gpu in seed.gpus}
    return ProfileIndex(seed.profiles.items, gpus), gpus


def _gpu(name: str, gpus: dict[str, GpuSpec]) -> str | None:
    wanted = gpu_id_for(name)
    aliases = {"a100": "a100-80gb-pcie", "h100": "h100-sxm", "a10g": "a10g", "l4": "l4"}
    found = aliases.get(wanted, wanted)
    return found if found in gpus else None


def trtllm_rows() -> list[ServingRow]:
    _, gpus = catalog()
    rows = []
    with (DATA / "throughput_profiles.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if not row["source"].startswith("NVIDIA/TensorRT-LLM") or row["task"] != "inference":
                continue
            shape = _TP_PP.search(row["notes"])
            gpu = _gpu(row["gpu"], gpus)
            if shape is None or shape.group(2) != "1" or gpu is None:
                continue
            isl, osl = (int(x) for x in row["seq_len_or_resolution"].split("/"))
            precision = "fp4" if row["precision"] == "nvfp4" else row["precision"]
            rows.append(ServingRow("trtllm", "trtllm", row["model"], gpu, int(shape.group(1)), precision,
                                   isl, osl, "output_tokens_per_s", float(row["value"])))  # fmt: skip
    return rows


def melange_rows() -> list[ServingRow]:
    _, gpus = catalog()
    rows = []
    with (DATA / "serving_profiles_melange.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            gpu = _gpu(row["gpu"], gpus)
            if row["in_6x6_grid"] != "true" or gpu is None:
                continue
            isl = (int(row["input_len_lo_excl"]) + int(row["input_len_hi_incl"])) // 2
            osl = (int(row["output_len_lo_excl"]) + int(row["output_len_hi_incl"])) // 2
            rows.append(ServingRow("melange", "vllm", row["model"], gpu, 1, "fp16", max(isl, 1), max(osl, 1),
                                   "requests_per_s", float(row["max_throughput_req_per_s"])))  # fmt: skip
    return rows
