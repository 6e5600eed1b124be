"""Measured throughput rows in the model's terms: what ran, on what, and how comparable.

Each :class:`~solver.catalog.profiles.MeasuredProfile` becomes an :class:`Observation` keyed by *what ran*
(:class:`WorkKey`: model, task variant, metric and setting such as ``"1024"`` or ``"128/2048"``) and *on
what* (:class:`HardwareKey`: GPU and precision class; :class:`Setup` adds the GPU count and interconnect
class), inside a comparable *group*: the source, with Lambda's two benchmark suites kept apart, because
rows are not comparable across sources (software stacks differ).

Normalisations (all documented where they are defined): source precision spellings → speed classes
(:data:`SOURCE_PRECISION_CLASS`); the source's interconnect text → :data:`~solver.catalog.gpus.Interconnect`
(``nvlink`` on SXM/OAM/superchip boards and ``xgmi`` → ``nvswitch``, ``unknown`` → ``pcie``); MLPerf's
inference ``tokens_per_s`` → ``output_tokens_per_s``; model names → catalog names where the catalog
knows them. Rows whose notes carry ``SUSPECT:`` are flagged so that scaling fits can leave them out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Final, Literal, NamedTuple

import msgspec

from solver.catalog.gpus import GpuSpec, Interconnect
from solver.catalog.models import ModelArch, lookup_model, normalise_name
from solver.catalog.precisions import PrecisionClass, kv_element_bytes, measured_kv_cache
from solver.catalog.profiles import MeasuredProfile
from solver.errors import UnknownModel
from solver.spec.workload import TRAINING_KINDS, Stack
from solver.throughput.workclass import RowClass, notes_fields, row_class, row_stack
from solver.throughput.workcost import (
    decode_bytes_per_token,
    forward_flops,
    offline_flops_per_output_token,
    prefill_flops_per_token,
    train_flops_per_token,
)

__all__ = [
    "SOURCE_PRECISION_CLASS",
    "HardwareKey",
    "Mode",
    "Observation",
    "Setup",
    "WorkKey",
    "observe",
    "precision_class",
    "setup_of",
    "training_variant",
    "weighted_median",
]

Mode = Literal["train", "prefill", "decode", "offline"]
"""Which resource bounds a row: training and prefill and offline batch inference are compute-bound,
single-stream decoding is memory-bandwidth-bound."""

SOURCE_PRECISION_CLASS: Final[dict[str, PrecisionClass]] = {
    "fp32": "fp32",  # Lambda fp32 runs may use TF32 tensor cores; calibrated as their own class
    "tf32": "fp32",
    "fp16_amp": "bf16",  # PyTorch AMP mixed precision
    "fp16": "bf16",
    "bf16": "bf16",
    "fp8": "fp8",
    "int8": "int8",
    "q4_k_m": "int4",  # llama.cpp GGUF 4-bit weights, 16-bit compute
    "int4": "int4",
    "nf4": "int4",
    "nvfp4": "fp4",
    "fp4": "fp4",
}
"""Source precision spellings → speed class. MLPerf's ``mlperf_closed:<types>`` uses the UNet's type
for diffusion pipelines and otherwise the first listed type."""

_SOCKETED: Final = ("sxm", "oam", "superchip", "hgx", "dgx")


def precision_class(source_precision: str) -> PrecisionClass | None:
    """The speed class of a source's precision spelling, ``None`` when it is not recognised."""
    text = source_precision.strip().lower().removeprefix("mlperf_closed:")
    unet = re.search(r"unet'?\s*:\s*'?([a-z0-9_]+)", text)
    first = unet.group(1) if unet else re.split(r"[,{}:'\s]+", text.strip("{} "))[0]
    return SOURCE_PRECISION_CLASS.get(first)


class WorkKey(NamedTuple):
    """What ran: model key, task variant (``train``/``inference``...), metric and setting text."""

    model: str
    variant: str
    metric: str
    setting: str


class HardwareKey(NamedTuple):
    """What it ran on: canonical GPU id and precision class."""

    gpu_id: str
    precision: PrecisionClass


class Setup(NamedTuple):
    """Hardware at a GPU count: GPU id, precision class, number of GPUs and their interconnect class."""

    gpu_id: str
    precision: PrecisionClass
    gpu_count: int
    interconnect: Interconnect


class Observation(msgspec.Struct, frozen=True, kw_only=True):
    """One measured row in the model's terms; ``cost`` is its work per unit (FLOPs or bytes), if known.

    ``network`` is the class of the network between the row's nodes when it spans several (the text
    after ``+`` in the source's interconnect column, e.g. ``nvlink+infiniband``), else ``""``.
    """

    profile: MeasuredProfile
    group: str
    work: WorkKey
    hardware: HardwareKey
    mode: Mode
    interconnect: Interconnect
    multinode: bool
    suspect: bool
    arch: ModelArch | None
    cost: float | None
    row_class: RowClass
    stack: Stack
    network: str = ""


def weighted_median(items: Iterable[tuple[float, float]]) -> float:
    """The weighted median of ``(value, weight)`` pairs (lower median on an exact tie)."""
    ordered = sorted(items)
    half = sum(weight for _, weight in ordered) / 2.0
    running = 0.0
    for value, weight in ordered:
        running += weight
        if running >= half - 1e-12:
            return value
    raise ValueError("weighted_median of no items")


_PUBLISHERS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"^docs\.nvidia\.com/nemo-framework/"), "NVIDIA/NeMo"),
    (re.compile(r"^mlcommons/training_results_v[\d.]+$"), "mlcommons/training_results"),
    (re.compile(r"^mlcommons/inference_results_v[\d.]+$"), "mlcommons/inference_results"),
)
"""Sources that are one publisher's work under several names (documentation versions, result rounds)."""


def _group(source: str) -> str:
    """The comparable group of a row: its publisher (Lambda's two benchmark suites kept apart)."""
    prefix = source.split(":", 1)[0]
    if prefix == "lambdal/deeplearning-benchmark":
        return f"{prefix} (suite {'v2' if '-v2-' in source else 'v1'})"
    for pattern, publisher in _PUBLISHERS:
        if pattern.search(prefix):
            return publisher
    return prefix


@functools.lru_cache(maxsize=256)
def _model(name: str) -> tuple[str, ModelArch | None]:
    try:
        arch = lookup_model(name)
    except UnknownModel:
        return normalise_name(name), None
    return arch.name, arch


def _interconnect(text: str, gpu: GpuSpec | None, count: int) -> tuple[Interconnect, bool]:
    base, _, rest = text.strip().lower().partition("+")
    multinode = bool(rest)
    if count <= 1:
        return "none", False
    head = (gpu.form_factor or "").lower().split("(")[0] if gpu else ""
    socketed = any(marker in head for marker in _SOCKETED) and "pcie" not in head and "sxm2" not in head
    if base == "xgmi" or (base == "nvlink" and socketed):
        return "nvswitch", multinode
    if base == "nvlink":
        return "nvlink", multinode
    return "pcie", multinode  # pcie, unknown (bridge may be missing) and anything else


def _mode(profile: MeasuredProfile) -> Mode:
    if profile.task in TRAINING_KINDS:
        return "train"
    if profile.metric == "prompt_tokens_per_s":
        return "prefill"
    if profile.metric == "output_tokens_per_s" and profile.batch_size == 1:
        return "decode"
    return "offline"


def _lengths(setting: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"(\d+)/(\d+)", setting)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _row_cost(
    mode: Mode, metric: str, setting: str, arch: ModelArch | None, precision: PrecisionClass, method: str
) -> float | None:
    if arch is None or not arch.is_transformer:
        return None
    lengths = _lengths(setting)
    if mode == "train" and setting.isdigit():
        per_token = train_flops_per_token(arch, int(setting), method, "none")
        return per_token * int(setting) if metric == "sequences_per_s" else per_token
    if mode == "prefill" and lengths and lengths[0] > 0:
        return prefill_flops_per_token(arch, lengths[0])
    if mode == "decode" and lengths and lengths[1] > 0:
        kv_bytes = kv_element_bytes(precision, measured_kv_cache(precision))
        return decode_bytes_per_token(arch, precision, 1, lengths[0] + lengths[1] / 2, kv_bytes)
    if mode == "offline" and lengths and lengths[1] > 0:
        return offline_flops_per_output_token(arch, *lengths)
    if mode == "offline" and metric == "samples_per_s" and setting.isdigit():
        return forward_flops(arch, int(setting))
    return None


def observe(profile: MeasuredProfile, gpus: Mapping[str, GpuSpec]) -> Observation | None:
    """The model's view of one measured row; ``None`` when its precision spelling is not recognised."""
    precision = precision_class(profile.precision)
    if precision is None:
        return None
    model, arch = _model(profile.model)
    mode = _mode(profile)
    metric = profile.metric
    if profile.task != "train" and metric == "tokens_per_s":
        metric = "output_tokens_per_s"  # MLPerf LLM "tokens/s" counts generated tokens
    setting = (profile.seq_len_or_resolution or "").strip()
    interconnect, multinode = _interconnect(profile.interconnect, gpus.get(profile.gpu_id), profile.gpu_count)
    row_class_ = row_class(profile.task, mode, arch, profile.notes)
    method = notes_fields(profile.notes).get("method", "full") if row_class_ == "lora" else "full"
    return Observation(
        profile=profile,
        group=_group(profile.source),
        work=WorkKey(
            model,
            training_variant(row_class_, method, "none") if mode == "train" else "inference",
            metric,
            setting,
        ),
        hardware=HardwareKey(profile.gpu_id, precision),
        mode=mode,
        interconnect=interconnect,
        multinode=multinode,
        suspect="SUSPECT:" in profile.notes,
        arch=arch,
        cost=_row_cost(
            mode, metric, setting, arch, precision, method if method in ("lora", "qlora") else "full"
        ),
        row_class=row_class_,
        stack=row_stack(profile.source, profile.notes),
        network=profile.interconnect.strip().lower().partition("+")[2] if multinode else "",
    )


def training_variant(work_class: str, method: str, recompute: str) -> str:
    """The task variant a training row or workload is filed under: ``train`` (pretraining, encoder and
    vision training), ``fine_tune``, ``fine_tune:lora``, ``fine_tune:qlora``; ``:recompute`` appended
    with full recomputation (the unit costs one forward pass more)."""
    if work_class in ("pretrain", "encoder_vision"):
        variant = "train"
    elif method in ("lora", "qlora"):
        variant = f"fine_tune:{method}"
    else:
        variant = "fine_tune"
    return f"{variant}:recompute" if recompute == "full" else variant


def setup_of(obs: Observation) -> Setup:
    """The hardware-at-a-count key of a row."""
    return Setup(obs.hardware.gpu_id, obs.hardware.precision, obs.profile.gpu_count, obs.interconnect)
