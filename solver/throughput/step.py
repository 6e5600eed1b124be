"""One optimizer step of a parallel layout: compute, pipeline bubble and exposed communication.

A job of ``n`` GPUs in instances of ``g`` is laid out as Megatron-LM orders its groups: tensor
parallelism ``tp`` innermost (inside one NVLink domain), then context parallelism ``cp``, then data
parallelism ``dp``, pipeline stages ``pp`` outermost, so that ``n = tp · cp · dp · pp``. Per step every
pipeline runs ``m`` micro-batches of ``b`` sequences (``dp · b · m · s`` tokens, the global batch).

- **compute**: one micro-batch costs each GPU ``c = b·s·t / (tp·cp·pp)`` seconds (``t`` = one GPU's
  seconds per token for the whole model, from the class model); ``m·c`` per step.
- **pipeline bubble** (1F1B with ``v`` interleaved chunks): ``(p − 1)/v · c``, a share
  ``(p − 1)/(v·m + p − 1)`` of the step (Narayanan et al. 2021, §2.2).
- **gradient synchronisation** once per step (all-reduce; ZeRO-1/2 as reduce-scatter + all-gather of the
  same volume) of each rank's gradient shard ``S = trainable / (tp·pp)`` over its ``dp·cp`` group,
  hierarchically: ``2(r − 1)/r · S`` over the instance's links among the group's ``r`` ranks there, then
  ``2(k − 1)/k · S / r`` per rank between the ``k`` instances the group spans (NCCL's ring ``busBW``
  convention, nccl-tests PERFORMANCE.md). **Every GPU of an instance belongs to one group and the
  ``g / r`` groups of an instance run at once**, so the instance's NICs carry ``g / r`` such
  collectives: the inter-instance time is ``(g / r) · 2(k − 1)/k · S / W`` with ``W`` the instance's
  whole network bandwidth. Hidden behind the last micro-batch's backward pass up to the stack's overlap.
- **ZeRO-3 / FSDP**: weights gathered in forward and backward and gradients reduce-scattered every
  micro-batch (three half all-reduces of the weight shard), over the same groups, hidden behind that
  micro-batch's compute.
- **tensor parallelism** (inside the NVLink domain only): four all-reduces (sequence parallel: all-gather
  + reduce-scatter) of the ``b·s/cp·h`` activations per layer per micro-batch (Shoeybi et al. 2019 §3).
- **context parallelism**: each layer passes the chunks' keys and values around the ring (``cp − 1``
  hops forward, twice that backward), over NVLink while ``tp·cp`` fits an instance, else each GPU over
  its share of the NICs; overlapped with attention.
- **pipeline point-to-point**: each micro-batch sends ``b·s/cp·h`` activations forward and their
  gradients back across every stage boundary (``v`` times with interleaving), split over the ``tp``
  ranks (scatter/gather, Narayanan et al. 2021 §4.1); once the job spans instances a boundary lies
  between two of them and paces the pipeline (each GPU over its share of the NICs).

A collective hides behind the compute it runs alongside up to the stack's overlap quality
(:data:`OVERLAP`); the last bucket never hides (:data:`TAIL_EXPOSED`).
"""

from __future__ import annotations

import math
from typing import Final, Literal

import msgspec

from solver.spec.workload import ResolvedWorkload

__all__ = [
    "OVERLAP",
    "TAIL_EXPOSED",
    "Layout",
    "Links",
    "StepSizes",
    "StepTime",
    "Zero",
    "inter_instance_bytes_per_nic",
    "sizes_of",
    "step_time",
]

Zero = Literal["none", "zero1", "zero2", "zero3"]

OVERLAP: Final[dict[str, tuple[float, float]]] = {"optimized": (0.90, 0.50), "standard": (0.75, 0.0)}
"""(share of a gradient/FSDP/pipeline collective that hides behind compute, share of tensor-parallel
traffic hidden) per stack: Megatron/NeMo/torchtitan overlap bucketed reduce-scatter and parameter
gathers with backward and forward and split TP all-reduces behind GEMMs; DDP/FSDP in
Transformers/Accelerate overlap bucketed all-reduce with backward only."""

TAIL_EXPOSED: Final = 0.05
"""Share of a gradient synchronisation that never overlaps (the last bucket after the last layer)."""

_BUCKET_BYTES: Final = 25 * 2**20  # PyTorch DDP's default bucket (bucket_cap_mb=25)


class Links(msgspec.Struct, frozen=True, kw_only=True):
    """The bandwidths a job's collectives cross (bytes/s) and their latencies (s)."""

    gpus_per_instance: int
    intra_bytes_per_s: float
    intra_latency_s: float
    intra_label: str
    inter_bytes_per_s: float
    """The instance's whole network bandwidth achievable by collectives (0: instances cannot talk)."""
    inter_latency_s: float
    inter_label: str


class Layout(msgspec.Struct, frozen=True, kw_only=True):
    """A training job's parallel layout: how its GPUs split the model, the sequence and the batch."""

    tp: int
    pp: int
    vpp: int
    cp: int
    dp: int
    zero: Zero
    micro_batch: int
    gradient_accumulation: int
    recompute: Literal["none", "selective", "full"]
    global_batch_tokens: int

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    def text(self) -> str:
        return (
            f"tp {self.tp}, pp {self.pp}" + (f" (vpp {self.vpp})" if self.vpp > 1 else "")
            + f", cp {self.cp}, dp {self.dp}, {self.zero}, micro-batch {self.micro_batch} × "
            f"{self.gradient_accumulation} accumulation, recompute {self.recompute}, "
            f"{self.global_batch_tokens:,} tokens per step"
        )  # fmt: skip


class StepTime(msgspec.Struct, frozen=True, kw_only=True):
    """Seconds of one optimizer step by part (per GPU; communication as exposed, not as sent)."""

    compute: float
    bubble: float
    intra: float
    inter: float
    inter_bytes_per_nic: float
    notes: list[str]

    @property
    def total(self) -> float:
        return self.compute + self.bubble + self.intra + self.inter


def _exposed(collective_s: float, window_s: float) -> float:
    """Seconds of a collective left over after hiding behind ``window_s`` of compute."""
    if math.isinf(collective_s):
        return math.inf
    return max(0.0, collective_s - window_s) + TAIL_EXPOSED * min(collective_s, window_s)


def _placement(layout: Layout, g: int) -> tuple[int, int]:
    """(ranks of one data-parallel group inside an instance, instances the group spans)."""
    model = layout.tp * layout.cp
    group = layout.dp * layout.cp
    here = max(1, min(group, g // max(layout.tp, 1))) if model <= g else 1
    return here, math.ceil(group / here)


def inter_instance_bytes_per_nic(
    message: float, groups_per_instance: int, instances: int, nics: int
) -> float:
    """Bytes each NIC of an instance sends for one hierarchical all-reduce of ``message`` bytes per
    group, with ``groups_per_instance`` groups running at once over the instance's ``nics`` NICs."""
    if instances <= 1:
        return 0.0
    return groups_per_instance * 2 * (instances - 1) / instances * message / max(nics, 1)


def _group_collective(size: float, layout: Layout, links: Links, g: int) -> tuple[float, float, float]:
    """(intra s, inter s, inter bytes per NIC) of an all-reduce of ``size`` bytes per rank over every
    data-parallel group at once."""
    here, spans = _placement(layout, g)
    buckets = max(1, math.ceil(size / _BUCKET_BYTES))
    intra = 0.0
    if here > 1:
        intra = 2 * (here - 1) / here * size / links.intra_bytes_per_s + buckets * 2 * links.intra_latency_s
    if spans <= 1:
        return intra, 0.0, 0.0
    per_nic = inter_instance_bytes_per_nic(size, max(1, g // here), spans, g)
    if links.inter_bytes_per_s <= 0:
        return intra, math.inf, per_nic
    inter = per_nic * g / links.inter_bytes_per_s + buckets * 2 * math.log2(spans) * links.inter_latency_s
    return intra, inter, per_nic


class StepSizes(msgspec.Struct, frozen=True, kw_only=True):
    """What the collectives move, from the model: widths, layers and parameters (:func:`sizes_of`)."""

    layers: int
    hidden: int
    kv_width: int
    seq_len: int
    trainable: float
    params: float
    grad_bytes: float
    backward_share: float


def _data_parallel(
    layout: Layout, sizes: StepSizes, links: Links, g: int, c: float, hide: float, notes: list[str]
) -> tuple[float, float, float]:
    """(exposed intra s, exposed inter s, inter bytes per NIC) of the step's data-parallel traffic."""
    if layout.dp * layout.cp <= 1:
        return 0.0, 0.0, 0.0
    m = layout.gradient_accumulation
    if layout.zero == "zero3":
        shard = 1.5 * sizes.params / (layout.tp * layout.pp) * 2.0
        intra, inter, per_nic = _group_collective(shard, layout, links, g)
        exposed = _exposed(intra + inter, hide * c) * m
        notes.append(f"ZeRO-3 gathers {shard / 2**30:,.2f} GiB per micro-batch")
        per_nic *= m
    else:
        grads = sizes.trainable / (layout.tp * layout.pp) * sizes.grad_bytes
        intra, inter, per_nic = _group_collective(grads, layout, links, g)
        exposed = _exposed(intra + inter, hide * sizes.backward_share * c)
        notes.append(f"gradient all-reduce of {grads / 2**30:,.2f} GiB per rank per step")
    if math.isinf(inter):
        return 0.0, math.inf, per_nic
    total = intra + inter
    share = inter / total if total > 0 else 0.0
    return exposed * (1 - share), exposed * share, per_nic


def _model_parallel(
    layout: Layout, sizes: StepSizes, links: Links, g: int, c: float, overlap: tuple[float, float]
) -> tuple[float, float, list[str]]:
    """(exposed intra s, exposed inter s) per step of tensor, context and pipeline traffic."""
    hide, hide_tp = overlap
    m, notes = layout.gradient_accumulation, []
    tokens = layout.micro_batch * sizes.seq_len / layout.cp
    layers = math.ceil(sizes.layers / layout.pp)
    nic = links.inter_bytes_per_s / g if links.inter_bytes_per_s > 0 else 0.0
    intra = inter = 0.0
    if layout.tp > 1:
        size = tokens * sizes.hidden * 2.0
        tp_s = 4 * layers * (2 * (layout.tp - 1) / layout.tp * size / links.intra_bytes_per_s)
        tp_s += 4 * layers * links.intra_latency_s
        intra += (1 - hide_tp) * tp_s * m
        notes.append(f"tensor parallel {layout.tp}: {tp_s * 1e3:,.1f} ms per micro-batch")
    if layout.cp > 1:
        kv = tokens * 2 * sizes.kv_width * 2.0 * 3 * (layout.cp - 1) * layers
        inside = layout.tp * layout.cp <= g
        cp_s = kv / links.intra_bytes_per_s if inside else (kv / nic if nic else math.inf)
        exposed = _exposed(cp_s, hide * c) * m
        intra, inter = (intra + exposed, inter) if inside else (intra, inter + exposed)
        notes.append(f"context parallel {layout.cp}: {kv / 2**20:,.0f} MiB of keys/values per micro-batch")
    if layout.pp > 1:
        crossing = layout.gpus > g  # some stage boundary lies between instances and paces the pipeline
        p2p = 2 * layout.vpp * tokens * sizes.hidden * 2.0 / layout.tp
        p2p_s = p2p / (nic if crossing else links.intra_bytes_per_s) if (nic or not crossing) else math.inf
        exposed = (1 - hide) * p2p_s * m
        intra, inter = (intra, inter + exposed) if crossing else (intra + exposed, inter)
        notes.append(f"pipeline {layout.pp} stages: {p2p / 2**20:,.1f} MiB point-to-point per micro-batch")
    return intra, inter, notes


def step_time(
    layout: Layout, links: Links, seconds_per_token: float, sizes: StepSizes, stack: str
) -> StepTime:
    """Seconds of one optimizer step of ``layout`` over ``links`` (module docstring)."""
    g = max(1, min(links.gpus_per_instance, layout.gpus))
    c = layout.micro_batch * sizes.seq_len * seconds_per_token / (layout.tp * layout.cp * layout.pp)
    compute = layout.gradient_accumulation * c
    bubble = (layout.pp - 1) / layout.vpp * c if layout.pp > 1 else 0.0
    overlap = OVERLAP.get(stack, OVERLAP["standard"])
    notes: list[str] = []
    d_intra, d_inter, per_nic = _data_parallel(layout, sizes, links, g, c, overlap[0], notes)
    m_intra, m_inter, m_notes = _model_parallel(layout, sizes, links, g, c, overlap)
    if bubble:
        share = bubble / (compute + bubble)
        notes.append(f"pipeline bubble {share:.1%} ((p−1)/(v·m+p−1), p {layout.pp}, v {layout.vpp})")
    return StepTime(
        compute=compute,
        bubble=bubble,
        intra=d_intra + m_intra,
        inter=d_inter + m_inter,
        inter_bytes_per_nic=per_nic,
        notes=notes + m_notes,
    )


def sizes_of(rw: ResolvedWorkload, adapter_params: float, stack: str) -> StepSizes:
    """The :class:`StepSizes` of ``rw``; ``adapter_params`` are the trainable ones of LoRA."""
    arch = rw.arch
    params = arch.params_b * 1e9
    return StepSizes(
        layers=max(arch.layers, 1),
        hidden=arch.hidden_size,
        kv_width=arch.kv_heads * arch.effective_head_dim if arch.is_transformer else 0,
        seq_len=max(rw.seq_len, 1),
        trainable=adapter_params if rw.method != "full" else params,
        params=params,
        grad_bytes=2.0 if stack == "optimized" or rw.precision == "fp32" else 4.0,
        backward_share=0.5 if rw.method != "full" else 2.0 / 3.0,
    )
