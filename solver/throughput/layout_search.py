"""Choose a job's parallel layout for a GPU type and count: the fastest that fits every rank's memory.

Training (:func:`search_layout`) enumerates, holding whatever the workload states (``stated``):

- tensor parallelism ``tp`` of 1, 2, 4, … inside one NVLink domain (the instance's GPUs and the GPU's
  ``nvlink_domain``, NVLink/NVSwitch only), dividing the attention heads;
- context parallelism ``cp`` of 2, 4, … for sequences of at least 8,192 tokens (chunks of ≥ 4,096);
- pipeline stages ``pp`` (divisors of the GPUs left up to 16, powers of two beyond, at most the layers),
  interleaved by ``vpp`` of 2, 4 or 8 (``pp·vpp`` at most the layers); at most :data:`EXTRA_STAGES`
  stage counts beyond the first that fits;
- data parallelism ``dp`` (the rest) with ZeRO stage 0–3 (ZeRO-3 without pipeline stages);
- activation checkpointing none, selective, full;
- the micro-batch: powers of two up to the rank's share of the global batch;
- only the model parallelism the workload's ``stack`` provides (:mod:`solver.catalog.stacks`: the
  standard Transformers + PEFT stack is data-parallel only, with ZeRO/FSDP).

A layout counts when its global batch ``dp × micro_batch × accumulation`` reaches the target
(:mod:`solver.throughput.global_batch`) within :data:`~solver.throughput.global_batch.MIN_BATCH_SHARE`
without exceeding it, and every rank fits (:func:`fits`: the per-rank peak of
:mod:`solver.memory` within ``(1 − memory_headroom)`` of the GPU's memory and, with headroom asked
for, the high end of the memory band within the memory). Among those the fastest by
:mod:`solver.throughput.step` wins (compute at the class model's rate for that micro-batch and
checkpointing + bubble + exposed communication); heavier checkpointing and sharding are tried only
while a lighter one cannot reach the largest micro-batch. Inference takes the least tensor
parallelism that fits.

What the searches learn is kept in a :class:`LayoutCache` the caller owns (one per catalog snapshot).
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Final, Literal, NamedTuple

import msgspec

from solver.catalog.gpus import INTERCONNECT_RANK, GpuSpec
from solver.catalog.stacks import stack_parallelism
from solver.errors import InvalidWorkload, ThroughputUnavailable
from solver.memory.peak import MemoryEstimate, estimate_memory, lora_params, rank_high_gib, rank_point_gib
from solver.spec.workload import RECOMPUTE_CHOICES, Recompute, ResolvedWorkload, Sharding
from solver.throughput.calibration import ProfileIndex
from solver.throughput.estimate import Topology, class_seconds_per_unit, topology_links
from solver.throughput.global_batch import MIN_BATCH_SHARE, global_batch_tokens
from solver.throughput.step import Layout, Links, sizes_of, step_time
from solver.throughput.workclass import workload_class
from solver.throughput.workcost import train_flops_per_token

__all__ = [
    "EXTRA_STAGES",
    "ROOFLINE_MFU",
    "SETTLED_MICRO_TOKENS",
    "CacheTables",
    "LayoutCache",
    "LayoutChoice",
    "LayoutFailure",
    "fits",
    "search_layout",
    "target_batch_tokens",
]

EXTRA_STAGES: Final = 2
"""Pipeline stage counts tried beyond the smallest that fits (more stages only add bubble)."""
_MAX_MICRO_BATCH: Final = 1024
SETTLED_MICRO_TOKENS: Final = 8_192
"""A layout whose lightest checkpointing fits micro-batches of this many tokens (or the rank's whole
share of the batch) is *settled*: heavier sharding, checkpointing, deeper pipelines and more tensor or
context parallelism are not tried beyond it (they only add traffic, bubble or compute; the per-layer
overhead a larger micro-batch would still amortise is a few per cent there for a 1B model, less
for larger ones)."""
ROOFLINE_MFU: Final = 0.4
"""The MFU layouts are rated at when no calibrated profile index is given (the rule of thumb's)."""
_ZEROS: Final[tuple[Sharding, ...]] = ("none", "zero1", "zero2", "zero3")


class CacheTables:
    """Bounded tables of computed values by kind (:attr:`TABLES`): a full table drops its older half
    (:func:`_drop_older_half`), and a lookup is one dict call, so threads may share them."""

    TABLES: tuple[str, ...] = ()

    def __init__(self, max_entries: int = 200_000) -> None:
        self._tables: dict[str, dict[Hashable, object]] = {name: {} for name in self.TABLES}
        self._max = max_entries
        self._lock = threading.Lock()

    def get[V](self, table: str, key: Hashable, compute: Callable[[], V]) -> V:
        """The value of ``key`` in ``table`` (one of :attr:`TABLES`), computed on first use."""
        held = self._tables[table]
        found = held.get(key)
        if found is None:
            found = compute()
            with self._lock:
                if len(held) >= self._max:
                    _drop_older_half(held)
                held[key] = found
        return found  # type: ignore[return-value]  # stored by this method under its own key

    def __len__(self) -> int:
        return sum(len(table) for table in self._tables.values())


def _drop_older_half(table: dict[Hashable, object]) -> None:
    """Evict the first-inserted half of a full table (a dict keeps insertion order): the next plans
    keep what the latest ones worked out, where clearing the whole table made every workload cold at
    once (a 16k-GPU plan of a new model adds ~90,000 entries). Called under the table's lock, which
    every insertion holds."""
    for key in list(itertools.islice(table, len(table) // 2)):
        del table[key]


class LayoutCache(CacheTables):
    """What layout searches learn on one catalog snapshot, in tables by kind: ``memory`` (a rank's
    peak by workload and layout), ``highs`` (the high end of its band, for peaks that fit),
    ``micros`` (the micro-batches that fit a layout), ``walks`` (a count's layouts worth rating at one
    tensor and context parallelism), ``offers`` (a count's layouts worth rating on a topology),
    ``rates`` (one GPU's seconds per unit), ``choices`` (the layout chosen per count, GPU, topology and
    headroom) and ``estimates`` (its full memory estimate).
    Bounded (a full table drops its older half); a lookup is one dict call, so threads may share it."""

    TABLES = ("memory", "highs", "micros", "walks", "offers", "rates", "choices", "estimates")


class LayoutChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The layout chosen for a count: the workload laid out so, its per-rank memory, and its score."""

    workload: ResolvedWorkload
    layout: Layout
    memory: MemoryEstimate
    score: float
    """Tokens (or samples) per second the search's step model gave it (ranks layouts, not reported)."""
    edge: LayoutChoice | None = None
    """The fastest layout the search met that fits only below the memory headroom (its peak within the
    GPU's memory, not within ``1 − memory_headroom`` of it), when it is faster than this one: what
    the headroom costs at this count. ``None`` without headroom or when the headroom costs nothing."""


class LayoutFailure(msgspec.Struct, frozen=True, kw_only=True):
    """Why no layout runs the job on that count: ``memory``, ``global_batch`` or ``network`` (fitting
    layouts span instances without one), naming the field a request would change."""

    reason: Literal["memory", "global_batch", "network"]
    detail: str
    field: str
    need_gib: float = 0.0
    edge: LayoutChoice | None = None
    """The fastest layout that fits only below the memory headroom (see :attr:`LayoutChoice.edge`)."""


def fits(point_gib: float, high_gib: float, capacity_gib: float, memory_headroom: float) -> bool:
    """Whether a rank's peak stays within ``(1 − memory_headroom)`` of ``capacity_gib`` (and, with
    headroom asked for, the band's high end within the capacity)."""
    if point_gib > (1.0 - memory_headroom) * capacity_gib:
        return False
    return memory_headroom <= 0 or high_gib <= capacity_gib


def target_batch_tokens(template: ResolvedWorkload) -> tuple[float, str]:
    """Tokens per optimizer step the layout must meet: ``global_batch_tokens``, else the workload's
    ``batch_size`` (the global batch in sequences) × ``seq_len``, else the rule by model size."""
    stated = template.global_batch_tokens
    if stated is None and template.global_batch is not None:
        stated = template.global_batch * max(template.seq_len, 1)
    return global_batch_tokens(workload_class(template), template.arch.params_b * 1e9, stated)


def _domain(gpu: GpuSpec, topology: Topology) -> int:
    if INTERCONNECT_RANK[topology.interconnect] < INTERCONNECT_RANK["nvlink"]:
        return 1
    return max(1, min(topology.gpus_per_instance, gpu.nvlink_domain))


def _powers(limit: int) -> Iterator[int]:
    value = 1
    while value <= limit:
        yield value
        value *= 2


def _tps(rw: ResolvedWorkload, gpu: GpuSpec, topology: Topology, count: int) -> list[int]:
    if "tp" in rw.stated:
        return [rw.tp]
    if not rw.arch.is_transformer or not (rw.is_inference or stack_parallelism(rw.stack).tensor):
        return [1]
    domain = _domain(gpu, topology)
    return [t for t in _powers(domain) if count % t == 0 and rw.arch.attention_heads % t == 0]


def _cps(rw: ResolvedWorkload, rest: int) -> list[int]:
    if "cp" in rw.stated:
        return [rw.cp]
    if rw.is_inference or not rw.arch.is_transformer or not stack_parallelism(rw.stack).context:
        return [1]
    return [c for c in _powers(min(rest, 64)) if (rest % c == 0 and rw.seq_len % c == 0 and rw.seq_len // c >= 4096)
            or c == 1]  # fmt: skip


def _pps(rw: ResolvedWorkload, rest: int) -> list[int]:
    if "pp" in rw.stated:
        return [rw.pp] if rest % rw.pp == 0 else []
    if rw.is_inference or not rw.arch.is_transformer or not stack_parallelism(rw.stack).pipeline:
        return [1]
    limit = min(rest, rw.arch.layers, 256)
    return [p for p in range(1, limit + 1) if rest % p == 0 and (p <= 16 or p & (p - 1) == 0)]


def _vpps(rw: ResolvedWorkload, pp: int) -> list[int]:
    if "vpp" in rw.stated:
        return [rw.vpp]
    if pp < 2:
        return [1]
    return [v for v in (1, 2, 4, 8) if pp * v <= rw.arch.layers]


def _zeros(rw: ResolvedWorkload, pp: int, shards: int) -> tuple[Sharding, ...]:
    if "sharding" in rw.stated:
        return (rw.sharding,)
    if shards <= 1:
        return ("none",)
    return _ZEROS if pp == 1 else _ZEROS[:2]


def _recomputes(rw: ResolvedWorkload) -> tuple[Recompute, ...]:
    return (rw.recompute,) if "recompute" in rw.stated else RECOMPUTE_CHOICES


class _Search:
    """One search: the template, the GPU and its links, the target batch, the cache."""

    def __init__(
        self,
        template: ResolvedWorkload,
        gpu: GpuSpec,
        topology: Topology,
        index: ProfileIndex | None,
        cache: LayoutCache,
        memory_headroom: float,
        exclude: frozenset[int],
    ) -> None:
        self.template, self.gpu, self.topology, self.index = template, gpu, topology, index
        self.cache, self.headroom, self.exclude = cache, memory_headroom, exclude
        self.key = _template_key(template)
        self.links: Links = topology_links(gpu, topology)
        self.tokens, self.basis = target_batch_tokens(template)
        self.seq = max(template.seq_len, 1)
        self.sequences = max(1, math.floor(self.tokens / self.seq + 1e-9))
        self.sizes = sizes_of(template, _adapters(template), template.stack)
        self.rates: dict[tuple[int, str], float] = {}
        self.smallest_need = math.inf
        self.batch_blocked = 0
        self.unpriced = 0
        """Layouts that fit but cannot run: their instances have no network between them."""

    def rate(self, rw: ResolvedWorkload) -> float:
        key = (rw.batch_size, rw.recompute)
        found = self.rates.get(key)
        if found is None:
            shared = (self.key, self.gpu.gpu_id, id(self.index), self.exclude, *key)
            found = self.rates[key] = self.cache.get("rates", shared, lambda: self._rate(rw))
        return found

    def _rate(self, rw: ResolvedWorkload) -> float:
        if self.index is None:
            return _roofline_seconds_per_unit(rw, self.gpu)
        return class_seconds_per_unit(rw, self.gpu, self.index, self.exclude)

    def _memory_key(self, rw: ResolvedWorkload) -> Hashable:
        shards = rw.dp * rw.cp if rw.sharding != "none" else 0
        return (self.key, rw.tp, rw.pp, rw.vpp, rw.cp, rw.sharding, shards, rw.recompute, rw.batch_size,
                min(rw.gradient_accumulation_steps, max(rw.pp, 2)), rw.gpu_count > 1)  # fmt: skip

    def memory(self, rw: ResolvedWorkload) -> float:
        """The busiest rank's peak (GiB)."""
        return self.cache.get("memory", self._memory_key(rw), lambda: rank_point_gib(rw))

    def high(self, rw: ResolvedWorkload, point: float) -> float:
        """The high end of its band (GiB; only asked of layouts whose peak fits)."""
        return self.cache.get("highs", self._memory_key(rw), lambda: rank_high_gib(rw, point))

    def fit_key(self, rw: ResolvedWorkload) -> Hashable:
        """What the micro-batches that fit depend on: the workload, the layout without its micro-batch,
        the global batch, the GPU's memory and the headroom (not the GPU type or the network)."""
        return (self.key, self.sequences, self.gpu.memory_gib, self.headroom, rw.gpu_count, rw.tp, rw.pp,
                rw.vpp, rw.cp, rw.sharding, rw.recompute)  # fmt: skip

    def fits(self, rw: ResolvedWorkload) -> bool:
        """:func:`fits` for ``rw``, its band worked out only when its peak fits within the headroom."""
        point = self.memory(rw)
        capacity = self.gpu.memory_gib
        ok = point <= (1.0 - self.headroom) * capacity and (
            self.headroom <= 0 or fits(point, self.high(rw, point), capacity, self.headroom)
        )
        if not ok:
            self.smallest_need = min(self.smallest_need, point)
        return ok


def _roofline_seconds_per_unit(rw: ResolvedWorkload, gpu: GpuSpec) -> float:
    """Without a calibrated index: the training FLOPs per token at :data:`ROOFLINE_MFU` of the GPU's
    16-bit peak (ranks layouts by their checkpointing cost; the throughput comes from the caller)."""
    peak = (gpu.tensor16_tflops or 100.0) * 1e12
    seq = max(rw.seq_len, 1)
    flops = train_flops_per_token(rw.arch, seq, rw.method, rw.recompute) if rw.arch.is_transformer else 6e9
    return flops / (ROOFLINE_MFU * peak)


def _template_key(rw: ResolvedWorkload) -> bytes:
    """The workload as the caches know it: its layout degrees set aside (each cached value keys the
    ones it depends on), except those the request stated, which the search holds: a stated cp 1 is
    another search than a stated cp 2."""
    free = {field: 1 for field in ("tp", "pp", "vpp", "cp") if field not in rw.stated}
    return msgspec.json.encode(msgspec.structs.replace(rw, gpu_count=1, dp=1, **free))


def _adapters(rw: ResolvedWorkload) -> float:
    return 0.0 if rw.method == "full" or not rw.arch.is_transformer else lora_params(rw)


def _laid_out(
    template: ResolvedWorkload, count: int, shape: tuple[int, int, int, int], zero: Sharding, rec: Recompute
) -> ResolvedWorkload:
    tp, cp, pp, vpp = shape
    return msgspec.structs.replace(
        template, gpu_count=count, tp=tp, cp=cp, pp=pp, vpp=vpp, dp=count // (tp * cp * pp),
        sharding=zero, recompute=rec, recompute_auto=False,
    )  # fmt: skip


def _micro_batches(search: _Search, dp: int) -> list[int]:
    stated = search.template
    if "micro_batch" in stated.stated:
        return [stated.batch_size]
    return list(_powers(min(search.sequences // dp, _MAX_MICRO_BATCH)))


def _with_micro(search: _Search, rw: ResolvedWorkload, micro: int) -> ResolvedWorkload | None:
    """``rw`` at micro-batch ``micro`` with the accumulation that meets the global batch, or ``None``
    when that batch cannot be met without exceeding it."""
    accumulation = search.sequences // (rw.dp * micro)
    if accumulation < 1 or rw.dp * micro * accumulation < MIN_BATCH_SHARE * search.sequences:
        return None
    return msgspec.structs.replace(
        rw, batch_size=micro, gradient_accumulation_steps=accumulation,
        global_batch_tokens=rw.dp * micro * accumulation * search.seq,
    )  # fmt: skip


class _Offers:
    """The layouts worth rating for one count (found by memory alone, so shared by every network)."""

    def __init__(self) -> None:
        self.items: list[ResolvedWorkload] = []
        self.edges: list[ResolvedWorkload] = []
        """Layouts whose peak fits the GPU's memory but not within the headroom (``_fitting_micros``)."""

    def offer(self, search: _Search, rw: ResolvedWorkload) -> None:
        self.items.append(rw)


class _Enumerated(NamedTuple):
    """A count's layouts worth rating and, when none fits, what the closest needed; and the layouts
    that fit only below the headroom."""

    offers: tuple[ResolvedWorkload, ...]
    need: float
    blocked: int
    edges: tuple[ResolvedWorkload, ...] = ()


def _layout(rw: ResolvedWorkload) -> Layout:
    return Layout(
        tp=rw.tp, pp=rw.pp, vpp=rw.vpp, cp=rw.cp, dp=rw.dp,
        zero=rw.sharding if rw.dp * rw.cp > 1 else "none", micro_batch=rw.batch_size,
        gradient_accumulation=rw.gradient_accumulation_steps, recompute=rw.recompute,
        global_batch_tokens=rw.global_batch_tokens or 0,
    )  # fmt: skip


def _score(search: _Search, rw: ResolvedWorkload) -> tuple[float, Layout]:
    """Tokens (or samples) per second of ``rw``'s layout by the step model (0: it cannot run)."""
    layout = _layout(rw)
    step = step_time(layout, search.links, search.rate(rw), search.sizes, rw.stack)
    if step.total <= 0 or not math.isfinite(step.total):
        return 0.0, layout
    return layout.global_batch_tokens / step.total, layout


def _ceiling(search: _Search, rw: ResolvedWorkload) -> float:
    """An upper bound on :func:`_score` of ``rw``: its tokens per step over compute and pipeline bubble
    alone (:func:`~solver.throughput.step.step_time` adds exposed communication to both; ``inf`` where
    the step has no compute, so it is always rated)."""
    c = rw.batch_size * search.seq * search.rate(rw) / (rw.tp * rw.cp * rw.pp)
    floor = rw.gradient_accumulation_steps * c + ((rw.pp - 1) / rw.vpp * c if rw.pp > 1 else 0.0)
    tokens = rw.global_batch_tokens or 0
    return tokens / floor if floor > 0 else math.inf


def _fitting_micros(search: _Search, rw: ResolvedWorkload) -> tuple[tuple[int, ...], float, int]:
    """The micro-batches of ``rw`` that meet the global batch and fit (ascending; memory grows with
    the micro-batch, so the first that does not fit ends them), that one's need (GiB; inf: none) and,
    with headroom asked for, that one again when its peak fits the GPU's whole memory (the *edge*
    micro-batch, 0: none; its memory is worked out anyway, so the edge costs the search nothing)."""
    fitting: list[int] = []
    for micro in _micro_batches(search, rw.dp):
        laid = _with_micro(search, rw, micro)
        if laid is None:
            continue
        if not search.fits(laid):
            need = search.memory(laid)
            edge = micro if search.headroom > 0 and need <= search.gpu.memory_gib else 0
            return tuple(fitting), need, edge
        fitting.append(micro)
    return tuple(fitting), math.inf, 0


def _largest_micro(search: _Search, rw: ResolvedWorkload, best: _Offers, above: int) -> int:
    """Offer ``rw`` at the micro-batches that fit and are larger than ``above`` (what a lighter
    sharding or checkpointing level already reached: the heavier one is slower at those); without
    stages only the largest (never slower there), with stages every one (with the global batch held, a
    larger micro-batch leaves fewer micro-batches per step to fill the pipeline, so any may be the
    fastest; rating in bound order keeps this cheap). Returns the largest that fitted (0: none)."""
    micros, need, edge = search.cache.get("micros", search.fit_key(rw), lambda: _fitting_micros(search, rw))
    search.smallest_need = min(search.smallest_need, need)
    offered = [m for m in (micros if rw.pp > 1 else micros[-1:]) if m > above]  # each met the batch
    for laid in (_with_micro(search, rw, micro) for micro in offered):
        if laid is not None:
            best.offer(search, laid)
    at_edge = _with_micro(search, rw, edge) if edge > above else None
    if at_edge is not None:
        best.edges.append(at_edge)
    return micros[-1] if micros else 0


def _shape(search: _Search, count: int, shape: tuple[int, int, int, int], best: _Offers) -> tuple[bool, bool]:
    """Try one (tp, cp, pp, vpp) shape over sharding and checkpointing: (whether anything fitted
    without ZeRO-3 — whose gathers deeper pipelines may beat —, whether it is *settled*: the lightest checkpointing reached the largest micro-batch the global
    batch allows without ZeRO-3). A heavier stage or level is tried only while the lighter ones
    fall short of that micro-batch."""
    tp, cp, pp, _ = shape
    dp = count // (tp * cp * pp)
    ceiling = min(max(_micro_batches(search, dp), default=0), max(1, SETTLED_MICRO_TOKENS // search.seq))
    fitted = settled = False
    reached: dict[str, int] = {}  # the largest micro-batch each checkpointing level fitted so far
    for zero in _zeros(search.template, pp, dp * cp):
        first = 0
        for i, rec in enumerate(_recomputes(search.template)):
            above = max([reached.get(r, 0) for r in _recomputes(search.template)[: i + 1]])
            laid = _laid_out(search.template, count, shape, zero, rec)
            largest = _largest_micro(search, laid, best, above)
            reached[rec] = max(reached.get(rec, 0), largest)
            first = largest if i == 0 else first
            fitted = fitted or (largest > 0 and zero != "zero3")
            if largest >= ceiling > 0:
                break
        if first >= ceiling > 0:
            settled = zero != "zero3"
            break  # the lightest checkpointing reached the largest micro-batch: more sharding only costs
    return fitted, settled


def _stages(search: _Search, count: int, tp: int, cp: int, best: _Offers) -> None:
    """Try the pipeline depths for (tp, cp), up to :data:`EXTRA_STAGES` beyond the first that fits
    without ZeRO-3 (deeper pipelines only add bubble once the stages fit)."""
    first_fit: int | None = None
    for i, pp in enumerate(_pps(search.template, count // (tp * cp))):
        if first_fit is not None and i > first_fit + EXTRA_STAGES:
            break
        if count // (tp * cp * pp) > search.sequences:
            search.batch_blocked = count // (tp * cp * pp)
            continue
        results = [_shape(search, count, (tp, cp, pp, v), best) for v in _vpps(search.template, pp)]
        if any(fitted for fitted, _ in results):
            first_fit = i if first_fit is None else first_fit


def _walk(search: _Search, count: int, tp: int, cp: int) -> _Enumerated:
    """The layouts worth rating at (``tp``, ``cp``) on ``count`` GPUs, what the closest to fitting
    needed and the last count of data-parallel ranks that exceeded the global batch (0: none)."""
    offers = _Offers()
    search.smallest_need, search.batch_blocked = math.inf, 0
    _stages(search, count, tp, cp, offers)
    return _Enumerated(tuple(offers.items), search.smallest_need, search.batch_blocked, tuple(offers.edges))


def _enumerate(search: _Search, count: int) -> _Enumerated:
    """A count's layouts worth rating over the tensor and context parallelism the topology allows: each
    (tp, cp) walk depends on memory alone, so instances of 1, 2, 4 and 8 GPUs share their common walks."""
    offers: list[ResolvedWorkload] = []
    edges: list[ResolvedWorkload] = []
    need, blocked = math.inf, 0
    key = (search.key, search.sequences, search.gpu.memory_gib, search.headroom, count)
    for tp in _tps(search.template, search.gpu, search.topology, count):
        for cp in _cps(search.template, count // tp):
            walk = search.cache.get("walks", (*key, tp, cp), lambda: _walk(search, count, tp, cp))  # noqa: B023
            offers += walk.offers
            edges += walk.edges
            need, blocked = min(need, walk.need), walk.blocked or blocked
    return _Enumerated(tuple(offers), need, blocked, tuple(edges))


def _training(search: _Search, count: int) -> LayoutChoice | LayoutFailure:
    topology = search.topology
    key = (search.key, search.sequences, search.gpu.memory_gib, search.gpu.nvlink_domain, search.headroom, count,
           topology.gpus_per_instance, topology.interconnect)  # fmt: skip
    found = search.cache.get("offers", key, lambda: _enumerate(search, count))
    search.smallest_need, search.batch_blocked = found.need, found.blocked
    best = _fastest(search, found.offers)
    edge = _edge(search, found.edges, best)
    if best is None:
        failure = _failure(search, count)
        return failure if edge is None else msgspec.structs.replace(failure, edge=edge)
    return best if edge is None else msgspec.structs.replace(best, edge=edge)


def _edge(
    search: _Search, edges: tuple[ResolvedWorkload, ...], best: LayoutChoice | None
) -> LayoutChoice | None:
    """The fastest of the layouts that fit only below the headroom when it beats ``best`` (None: the
    headroom costs nothing at this count, or no rate can be set for them: they only inform)."""
    try:
        edge = _fastest(search, edges, count_unpriced=False, floor=0.0 if best is None else best.score)
    except (ThroughputUnavailable, InvalidWorkload):
        return None
    return None if edge is None or (best is not None and edge.score <= best.score) else edge


def _fastest(
    search: _Search, offers: tuple[ResolvedWorkload, ...], *, count_unpriced: bool = True, floor: float = 0.0
) -> LayoutChoice | None:
    """The fastest of ``offers`` by the step model, with its memory estimate (None: none can run, or
    none can beat ``floor``, the score of a layout the caller has); the first in ``offers``' order on
    a tie. Offers are rated in the order of their compute-and-bubble bound (:func:`_ceiling`), and
    rating stops once no bound left can beat (or tie) the best found, or beat ``floor``."""
    ceilings = [_ceiling(search, rw) for rw in offers]
    best: tuple[float, int, Layout, ResolvedWorkload] | None = None
    for i in sorted(range(len(offers)), key=lambda j: -ceilings[j]):
        if (best is not None and ceilings[i] < best[0]) or (floor > 0 and ceilings[i] <= floor):
            break  # the rest are bounded below the best (or the caller's): rating them changes nothing
        score, layout = _score(search, offers[i])
        if score <= 0:
            search.unpriced += count_unpriced
        elif best is None or score > best[0] or (score == best[0] and i < best[1]):
            best = (score, i, layout, offers[i])
    if best is None:
        return None
    score, _, layout, rw = best
    memory = search.cache.get("estimates", (search.key, layout), lambda: estimate_memory(rw))
    return LayoutChoice(workload=rw, layout=layout, memory=memory, score=score)


def _failure(search: _Search, count: int) -> LayoutFailure:
    capacity = search.gpu.memory_gib
    if search.unpriced:
        return LayoutFailure(
            reason="network",
            detail=f"{count} GPU(s) span instances that have no network to synchronise over",
            field="network",
        )
    if math.isfinite(search.smallest_need):
        room = (
            f" (memory_headroom {search.headroom:.0%}: the peak within {(1 - search.headroom) * capacity:,.1f} "
            f"GiB and the high end of its band within {capacity:g} GiB)"
            if search.headroom > 0
            else ""
        )
        return LayoutFailure(
            reason="memory",
            detail=(
                f"needs {search.smallest_need:,.1f} GiB per GPU in the best layout on {count} GPU(s); "
                f"has {capacity:g} GiB{room}"
            ),
            field="gpu",
            need_gib=search.smallest_need,
        )
    return LayoutFailure(
        reason="global_batch",
        detail=(
            f"{count} GPU(s) cannot meet the {search.basis} without exceeding it: no layout splits the "
            f"{search.sequences:,} sequences of a step over its data-parallel ranks (at least one each) "
            f"and still reaches {MIN_BATCH_SHARE:.0%} of them"
        ),
        field="global_batch_tokens",
    )


def _inference(search: _Search, count: int) -> LayoutChoice | LayoutFailure:
    for tp in _tps(search.template, search.gpu, search.topology, count):
        rw = _laid_out(search.template, count, (tp, 1, 1, 1), "none", "none")
        if search.fits(rw):
            layout = Layout(tp=tp, pp=1, vpp=1, cp=1, dp=count // tp, zero="none",
                            micro_batch=rw.batch_size, gradient_accumulation=1, recompute="none",
                            global_batch_tokens=0)  # fmt: skip
            return LayoutChoice(workload=rw, layout=layout, memory=estimate_memory(rw), score=0.0)
    return _failure(search, count)


def search_layout(
    template: ResolvedWorkload,
    gpu: GpuSpec,
    gpu_count: int,
    topology: Topology,
    index: ProfileIndex | None,
    *,
    cache: LayoutCache | None = None,
    memory_headroom: float = 0.0,
    exclude: frozenset[int] = frozenset(),
) -> LayoutChoice | LayoutFailure:
    """The fastest layout of ``template`` on ``gpu_count`` × ``gpu`` placed as ``topology`` says that
    fits every rank within ``memory_headroom`` and meets the global batch, or why none does (module
    docstring). Fields in ``template.stated`` are held. Raises :class:`~solver.errors.InvalidWorkload`
    for a count that cannot hold a stated layout."""
    if gpu_count < 1:
        raise InvalidWorkload("gpu_count", f"must be at least 1, got {gpu_count}")
    cache = cache if cache is not None else LayoutCache()
    search = _Search(template, gpu, topology, index, cache, memory_headroom, exclude)
    network = topology.network if gpu_count > topology.gpus_per_instance else None  # one instance: unused
    key = (search.key, gpu.gpu_id, gpu.memory_gib, gpu_count, topology.gpus_per_instance, topology.interconnect,
           network, memory_headroom, exclude, id(index))  # fmt: skip
    if template.is_inference:
        return cache.get("choices", key, lambda: _inference(search, gpu_count))
    return cache.get("choices", key, lambda: _training(search, gpu_count))
