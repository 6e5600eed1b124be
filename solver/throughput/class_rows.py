"""Measured rows in the class model's terms: what one GPU achieved on which parts of work.

:func:`fit_row` turns an :class:`~solver.throughput.observations.Observation` into a
:class:`~solver.throughput.class_fit.FitRow`: its class and stack, the :class:`~solver.throughput.efficiency.Parts` of its
unit on its GPU, and the log of its throughput per GPU with the row's own multi-GPU scaling divided out
(the communication model of :mod:`solver.throughput.scaling` at the prior efficiencies, over the links the row's
source states). Rows that cannot be put in those terms are left out of the fit (they still answer
exact queries as measured rows): rows marked ``SUSPECT:``, precisions the GPU lacks, llama.cpp
multi-GPU rows (layer split: more GPUs add memory, not speed), and multi-GPU rows of works whose size
is unknown (their scaling cannot be divided out), and training runs of 256 GPUs or more (they fit the
efficiency-at-scale term of :mod:`solver.throughput.at_scale` instead).
"""

from __future__ import annotations

import math
import re
from typing import Final

from solver.catalog.gpus import GpuSpec, node_gpus
from solver.catalog.models import ModelArch
from solver.catalog.precisions import PrecisionClass, kv_element_bytes, measured_kv_cache
from solver.spec.workload import ResolvedWorkload
from solver.throughput.at_scale import AT_SCALE_GPUS
from solver.throughput.class_fit import EMPTY_MODEL, ClassModel, FitRow
from solver.throughput.efficiency import (
    Parts,
    WorkTerms,
    compute_parts,
    decode_parts,
    forward_terms,
    overhead_key,
    seconds,
    training_terms,
    with_micro_batches,
)
from solver.throughput.hardware import Hardware
from solver.throughput.links import instance_links
from solver.throughput.observations import Observation
from solver.throughput.scaling import training_scaling
from solver.throughput.workclass import TRAINING_CLASSES, level_free, notes_fields
from solver.throughput.workcost import BYTES_PER_PARAM

__all__ = [
    "MAX_DECODE_BATCH",
    "UNCOSTED_FLOPS",
    "class_group",
    "fit_row",
    "offline_parts",
    "precision_key",
    "stated_node_gbps",
    "traffic_key",
    "uncosted_parts",
]

UNCOSTED_FLOPS: Final = 1e9
"""Nominal FLOPs of one unit of a work without a formula; its fitted cost ``C`` scales it."""
_UNCOSTED_TRAFFIC_PER_FLOP: Final = 1e-3
"""Activation elements per FLOP assumed for such works (CNN feature maps, RNN states): about ten times a
transformer's, so that bandwidth weighs more in their hardware ratios."""
MAX_DECODE_BATCH: Final = 1024
"""Largest number of sequences an engine decodes at once (vLLM V1 and TensorRT-LLM default caps)."""
_MEMORY_FRACTION: Final = 0.9
_RUNTIME_GIB: Final = 2.0
_ROW_NETWORK: Final[dict[str, tuple[float, float, float]]] = {
    "infiniband": (400.0, 0.8, 5e-6),
    "roce": (400.0, 0.75, 8e-6),
    "efa": (400.0, 0.7, 15e-6),
    "gpudirect_tcpx": (200.0, 0.7, 20e-6),
    "ethernet": (100.0, 0.6, 30e-6),
    "multinode": (400.0, 0.8, 5e-6),
}
"""(Gbit/s per GPU, achievable share, latency) of the networks measured rows name between their nodes."""


def class_group(work_class: str) -> str:
    """The class group whose GPU-family effects and traffic factor a class shares."""
    return "training" if work_class in TRAINING_CLASSES else "prefill" if work_class != "decode" else "decode"


def precision_key(precision: PrecisionClass) -> str | None:
    """The precision whose factor φ applies (``None`` for 16-bit work)."""
    return None if precision == "bf16" else precision


def traffic_key(work_class: str) -> str:
    """Which κ a class uses: LLM training, encoder/vision training, or inference."""
    if work_class == "encoder_vision":
        return "encoder_vision"
    return "llm_training" if work_class in TRAINING_CLASSES else "inference"


_CHECKPOINTING = re.compile(r"activation checkpoint(?:ing)?[ =:]*(?:true|yes)\b", re.IGNORECASE)
_FULL_SHARD = re.compile(r"\bFULL_SHARD\b|\bzero-?3\b", re.IGNORECASE)


def stated_node_gbps(notes: str) -> float | None:
    """The network bandwidth per node (Gbit/s) the row's source states (``node_gbps=`` in its notes:
    the PyTorch FSDP blog's 400 and 800 Gbit/s clusters, MosaicML's 1600 Gbit/s RoCE, Selene's 8 × 200
    Gbit/s HDR InfiniBand), ``None`` where it states none."""
    stated = notes_fields(notes).get("node_gbps", "")
    return float(stated) if stated.replace(".", "", 1).isdigit() and float(stated) > 0 else None


def row_recompute(notes: str) -> str:
    """How much of the forward the row's run recomputed, as its notes say: a ``recompute=`` key,
    "activation checkpointing True" or llmq's ``--recompute-block`` (the whole transformer block
    recomputed: ``full``); else ``none`` (llmq's per-part flags, ``--recompute-att``, ``-ffn``, are
    not read: which matmuls they repeat is not stated)."""
    stated = notes_fields(notes).get("recompute")
    if stated in ("none", "selective", "full"):
        return stated
    if _CHECKPOINTING.search(notes) or "--recompute-block" in notes:
        return "full"
    return "none"


def _training_parts(obs: Observation, hw: Hardware, precision: PrecisionClass) -> tuple[Parts, str | None]:
    """Parts of the row's unit and the cost key of a work without a formula (``None`` with one)."""
    arch, setting = obs.arch, obs.work.setting
    if arch is not None and arch.is_transformer and setting.isdigit():
        method = notes_fields(obs.profile.notes).get("method", "full") if obs.row_class == "lora" else "full"
        terms = training_terms(arch, int(setting), method, row_recompute(obs.profile.notes))
        parts = with_micro_batches(
            compute_parts(terms, hw, precision), obs.profile.batch_size, int(setting), arch.layers
        )
        return (parts.scaled(int(setting)) if obs.work.metric == "sequences_per_s" else parts), None
    return uncosted_parts(hw, precision), f"{obs.work.model}|{obs.work.metric}|{setting}"


def uncosted_parts(hw: Hardware, precision: PrecisionClass) -> Parts:
    """Parts of one nominal unit (:data:`UNCOSTED_FLOPS`) of a work without a FLOPs formula."""
    terms = WorkTerms(UNCOSTED_FLOPS, 0.0, UNCOSTED_FLOPS * _UNCOSTED_TRAFFIC_PER_FLOP)
    return compute_parts(terms, hw, precision)


def _row_workload(obs: Observation, arch: ModelArch, precision: PrecisionClass) -> ResolvedWorkload:
    fields = notes_fields(obs.profile.notes)
    count = obs.profile.gpu_count
    tp = int(fields.get("tp", "1") or 1)
    tp = tp if tp >= 1 and count % tp == 0 else 1
    seq = int(obs.work.setting) if obs.work.setting.isdigit() else 0
    return ResolvedWorkload(
        kind="train" if obs.row_class == "pretrain" else "fine_tune",
        arch=arch,
        precision="bf16" if precision not in ("fp32", "fp8") else precision,
        method="lora" if obs.row_class == "lora" else "full",
        lora_rank=16,
        optimizer="adamw",
        sharding="zero3" if _FULL_SHARD.search(obs.profile.notes) else "zero1",
        recompute="none",
        batch_size=max(1, obs.profile.batch_size or 1),
        seq_len=seq,
        gpu_count=count,
        tp=tp,
        dp=count // tp,
        stack=obs.stack,
    )


def _row_scaling(obs: Observation, gpu: GpuSpec, parts: Parts, prior: ClassModel) -> float | None:
    """The row's own scaling efficiency (``None`` when it cannot be worked out)."""
    count = obs.profile.gpu_count
    if count <= 1:
        return 1.0
    arch = obs.arch
    if arch is None:
        return None
    precision = obs.hardware.precision
    per_node = count if not obs.multinode else min(count, node_gpus(gpu))
    gbps, share, latency = _ROW_NETWORK.get(obs.network or "multinode", _ROW_NETWORK["multinode"])
    links = instance_links(
        gpu,
        obs.interconnect,
        per_node,
        network_gbps=stated_node_gbps(obs.profile.notes) or gbps * per_node,
        network_efficiency=share,
        network_latency_s=latency,
        network_label=obs.network or "multinode",
    )
    key = f"{obs.row_class}/{obs.stack}"
    per_unit = seconds(
        parts,
        efficiency=prior.efficiency_of(key),
        bandwidth=1.0,
        precision=prior.precision_factor_of(precision),
        traffic=prior.traffic_of(traffic_key(obs.row_class)),
        attention=prior.attention_factor,
        step_overhead=prior.step_overhead_of(overhead_key(obs.row_class, obs.stack)),
        gemm_width=prior.gemm_width,
    )
    seq = int(obs.work.setting) if obs.work.setting.isdigit() else 1
    per_token = per_unit / seq if obs.work.metric == "sequences_per_s" else per_unit
    rw = _row_workload(obs, arch, precision)
    gbs = notes_fields(obs.profile.notes).get("gbs")
    target = float(gbs) * max(seq, 1) if gbs and gbs.replace(".", "", 1).isdigit() else None
    scaling, _ = training_scaling(
        rw, links, per_token, workload_class=obs.row_class, stack=obs.stack, global_batch_tokens=target
    )
    return scaling.efficiency if scaling.efficiency > 0 else None


def offline_parts(
    arch: ModelArch,
    hw: Hardware,
    precision: PrecisionClass,
    prompt: int,
    output: int,
    gpus: int,
    kv_bytes: float = 2.0,
) -> tuple[Parts, int] | None:
    """Parts of one generated token of offline (batch) inference and the batch the KV cache allows.

    Prompt and output tokens: the prompt's forward pass is shared by the request's ``output`` tokens;
    generation runs at the largest batch the memory left after the weights holds (mean context
    ``prompt + output/2``), at most :data:`MAX_DECODE_BATCH`. ``None`` when the weights do not fit.
    """
    weights = arch.params_b * 1e9 * BYTES_PER_PARAM[precision]
    room = gpus * (hw.memory_gib * _MEMORY_FRACTION - _RUNTIME_GIB) * 2**30 - weights
    context = prompt + output / 2
    per_sequence = arch.layers * arch.kv_elements_per_token_layer * kv_bytes * max(context, 1.0)
    if room < per_sequence:
        return None
    batch = max(1, min(MAX_DECODE_BATCH, math.floor(room / per_sequence)))
    prefill = compute_parts(forward_terms(arch, max(prompt, 1)), hw, precision).scaled(prompt / output / gpus)
    decode = decode_parts(arch, hw, precision, batch=batch, context=context, gpus=gpus, kv_bytes=kv_bytes)
    return prefill.plus(decode), batch


def _inference_parts(obs: Observation, hw: Hardware, precision: PrecisionClass) -> Parts | None:
    arch = obs.arch
    numbers = obs.work.setting.split("/")
    if arch is None or not arch.is_transformer or len(numbers) != 2 or not all(n.isdigit() for n in numbers):
        if arch is not None and arch.is_transformer and obs.work.setting.isdigit():
            tokens = int(obs.work.setting)  # encoder inference: samples of ``tokens`` tokens
            return compute_parts(forward_terms(arch, tokens), hw, precision).scaled(tokens)
        return None
    prompt, output = int(numbers[0]), int(numbers[1])
    count = obs.profile.gpu_count
    if obs.row_class == "prefill" and prompt > 0:
        return compute_parts(forward_terms(arch, prompt), hw, precision)
    kv_bytes = kv_element_bytes(precision, measured_kv_cache(precision))
    if obs.row_class == "decode" and output > 0:
        return decode_parts(arch, hw, precision, batch=1, context=prompt + output / 2, kv_bytes=kv_bytes)
    if obs.row_class == "offline" and output > 0:
        found = offline_parts(arch, hw, precision, prompt, output, count, kv_bytes)
        return found[0].scaled(count) if found else None
    return None


def fit_row(obs: Observation, gpu: GpuSpec, hw: Hardware, prior: ClassModel = EMPTY_MODEL) -> FitRow | None:
    """The row in the fit's terms, or ``None`` when it cannot be put in them (module docstring)."""
    precision = obs.hardware.precision
    if obs.suspect or obs.profile.value <= 0 or not hw.supports(precision):
        return None
    per_gpu = obs.profile.value / obs.profile.gpu_count
    cost_key: str | None = None
    if obs.row_class in TRAINING_CLASSES and obs.profile.gpu_count >= AT_SCALE_GPUS:
        return None  # at-scale runs fit the efficiency-at-scale term (solver.throughput.at_scale)
    if obs.row_class in TRAINING_CLASSES:
        parts, cost_key = _training_parts(obs, hw, precision)
        efficiency = _row_scaling(obs, gpu, parts, prior)
        if efficiency is None:
            return None
        per_gpu /= efficiency
    else:
        if obs.profile.gpu_count > 1 and obs.group.startswith("XiongjieDai"):
            return None
        found = _inference_parts(obs, hw, precision)
        if found is None:
            return None
        parts = found
        if obs.row_class == "offline":
            per_gpu = obs.profile.value / obs.profile.gpu_count
    work_class = "prefill" if obs.row_class == "offline" else obs.row_class
    group = class_group(work_class)
    model = obs.arch.name if obs.arch is not None else obs.work.model
    return FitRow(
        profile_id=obs.profile.profile_id,
        efficiency_key=f"{'prefill' if work_class == 'decode' else work_class}/{obs.stack}",
        bandwidth_key=f"decode/{obs.stack}" if parts.d > 0 else None,
        overhead_key=overhead_key(work_class, obs.stack) if parts.steps > 0 else None,
        traffic_key=traffic_key(work_class),
        precision_key=precision_key(precision),
        parts=parts,
        cost_key=cost_key,
        source=obs.group,
        level_free=level_free(obs.profile.source),
        family=hw.family or hw.gpu_id,
        model=model,
        group=group if obs.row_class != "offline" else "offline",
        log_value=math.log(per_gpu),
    )
