"""Throughput of a workload on ``n`` GPUs of one type: measured where a row matches, else the class model.

:func:`estimate_throughput` is the entry point. In order:

1. ``override`` — the workload states its own efficiency (``efficiency.mfu`` of the dense peak at its
   precision, ``efficiency.bandwidth_utilization`` for generation): the class model's roofline at that
   efficiency, echoed in the estimate;
2. ``measured`` — rows of exactly this work (model, task variant, metric, setting) on this GPU,
   precision, GPU count and interconnect: their median, all cited; a work measured at a nearby setting
   (sequence length within 4× for training, prompt/output lengths within 2× for inference) on that
   setup is answered at that setting × the ratio of work per unit (then ``derived``);
3. ``class_model`` — the roofline of :mod:`solver.throughput.efficiency` at the efficiency calibrated for the
   workload's class and software stack (:mod:`solver.throughput.class_fit`: one function for every GPU, moved by
   the GPU's hardware factors, refined by rows of the same class on the same GPU family and of the same
   model), times the multi-GPU scaling of :mod:`solver.throughput.scaling` (training) or ``gpu_count / tp``
   independent replicas (inference).

Every estimate says its ``workload_class``, ``stack``, the ``efficiency`` used (the class efficiency
and the MFU or bandwidth share it implies on this GPU), the rows it rests on (``sources``: the rows of
its class, the same model and GPU family first, at most 24), a ``band`` (10th–90th percentile, from the
class's calibration residuals and the communication share) and a confidence: ``high`` for measured
rows and class estimates with rows of this model on this GPU family, ``medium`` with rows of the class
on this family, ``low`` when the GPU's level rests on hardware factors alone, its peak is a proxy, or
the class has no rows of this stack (its efficiency is a prior). Everything is deterministic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from solver.catalog.gpus import NODE_GPUS, GpuSpec, Interconnect, node_gpus
from solver.catalog.models import ModelArch
from solver.catalog.network import FABRIC_TRAITS, Network, reference_cluster_network
from solver.catalog.precisions import PrecisionClass, kv_element_bytes, precision_refusal
from solver.catalog.profiles import MeasuredProfile
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.memory.peak import estimate_memory, lora_params
from solver.spec.workload import TRAINING_KINDS, EfficiencyOverride, Recompute, ResolvedWorkload
from solver.throughput.at_scale import ScaleTerm
from solver.throughput.calibration import IndexMemo, ProfileIndex
from solver.throughput.class_fit import ClassModel
from solver.throughput.class_rows import (
    class_group,
    offline_parts,
    precision_key,
    traffic_key,
    uncosted_parts,
)
from solver.throughput.efficiency import (
    BANDWIDTH_EFFICIENCY,
    Parts,
    compute_parts,
    decode_parts,
    forward_terms,
    overhead_key,
    seconds,
    training_terms,
    with_micro_batches,
)
from solver.throughput.global_batch import global_batch_tokens
from solver.throughput.hardware import Hardware, hardware_of
from solver.throughput.links import instance_links
from solver.throughput.observations import Observation, Setup, WorkKey, training_variant, weighted_median
from solver.throughput.scaling import ScalingEstimate, layout_of, training_scaling
from solver.throughput.step import Layout, Links
from solver.throughput.workclass import WorkClass, workload_class
from solver.throughput.workcost import WORKLOAD_PRECISION_CLASS, setting_numbers, work_at_setting

__all__ = [
    "DEFAULT_CLUSTER_NETWORK",
    "LAYOUT_SIGMA",
    "RECOMPUTE_LEVELS",
    "Band",
    "EfficiencyUsed",
    "ProfileSource",
    "Route",
    "ThroughputEstimate",
    "Topology",
    "class_seconds_per_unit",
    "default_topology",
    "estimate_throughput",
    "least_recompute",
    "profile_index",
    "prompt_seconds",
    "topology_links",
    "workload_query",
]

Route = Literal["measured", "class_model", "override"]
_MAX_SOURCES: Final = 24
RECOMPUTE_LEVELS: Final[tuple[Recompute, ...]] = ("none", "selective", "full")
_Z90: Final = 1.2816  # the 10th/90th percentile of a normal, in σ
_PRIOR_SIGMA: Final = 0.35
LAYOUT_SIGMA: Final = 0.12
"""Spread (log) a multi-GPU training estimate's band gains for its layout: the step model prices one
layout, while runs differ in how well their stacks overlap and balance it (chosen so that held-out
published runs fall inside the 10-90 % band about 80 % of the time, see the accuracy table)."""

DEFAULT_CLUSTER_NETWORK: Final = reference_cluster_network("hopper", NODE_GPUS)
"""The network a hand-built :class:`Topology` has when it names none (an 8-GPU H100-class node's);
:func:`default_topology` takes the GPU's own generation's (:func:`reference_cluster_network`)."""


class ProfileSource(msgspec.Struct, frozen=True, kw_only=True):
    """A measured row an estimate rests on, as published (``value`` is the total over ``gpu_count``)."""

    profile_id: int
    gpu_id: str
    gpu_count: int
    model: str
    metric: str
    value: float
    source: str


class Band(msgspec.Struct, frozen=True, kw_only=True):
    """The 10th–90th percentile range of a value."""

    low: float
    high: float


class EfficiencyUsed(msgspec.Struct, frozen=True, kw_only=True):
    """The efficiency behind an estimate.

    ``class_efficiency`` is the calibrated (or given) share of the GPU's achievable matmul speed the
    class keeps; ``mfu`` what the estimate implies as a share of the dense peak at the job's precision
    (training and prompt passes); ``bandwidth_utilization`` the share of memory bandwidth generation
    reaches. ``basis``: ``calibrated`` (from rows of the class), ``prior`` (no rows of this class and
    stack: the documented prior), ``override`` (given by the request) or ``measured``.
    """

    basis: Literal["calibrated", "prior", "override", "measured"]
    class_efficiency: float | None = None
    mfu: float | None = None
    bandwidth_utilization: float | None = None


class ThroughputEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """A throughput (total over all GPUs) with its provenance, the rows behind it and a confidence."""

    value: float
    unit: str
    provenance: Literal["measured", "derived"]
    route: Route
    sources: list[ProfileSource]
    confidence: Literal["high", "medium", "low"]
    confidence_score: float
    method: str
    workload_class: WorkClass
    stack: str
    efficiency: EfficiencyUsed
    band: Band
    scaling: ScalingEstimate | None = None
    layout: Layout | None = None
    """Training: the parallel layout the estimate prices (``None`` for inference)."""


class Topology(msgspec.Struct, frozen=True, kw_only=True):
    """Where the GPUs sit: instances of ``gpus_per_instance`` linked by ``interconnect`` inside and by
    ``network`` between them."""

    gpus_per_instance: int
    interconnect: Interconnect
    network: Network = DEFAULT_CLUSTER_NETWORK


def _check_precision(
    gpu: GpuSpec, hw: Hardware, precision: str, speed_class: PrecisionClass, *, training: bool
) -> None:
    """Raise :class:`~solver.errors.ThroughputUnavailable` when ``gpu`` cannot run the job's precision
    (its row's formats) or has no tensor cores for its speed class."""
    refusal = precision_refusal(gpu, precision, training=training)
    if refusal is not None:
        raise ThroughputUnavailable(refusal)
    if not hw.supports(speed_class):
        raise ThroughputUnavailable(f"{gpu.name} has no {speed_class} tensor cores")


def default_topology(
    gpu: GpuSpec, gpu_count: int, interconnect: Interconnect, gpus_per_instance: int | None = None
) -> Topology:
    """Instances of ``gpus_per_instance`` GPUs (default: a node, 8 or the NVLink domain where larger:
    72 on GB200/GB300), the GPU generation's reference cluster network between them (one NIC per GPU:
    200 Gbit/s HDR on A100, 400 on H100 and later, :func:`~solver.catalog.network.reference_cluster_network`)."""
    per_instance = min(gpu_count, gpus_per_instance or node_gpus(gpu))
    network = reference_cluster_network(gpu.architecture, per_instance)
    return Topology(gpus_per_instance=per_instance, interconnect=interconnect, network=network)


class _Query(msgspec.Struct, frozen=True, kw_only=True):
    """A workload in the index's terms, independent of the GPU and its count."""

    work: WorkKey
    work_class: WorkClass
    precision: PrecisionClass
    unit_scale: float
    """Factor from the measured (nearby) setting's unit to the asked one (1 when exact)."""
    adjustment: str


_QUERIES: IndexMemo[tuple[ResolvedWorkload, int | None], _Query] = IndexMemo(4096)
_SOURCES: IndexMemo[int, ProfileSource] = IndexMemo(50_000)


def _metric(arch: ModelArch, training: bool) -> str:
    if arch.family in ("vision", "diffusion"):
        return "images_per_s" if training else "samples_per_s"
    if arch.family == "encoder":
        return "sequences_per_s" if training else "samples_per_s"
    return "tokens_per_s" if training else "output_tokens_per_s"


def _lengths(workload: ResolvedWorkload, output_len: int | None) -> tuple[int, int]:
    """(prompt, output) tokens of a batch-inference request of ``seq_len`` tokens."""
    seq = workload.seq_len
    out = min(seq, output_len) if output_len is not None else max(1, seq // 2)
    return seq - out, out


def _setting(workload: ResolvedWorkload, work_class: WorkClass, output_len: int | None) -> str:
    arch = workload.arch
    if workload.kind in TRAINING_KINDS:
        return str(workload.seq_len) if arch.is_transformer else ""
    if work_class == "decode":
        return f"0/{workload.seq_len}"
    if arch.is_decoder_llm:
        prompt, out = _lengths(workload, output_len)
        return f"{prompt}/{out}"
    return str(workload.seq_len) if arch.is_transformer else ""


def _nearest_setting(index: ProfileIndex, work: WorkKey, training: bool) -> str | None:
    """The measured setting of the same model and task closest to ``work.setting`` (within 2×, 4× train)."""
    wanted = setting_numbers(work.setting)
    if wanted is None or work in index.works:
        return None
    limit = math.log(4.0 if training else 2.0)
    best: tuple[float, str] | None = None
    for other in index.works_of_task.get(work[:3], ()):
        numbers = setting_numbers(other.setting)
        if numbers is None or len(numbers) != len(wanted):
            continue
        distance = sum(abs(math.log((a + 1) / (b + 1))) for a, b in zip(wanted, numbers, strict=True))
        if distance <= limit and (best is None or (distance, other.setting) < best):
            best = (distance, other.setting)
    return best[1] if best else None


def workload_query(workload: ResolvedWorkload, index: ProfileIndex, output_len: int | None = None) -> _Query:
    """What a workload asks of the index (remembered per index and workload)."""
    memo = _QUERIES.of(index)
    found = memo.get((workload, output_len))
    if found is not None:
        return found
    arch, work_class = workload.arch, workload_class(workload)
    training = workload.kind in TRAINING_KINDS
    precision = WORKLOAD_PRECISION_CLASS[workload.precision]
    if training:
        precision = "bf16" if precision in ("int8", "int4") else precision  # dequantised to 16-bit compute
        variant = training_variant(work_class, workload.method, workload.recompute)
    else:
        batch = workload.batch_size
        variant = "inference" if work_class != "decode" or batch == 1 else f"inference:batch={batch}"
    metric = _metric(arch, training)
    setting = _setting(workload, work_class, output_len)
    if not setting:
        settings = [work.setting for work in index.works_of_task.get((arch.name, variant, metric), ())]
        setting = min(settings) if settings else ""
    work = WorkKey(arch.name, variant, metric, setting)
    scale, adjustment = 1.0, ""
    nearest = _nearest_setting(index, work, training)
    if nearest is not None:
        mode = "train" if training else "decode" if work_class == "decode" else "offline"
        here, there = (
            work_at_setting(workload, mode, metric, setting),
            work_at_setting(workload, mode, metric, nearest),
        )
        if here and there:
            scale = there / here
            adjustment = (
                f"{arch.name} at {nearest} (measured setting nearest to {setting}) × work ratio {scale:.3f}"
            )
            work = work._replace(setting=nearest)
    found = _Query(
        work=work, work_class=work_class, precision=precision, unit_scale=scale, adjustment=adjustment
    )
    memo[workload, output_len] = found
    return found


def _label(score: float) -> Literal["high", "medium", "low"]:
    return "high" if score >= 0.75 else "medium" if score >= 0.45 else "low"


def _cite(index: ProfileIndex, rows: Sequence[Observation]) -> list[ProfileSource]:
    memo = _SOURCES.of(index)
    cited: list[ProfileSource] = []
    for obs in rows:
        p = obs.profile
        source = memo.get(p.profile_id)
        if source is None:
            source = memo[p.profile_id] = ProfileSource(
                profile_id=p.profile_id,
                gpu_id=p.gpu_id,
                gpu_count=p.gpu_count,
                model=p.model,
                metric=p.metric,
                value=p.value,
                source=p.source,
            )
        cited.append(source)
    return cited


def _measured(
    query: _Query,
    gpu: GpuSpec,
    count: int,
    interconnect: Interconnect,
    index: ProfileIndex,
    exclude: frozenset[int],
) -> list[Observation]:
    setup = Setup(gpu.gpu_id, query.precision, count, interconnect)
    return [o for o in index.by_exact.get((query.work, setup), ()) if o.profile.profile_id not in exclude]


def effect_group(work_class: str, offline: bool) -> str:
    """The group whose GPU-family and model effects apply (batch inference has its own)."""
    return "offline" if offline else class_group(work_class)


class _Unit(msgspec.Struct, frozen=True, kw_only=True):
    """One unit of the workload on one GPU (or one tensor-parallel group for inference)."""

    parts: Parts
    cost_key: str | None
    efficiency_key: str
    group: str
    note: str
    model_flops: float = 0.0
    """Model FLOPs per unit (no recomputation, no dequantisation): the numerator of MFU."""


def _tp_step_seconds(arch: ModelArch, batch: int, tp: int, links: Links) -> float:
    """A decoding step's tensor-parallel all-reduces: two per layer of ``batch × hidden`` activations."""
    if tp <= 1:
        return 0.0
    size = batch * arch.hidden_size * 2.0
    return 2 * arch.layers * (2 * (tp - 1) / tp * size / links.intra_bytes_per_s + links.intra_latency_s)


def _unit(
    workload: ResolvedWorkload, query: _Query, hw: Hardware, links: Links, output_len: int | None
) -> _Unit:
    arch, precision, stack = workload.arch, query.precision, workload.stack
    work_class = query.work_class
    seq = workload.seq_len
    if workload.kind in TRAINING_KINDS:
        key = f"{work_class}/{stack}"
        group = class_group(work_class)
        if arch.is_transformer:
            terms = training_terms(arch, seq, workload.method, workload.recompute)
            model = training_terms(
                arch, seq, "full" if workload.method == "full" else "lora", "none", kernel=False
            )
            per_unit = seq if query.work.metric == "sequences_per_s" else 1
            parts = with_micro_batches(
                compute_parts(terms, hw, precision), workload.batch_size, seq, arch.layers
            )
            parts = parts.scaled(per_unit)
            model_flops = (model.linear_flops + model.attention_flops) * per_unit
            return _Unit(parts=parts, cost_key=None, efficiency_key=key, group=group, note="",
                         model_flops=model_flops)  # fmt: skip
        cost_key = f"{query.work.model}|{query.work.metric}|{query.work.setting}"
        return _Unit(parts=uncosted_parts(hw, precision), cost_key=cost_key, efficiency_key=key, group=group,
                     note="")  # fmt: skip
    tp = workload.tp
    key = f"prefill/{stack}"
    if work_class == "decode":
        batch = workload.batch_size
        parts = decode_parts(
            arch, hw, precision, batch=batch, context=seq / 2, gpus=tp,
            step_fixed_s=_tp_step_seconds(arch, batch, tp, links),
            kv_bytes=kv_element_bytes(workload.precision, workload.kv_cache),
        )  # fmt: skip
        note = f"decode at batch {batch}, mean context {seq / 2:g} tokens"
        return _Unit(parts=parts, cost_key=None, efficiency_key=key, group="decode", note=note)
    if arch.is_decoder_llm:
        prompt, out = _lengths(workload, output_len)
        found = offline_parts(arch, hw, precision, prompt, out, tp,
                              kv_element_bytes(workload.precision, workload.kv_cache))  # fmt: skip
        if found is None:
            raise ThroughputUnavailable(
                f"{arch.name} ({workload.precision}) does not fit {tp}× {hw.gpu_id} with room for a KV cache"
            )
        parts, batch = found
        batch_fixed = _tp_step_seconds(arch, batch, tp, links) / batch
        note = f"prompt {prompt} + {out} generated tokens per request, decoding {batch} requests at once"
        return _Unit(parts=parts._replace(e=parts.e + batch_fixed), cost_key=None, efficiency_key=key,
                     group="offline", note=note)  # fmt: skip
    if arch.is_transformer:
        terms = forward_terms(arch, seq)
        parts = compute_parts(terms, hw, precision).scaled(seq / tp)
        flops = (terms.linear_flops + terms.attention_flops) * seq / tp
        return _Unit(
            parts=parts, cost_key=None, efficiency_key=key, group="prefill", note="", model_flops=flops
        )
    cost_key = f"{query.work.model}|{query.work.metric}|{query.work.setting}"
    return _Unit(parts=uncosted_parts(hw, precision).scaled(1.0 / tp), cost_key=cost_key, efficiency_key=key,
                 group="prefill", note="")  # fmt: skip


def _flops(parts: Parts, hw: Hardware, precision: PrecisionClass) -> float:
    """FLOPs per unit behind ``parts`` (matmuls at the job's precision, attention in 16 bit)."""
    attention: PrecisionClass = "fp32" if precision == "fp32" else "bf16"
    return parts.a * hw.achievable_tflops(precision) * 1e12 + parts.b * hw.attention_tflops(attention) * 1e12


class _PerGpu(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds per unit on one GPU (or tensor-parallel group) and how they were worked out."""

    seconds: float
    efficiency: EfficiencyUsed
    sigma: float
    score: float
    key: str
    text: str


def _override_seconds(
    override: EfficiencyOverride, unit: _Unit, hw: Hardware, model: ClassModel, query: _Query, stack: str
) -> float:
    """Seconds per unit at the efficiency the workload states (its MFU or bandwidth share)."""
    precision = query.precision
    pkey = precision_key(precision)
    phi = model.precision_factor_of(pkey) if pkey else 1.0
    efficiency = model.efficiency_of(unit.efficiency_key)
    bandwidth = model.efficiency_of(f"decode/{stack}")
    traffic = model.traffic_of(traffic_key(query.work_class))
    flops = unit.model_flops or _flops(unit.parts, hw, precision)
    compute = flops / (override.mfu * hw.peak_tflops(precision) * 1e12) if override.mfu else None
    if compute is None:
        compute = (unit.parts.a / phi + unit.parts.b) / efficiency + traffic * unit.parts.c
    memory = unit.parts.d / (override.bandwidth_utilization or bandwidth) + unit.parts.e
    memory += model.step_overhead_of(overhead_key(query.work_class, stack)) * unit.parts.steps
    return compute + memory


def _roofline_seconds(workload: ResolvedWorkload, query: _Query, unit: _Unit, model: ClassModel) -> float:
    """Seconds per unit of the class model's roofline (times the fitted cost of a work without a
    FLOPs formula)."""
    stack = workload.stack
    pkey = precision_key(query.precision)
    t = seconds(
        unit.parts,
        efficiency=model.efficiency_of(unit.efficiency_key),
        bandwidth=model.efficiency_of(f"decode/{stack}"),
        precision=model.precision_factor_of(pkey) if pkey else 1.0,
        traffic=model.traffic_of(traffic_key(query.work_class)),
        attention=model.attention_factor,
        step_overhead=model.step_overhead_of(overhead_key(query.work_class, stack)),
        gemm_width=model.gemm_width,
    )
    if unit.cost_key is not None:
        cost = model.cost.get(unit.cost_key)
        if cost is None:
            raise ThroughputUnavailable(
                f"{workload.arch.name} has no FLOPs formula and no measured row to set its cost per unit"
            )
        t *= cost
    return t


def _class_text(
    workload: ResolvedWorkload, query: _Query, unit: _Unit, hw: Hardware, model: ClassModel, basis: str
) -> str:
    """How the class model's seconds per unit were worked out."""
    stack = workload.stack
    pkey = precision_key(query.precision)
    overhead = model.step_overhead_of(overhead_key(query.work_class, stack))
    per = (
        "decoding step" if query.work_class in ("decode", "prefill", "offline") else "layer of a micro-batch"
    )
    return (
        f"class {query.work_class}/{stack}: efficiency {model.efficiency_of(unit.efficiency_key):.3f} ({basis})"
        + (f", bandwidth share {model.efficiency_of(f'decode/{stack}'):.3f}" if unit.parts.d > 0 else "")
        + (f", {overhead * 1e3:.2f} ms per {per}" if unit.parts.steps else "")
        + (f", {pkey} factor {model.precision_factor_of(pkey):.2f}" if pkey else "")
        + f", traffic factor {model.traffic_of(traffic_key(query.work_class)):.1f}; {hw.basis}"
    )


def _class_seconds(
    workload: ResolvedWorkload, query: _Query, unit: _Unit, hw: Hardware, model: ClassModel
) -> _PerGpu:
    """The class model's seconds per unit: roofline at the class efficiency, refined by effects."""
    key = unit.efficiency_key
    decode_key = f"decode/{workload.stack}"
    fitted = key in model.efficiency and (unit.parts.d == 0 or decode_key in model.efficiency)
    basis: Literal["calibrated", "prior", "override"] = "calibrated" if fitted else "prior"
    override = workload.efficiency
    if override is not None:
        basis, effect = "override", 0.0
        t = _override_seconds(override, unit, hw, model, query, workload.stack)
    else:
        effect = model.effects(hw.family or hw.gpu_id, workload.arch.name, unit.group)
        t = _roofline_seconds(workload, query, unit, model)
    t /= math.exp(effect)
    sigma = _PRIOR_SIGMA if basis == "prior" else model.sigma.get(key, _PRIOR_SIGMA)
    if hw.peak_proxied:
        sigma = math.hypot(sigma, 0.3)
    text = (
        _class_text(workload, query, unit, hw, model, basis)
        + (f"; GPU-family/model refinement ×{math.exp(effect):.3f}" if abs(effect) > 1e-3 else "")
        + (f"; {unit.note}" if unit.note else "")
    )
    return _PerGpu(
        seconds=t,
        efficiency=EfficiencyUsed(
            basis=basis, class_efficiency=model.efficiency_of(key) if basis != "override" else None
        ),
        sigma=sigma,
        score=_evidence(model, hw, workload.arch.name, unit.group, basis),
        key=key,
        text=text,
    )


def _evidence(model: ClassModel, hw: Hardware, arch_name: str, group: str, basis: str) -> float:
    """Confidence score of a class-model estimate from what its rows say about this GPU and model."""
    if basis == "override":
        return 0.5
    family = f"{hw.family or hw.gpu_id}|{group}" in model.family_effect
    same_model = f"{arch_name}|{group}" in model.model_effect
    score = 0.85 if family and same_model else 0.6 if family else 0.4
    if basis == "prior":
        score *= 0.6
    if hw.peak_proxied:
        score *= 0.6
    return score


_RANKED: IndexMemo[tuple[str, str, str, int], tuple[int, ...]] = IndexMemo(4096)


def _class_sources(
    index: ProfileIndex, model: ClassModel, key: str, family: str, arch_name: str
) -> list[ProfileSource]:
    """The rows that set the class efficiency: this model on this family first, then this family, this
    model, the rest (at most :data:`_MAX_SOURCES`)."""
    memo = _RANKED.of(index)
    memo_key = (key, family, arch_name, id(model))
    ranked = memo.get(memo_key)
    if ranked is None:

        def rank(pid: int) -> tuple[int, int]:
            obs = index.by_id[pid]
            hw = index.hardware(obs.profile.gpu_id)
            same_family = (hw.family or hw.gpu_id) == family
            same_model = obs.arch is not None and obs.arch.name == arch_name
            return (0 if same_family and same_model else 1 if same_family else 2 if same_model else 3, pid)

        ranked = memo[memo_key] = tuple(sorted(model.rows.get(key, ()), key=rank)[:_MAX_SOURCES])
    return _cite(index, [index.by_id[pid] for pid in ranked])


def _band(value: float, sigma: float) -> Band:
    spread = math.exp(_Z90 * sigma)
    return Band(low=value / spread, high=value * spread)


def topology_links(gpu: GpuSpec, topology: Topology) -> Links:
    """The :class:`~solver.throughput.step.Links` of ``topology``'s instances of ``gpu``."""
    return _links(gpu, topology)


def class_seconds_per_unit(
    workload: ResolvedWorkload, gpu: GpuSpec, index: ProfileIndex, exclude: frozenset[int] = frozenset()
) -> float:
    """One GPU's seconds per token (sequence, sample: the throughput's unit) of a training workload
    at its micro-batch and checkpointing, from the class model alone (the layout search's rate).
    Raises :class:`~solver.errors.ThroughputUnavailable` as :func:`estimate_throughput` does for a
    precision the GPU cannot run."""
    query = workload_query(workload, index)
    hw = index.hardware(gpu.gpu_id) if gpu.gpu_id in index.gpus else _hardware_for(gpu, index)
    _check_precision(gpu, hw, workload.precision, query.precision, training=workload.kind in TRAINING_KINDS)
    links = _links(gpu, default_topology(gpu, 1, "none"))
    unit = _unit(workload, query, hw, links, None)
    per = _class_seconds(workload, query, unit, hw, index.class_model(exclude))
    seq = max(workload.seq_len, 1) if query.work.metric == "sequences_per_s" else 1
    return per.seconds / seq


def _links(gpu: GpuSpec, topology: Topology) -> Links:
    traits = FABRIC_TRAITS[topology.network.network_class]
    return instance_links(
        gpu,
        topology.interconnect,
        topology.gpus_per_instance,
        network_gbps=topology.network.gbps,
        network_efficiency=traits.collective_efficiency,
        network_latency_s=traits.latency_us * 1e-6 if math.isfinite(traits.latency_us) else 0.0,
        network_label=f"{topology.network.network_class} ({topology.network.gbps:g} Gbit/s)",
    )


def _implied(
    estimate_per_gpu: float,
    unit: _Unit,
    hw: Hardware,
    precision: PrecisionClass,
    basis: str,
    used: EfficiencyUsed,
) -> EfficiencyUsed:
    """The MFU (compute-bound) or bandwidth share (generation) one GPU's rate implies."""
    if unit.parts.d > 0:
        bandwidth = hw.bandwidth_tbps * 1e12
        moved = unit.parts.d * bandwidth * BANDWIDTH_EFFICIENCY  # bytes behind the bandwidth-bound part
        share = moved * estimate_per_gpu / bandwidth if bandwidth else None
        return msgspec.structs.replace(used, bandwidth_utilization=round(share, 4) if share else None)
    flops = unit.model_flops or _flops(unit.parts, hw, precision)
    if unit.cost_key is not None or hw.peak_tflops(precision) <= 0:
        return used
    mfu = flops * estimate_per_gpu / (hw.peak_tflops(precision) * 1e12)
    return msgspec.structs.replace(used, mfu=round(mfu, 4))


def _at_count(workload: ResolvedWorkload, gpu_count: int, interconnect: Interconnect) -> ResolvedWorkload:
    """``workload`` on ``gpu_count`` GPUs (its data parallelism follows), or InvalidWorkload for a
    count that is not a whole number of tensor-parallel groups or a group without links."""
    if gpu_count < 1:
        raise InvalidWorkload("gpu_count", f"must be at least 1, got {gpu_count}")
    tp = workload.tp
    if gpu_count % tp:
        raise InvalidWorkload("gpu_count", f"must be a multiple of tp ({tp}), got {gpu_count}")
    model = tp * workload.pp * workload.cp
    if gpu_count % model:
        raise InvalidWorkload("gpu_count", f"must be a multiple of tp x pp x cp ({model}), got {gpu_count}")
    if tp > 1 and interconnect == "none":
        raise InvalidWorkload("tp", "a tensor-parallel group needs GPUs linked inside one instance, not none")
    if workload.gpu_count != gpu_count:
        workload = msgspec.structs.replace(workload, gpu_count=gpu_count, dp=gpu_count // model)
    return workload


def estimate_throughput(
    workload: ResolvedWorkload,
    gpu: GpuSpec,
    gpu_count: int,
    interconnect: Interconnect,
    profiles: Sequence[MeasuredProfile],
    gpus: Mapping[str, GpuSpec],
    *,
    output_len: int | None = None,
    index: ProfileIndex | None = None,
    topology: Topology | None = None,
    exclude: frozenset[int] = frozenset(),
    scale: ScaleTerm | None = None,
) -> ThroughputEstimate:
    """Throughput of ``workload`` on ``gpu_count`` × ``gpu`` (total over all GPUs).

    Units: training ``tokens_per_s`` (decoders), ``sequences_per_s`` (encoders) or ``images_per_s``
    (vision); ``batch_inference`` of a decoder: generated ``output_tokens_per_s`` for requests of
    ``seq_len`` tokens of which ``output_len`` are generated (default half); ``serving`` of a decoder:
    decode ``output_tokens_per_s`` at ``batch_size`` concurrent sequences of mean context
    ``seq_len / 2``; other inference ``samples_per_s``.

    ``gpu_count`` overrides ``workload.gpu_count``. Training spreads one data-parallel job (tensor
    parallelism ``workload.tp`` inside an instance) over ``topology`` (default :func:`default_topology`);
    inference runs ``gpu_count / tp`` independent replicas. ``exclude`` leaves measured rows out (the
    accuracy tests use it). Pass a prebuilt ``index`` to skip indexing ``profiles``. ``scale`` is the
    efficiency-at-scale term (:mod:`solver.throughput.at_scale`) a class-model training estimate on
    more than 256 GPUs is multiplied by (``None``: none).

    Raises :class:`~solver.errors.InvalidWorkload` for a bad ``gpu_count`` or a tensor-parallel group
    on interconnect ``none``, and :class:`~solver.errors.ThroughputUnavailable` when nothing supports
    an estimate (a precision the GPU has no tensor cores for, a model that does not fit for inference,
    a work without a FLOPs formula and no rows).
    """
    workload = _at_count(workload, gpu_count, interconnect)
    if index is None:
        index = profile_index(profiles, gpus)
    tp = workload.tp
    query = workload_query(workload, index, output_len)
    hw = index.hardware(gpu.gpu_id) if gpu.gpu_id in index.gpus else _hardware_for(gpu, index)
    if hw.bf16_tflops <= 0:
        raise ThroughputUnavailable(f"{gpu.name}: neither its dense peak nor its memory bandwidth is known")
    training = workload.kind in TRAINING_KINDS
    _check_precision(gpu, hw, workload.precision, query.precision, training=training)
    topology = topology or default_topology(gpu, gpu_count, interconnect)
    group_count = gpu_count if training else tp
    replicas = 1 if training else gpu_count // tp
    group_link = interconnect if group_count > 1 else "none"
    measured = [] if workload.efficiency else _measured(query, gpu, group_count, group_link, index, exclude)
    if measured:  # left-out checkpointing: the rows ran with their source's own
        return _from_measured(query, workload, gpu, measured, replicas, index)
    recompute_note = ""
    if workload.recompute_auto and training:
        workload, recompute_note = least_recompute(workload, gpu.memory_gib)
        query = workload_query(workload, index, output_len)
    found = _from_class_model(workload, query, gpu, hw, topology, index, exclude, output_len, scale)
    if recompute_note:
        found = msgspec.structs.replace(found, method=f"{recompute_note}; {found.method}")
    return found


@functools.lru_cache(maxsize=4096)
def least_recompute(workload: ResolvedWorkload, capacity_gib: float) -> tuple[ResolvedWorkload, str]:
    """The workload with the least activation checkpointing whose memory fits ``capacity_gib`` per GPU
    (full checkpointing when none does), and a note saying which was chosen and why."""
    for level in RECOMPUTE_LEVELS:
        candidate = msgspec.structs.replace(workload, recompute=level)
        need = estimate_memory(candidate).per_gpu_gib
        if need <= capacity_gib:
            return (
                candidate,
                f"recompute {level} (the least activation checkpointing that fits: {need:,.1f} of {capacity_gib:g} GiB)",
            )
    return (
        msgspec.structs.replace(workload, recompute="full"),
        f"recompute full (nothing fits {capacity_gib:g} GiB per GPU in this layout; full checkpointing assumed)",
    )


def _from_measured(
    query: _Query,
    workload: ResolvedWorkload,
    gpu: GpuSpec,
    rows: list[Observation],
    replicas: int,
    index: ProfileIndex,
) -> ThroughputEstimate:
    value = weighted_median((obs.profile.value, 1.0) for obs in rows) * query.unit_scale * replicas
    where = f"{rows[0].profile.gpu_count}× {gpu.gpu_id} ({query.precision})"
    prefix = f"{query.adjustment}; " if query.adjustment else ""
    text = f"{prefix}measured: median of {len(rows)} matching row(s) for {workload.arch.name} on {where}"
    if replicas > 1:
        text = f"{replicas} independent replicas of {workload.tp} GPU(s), each: {text}"
    spread = [obs.profile.value for obs in rows]
    sigma = 0.05 if len(spread) < 2 else max(0.05, math.log(max(spread) / min(spread)) / 2)
    return ThroughputEstimate(
        value=value,
        unit=query.work.metric,
        provenance="derived" if query.adjustment or replicas > 1 else "measured",
        route="measured",
        sources=_cite(index, rows),
        confidence="high",
        confidence_score=0.9 if query.adjustment else 1.0,
        method=text,
        workload_class=query.work_class,
        stack=workload.stack,
        efficiency=EfficiencyUsed(basis="measured"),
        band=_band(value, sigma + (0.05 if query.adjustment else 0.0)),
    )


class _Rate(msgspec.Struct, frozen=True, kw_only=True):
    """A class-model rate over all the job's GPUs, with what moved it from one GPU's."""

    value: float
    per_gpu: float
    where: str
    sigma: float
    score: float
    scaling: ScalingEstimate | None = None
    layout: Layout | None = None


def _training_rate(
    workload: ResolvedWorkload,
    query: _Query,
    per: _PerGpu,
    links: Links,
    gpu: GpuSpec,
    scale: ScaleTerm | None,
) -> _Rate:
    """One GPU's rate × the count × what the layout keeps of linear scaling."""
    count = workload.gpu_count
    per_gpu = 1.0 / per.seconds
    seq = max(workload.seq_len, 1) if query.work.metric == "sequences_per_s" else 1
    target, _ = global_batch_tokens(
        query.work_class, workload.arch.params_b * 1e9, workload.global_batch_tokens
    )
    layout = layout_of(workload, target)
    value, sigma, score, scaling = per_gpu * count, per.sigma, per.score, None
    if count > 1:
        scaling, scaling_sigma = training_scaling(
            workload, links, per.seconds / seq, workload_class=query.work_class, stack=workload.stack,
            adapter_params=_adapters(workload), global_batch_tokens=target,
        )  # fmt: skip
        value *= scaling.efficiency
        sigma = math.hypot(sigma, scaling_sigma, LAYOUT_SIGMA)
        score *= 1.0 - 0.5 * scaling.communication_fraction
    where = f"{count}× {gpu.gpu_id} ({_precision_text(workload.precision, query.precision)})"
    if scale is not None and scale.exponent(count, workload.arch.params_b * 1e9, gpu.architecture) > 0:
        params = workload.arch.params_b * 1e9
        value *= scale.factor(count, params, gpu.architecture)
        sigma = math.hypot(sigma, scale.spread(count))
        where += f"; {scale.text(count, params, gpu.architecture)}"
    return _Rate(value=value, per_gpu=per_gpu, where=where, sigma=sigma, score=score, scaling=scaling,
                 layout=layout)  # fmt: skip


def _precision_text(weights: str, matmuls: str) -> str:
    """The precision a method names: the weights' where the matmuls run at another (QLoRA's NF4
    weights dequantised to bf16; int4 AWQ/GPTQ), else the one precision."""
    if weights in (matmuls, "fp16") or (weights, matmuls) == ("bf16", "bf16"):
        return matmuls
    return f"{weights} weights, {matmuls} matmuls"


def _inference_rate(workload: ResolvedWorkload, query: _Query, per: _PerGpu, gpu: GpuSpec) -> _Rate:
    """``gpu_count / tp`` independent replicas of one tensor-parallel group."""
    count, tp = workload.gpu_count, workload.tp
    group_rate = 1.0 / per.seconds
    where = f"{count // tp} independent replicas of {tp}× {gpu.gpu_id} ({_precision_text(workload.precision, query.precision)})"
    return _Rate(value=group_rate * (count // tp), per_gpu=group_rate / tp, where=where, sigma=per.sigma,
                 score=per.score)  # fmt: skip


def _efficiency_used(
    workload: ResolvedWorkload, per: _PerGpu, rate: _Rate, unit: _Unit, hw: Hardware, query: _Query
) -> EfficiencyUsed:
    override = workload.efficiency
    if per.efficiency.basis == "override" and override is not None:
        return EfficiencyUsed(
            basis="override", mfu=override.mfu, bandwidth_utilization=override.bandwidth_utilization
        )  # echoed as given
    per_gpu = rate.value / workload.gpu_count if workload.kind in TRAINING_KINDS else rate.per_gpu
    return _implied(per_gpu, unit, hw, query.precision, per.efficiency.basis, per.efficiency)


def _from_class_model(
    workload: ResolvedWorkload,
    query: _Query,
    gpu: GpuSpec,
    hw: Hardware,
    topology: Topology,
    index: ProfileIndex,
    exclude: frozenset[int],
    output_len: int | None,
    scale: ScaleTerm | None = None,
) -> ThroughputEstimate:
    model = index.class_model(exclude)
    links = _links(gpu, topology)
    unit = _unit(workload, query, hw, links, output_len)
    per = _class_seconds(workload, query, unit, hw, model)
    training = workload.kind in TRAINING_KINDS
    rate = _training_rate(workload, query, per, links, gpu, scale) if training else _inference_rate(
        workload, query, per, gpu
    )  # fmt: skip
    scaling = rate.scaling
    if rate.value <= 0 or not math.isfinite(rate.value):
        raise ThroughputUnavailable(
            f"{workload.arch.name} cannot run across these instances: {scaling.method if scaling else 'no rate'}"
        )
    overridden = per.efficiency.basis == "override"
    sources = [] if overridden else _class_sources(
        index, model, per.key, hw.family or hw.gpu_id, workload.arch.name
    )  # fmt: skip
    scaling_text = f"; scaling {scaling.efficiency:.3f}: {scaling.method}" if scaling else ""
    return ThroughputEstimate(
        value=rate.value,
        unit=query.work.metric,
        provenance="derived",
        route="override" if overridden else "class_model",
        sources=sources,
        confidence=_label(rate.score),
        confidence_score=round(rate.score, 3),
        method=(
            f"derived for {workload.arch.name} on {rate.where}: {per.text}{scaling_text}; "
            f"{len(sources)} row(s) cited"
        ),
        workload_class=query.work_class,
        stack=workload.stack,
        efficiency=_efficiency_used(workload, per, rate, unit, hw, query),
        band=_band(rate.value, rate.sigma),
        scaling=scaling,
        layout=rate.layout,
    )


def _adapters(workload: ResolvedWorkload) -> float:
    if workload.method == "full" or not workload.arch.is_transformer:
        return 0.0
    return lora_params(workload)


@functools.lru_cache(maxsize=4)
def _cached_index(
    profiles: tuple[MeasuredProfile, ...], gpus: tuple[tuple[str, GpuSpec], ...]
) -> ProfileIndex:
    return ProfileIndex(profiles, dict(gpus))


def profile_index(profiles: Sequence[MeasuredProfile], gpus: Mapping[str, GpuSpec]) -> ProfileIndex:
    """The index of ``profiles`` (built once per distinct content and cached)."""
    return _cached_index(tuple(profiles), tuple(sorted(gpus.items())))


def _hardware_for(gpu: GpuSpec, index: ProfileIndex) -> Hardware:
    """The hardware view of a GPU the index does not know (a caller's own spec)."""
    return hardware_of(gpu, {**index.gpus, gpu.gpu_id: gpu})


def prompt_seconds(
    workload: ResolvedWorkload,
    gpu: GpuSpec,
    tp: int,
    interconnect: Interconnect,
    index: ProfileIndex,
    prompt_len: int,
    *,
    exclude: frozenset[int] = frozenset(),
) -> tuple[float, str]:
    """Seconds a ``tp``-GPU replica spends on one prompt of ``prompt_len`` tokens (its forward pass) at
    the calibrated prefill efficiency, and how that was worked out.

    Raises :class:`~solver.errors.ThroughputUnavailable` when the GPU lacks the precision.
    """
    hw = index.hardware(gpu.gpu_id) if gpu.gpu_id in index.gpus else _hardware_for(gpu, index)
    precision = WORKLOAD_PRECISION_CLASS[workload.precision]
    _check_precision(gpu, hw, workload.precision, precision, training=False)
    model = index.class_model(exclude)
    key = f"prefill/{workload.stack}"
    pkey = precision_key(precision)
    phi = model.precision_factor_of(pkey) if pkey else 1.0
    efficiency = model.efficiency_of(key)
    override = workload.efficiency
    parts = compute_parts(forward_terms(workload.arch, prompt_len), hw, precision).scaled(prompt_len / tp)
    if override is not None and override.mfu is not None:
        per_prompt = _flops(parts, hw, precision) / (override.mfu * hw.peak_tflops(precision) * 1e12)
        basis = f"given MFU {override.mfu:g}"
    else:
        traffic = model.traffic_of("inference")
        per_prompt = seconds(
            parts,
            efficiency=efficiency,
            bandwidth=1.0,
            precision=phi,
            traffic=traffic,
            attention=model.attention_factor,
            gemm_width=model.gemm_width,
        )
        per_prompt /= math.exp(model.effects(hw.family or hw.gpu_id, workload.arch.name, "prefill"))
        basis = f"prefill/{workload.stack} efficiency {efficiency:.3f} ({'calibrated' if key in model.efficiency else 'prior'})"
    mfu = _flops(parts, hw, precision) / (per_prompt * hw.peak_tflops(precision) * 1e12)
    return per_prompt, f"{basis}, MFU {mfu:.2f} of the {precision} peak"
