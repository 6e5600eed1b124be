"""Throughput of a workload on one GPU type, with its provenance (``solver.throughput.estimate`` does the estimate).

Training chooses its parallel layout (``solver.search_layout``) unless the request states all of it:
the fields it states are held, the rest searched; a layout that cannot fit (or meet the global batch)
is a 422 naming the field whose change would admit one. The layouts learnt are kept per catalog
snapshot (:func:`layout_cache`), for the plans too."""

from __future__ import annotations

from typing import Final

import msgspec

from pricing import derive_interconnect
from service.catalog.gpu_names import one_gpu
from service.db.snapshot import CatalogSnapshot, Derived
from service.estimates.schemas import ThroughputRequest, ThroughputResponse
from service.estimates.serving_engine import is_engine_request, serving_at_load
from solver import (
    INFERENCE_KINDS,
    GpuSpec,
    Interconnect,
    InvalidWorkload,
    Layout,
    LayoutCache,
    LayoutDoesNotFit,
    LayoutFailure,
    MemoryEstimate,
    Network,
    ResolvedWorkload,
    Topology,
    default_topology,
    estimate_throughput,
    resolve_workload,
    scale_term,
    search_layout,
    serving_refusal,
)

__all__ = ["LAYOUTS", "estimate_throughput_for", "laid_out", "layout_cache"]

LAYOUTS: Derived[LayoutCache] = Derived(
    "layout cache", lambda _snapshot: LayoutCache(), CatalogSnapshot.model_inputs
)
"""The layout searches' cache of one catalog snapshot (memory per layout, the choice per count),
taken over by the next snapshot when only prices changed (a new sheet left every plan cold again)."""

_RELAXABLE = ("micro_batch", "recompute", "sharding", "pp", "cp", "vpp", "tp")


def layout_cache(snapshot: CatalogSnapshot) -> LayoutCache:
    """The :class:`~solver.LayoutCache` of ``snapshot`` (created with it, dropped with it)."""
    return snapshot.derive(LAYOUTS)


def _blocking_field(
    snapshot: CatalogSnapshot, resolved: ResolvedWorkload, gpu: GpuSpec, count: int, topology: Topology,
    failure: LayoutFailure,
) -> str:  # fmt: skip
    """The field to change: a stated layout field whose release admits a layout, else the batch or
    the GPU count."""
    if failure.reason == "global_batch":
        return "global_batch_tokens" if resolved.global_batch is None else "batch_size"
    if failure.reason == "network":
        return "network"
    for field in _RELAXABLE:
        if field in resolved.stated:
            freed = msgspec.structs.replace(resolved, stated=resolved.stated - {field})
            found = search_layout(freed, gpu, count, topology, snapshot.profile_index(),
                                  cache=layout_cache(snapshot))  # fmt: skip
            if not isinstance(found, LayoutFailure):
                return field
    return "gpu_count"


def _method(
    text: str, layout: Layout | None, resolved: ResolvedWorkload, memory: MemoryEstimate | None, gpu: GpuSpec
) -> str:
    """The estimate's method, led by the layout it prices and why that one."""
    if layout is None or memory is None:
        return text
    held = ", ".join(sorted(resolved.stated)) or "nothing"
    return (
        f"layout {layout.text()}: the fastest that fits every rank ({memory.per_gpu_gib:,.1f} of "
        f"{gpu.memory_gib:g} GiB) and meets the global batch (stated and held: {held}); {text}"
    )


def laid_out(
    snapshot: CatalogSnapshot, resolved: ResolvedWorkload, gpu: GpuSpec, count: int, topology: Topology
) -> tuple[ResolvedWorkload, MemoryEstimate | None]:
    """The training workload in the layout the search chooses (holding the stated fields), with its
    per-rank memory; inference as given. Raises :class:`~solver.LayoutDoesNotFit` naming the field."""
    if resolved.kind in INFERENCE_KINDS:
        return resolved, None
    found = search_layout(
        resolved, gpu, count, topology, snapshot.profile_index(), cache=layout_cache(snapshot)
    )
    if isinstance(found, LayoutFailure):
        field = _blocking_field(snapshot, resolved, gpu, count, topology, found)
        raise LayoutDoesNotFit(field, found.detail)
    return found.workload, found.memory


def _topology(request: ThroughputRequest, gpu: GpuSpec, interconnect: Interconnect, tp: int) -> Topology:
    """The request's instances and network, over the GPU's defaults; a tensor-parallel group must fit
    in one instance."""
    topology = default_topology(gpu, request.gpu_count, interconnect, request.gpus_per_instance)
    if tp > topology.gpus_per_instance:
        raise InvalidWorkload(
            "tp",
            f"a tensor-parallel group of {tp} GPUs must sit inside one instance "
            f"({topology.gpus_per_instance} GPUs): its all-reduces run every layer",
        )
    if request.network is not None:
        network = request.network
        if network.network_class != "none" and network.gbps <= 0:
            raise InvalidWorkload(
                "network.gbps", f"must be > 0 for class {network.network_class!r} (or use class none)"
            )
        stated = Network(
            network_class=network.network_class,
            gbps=0.0 if network.network_class == "none" else network.gbps,
            derived=False,
            rule="stated by the request",
        )
        topology = msgspec.structs.replace(topology, network=stated)
    return topology


_ENGINE_FIELDS: Final = ("input_tokens", "output_tokens", "request_mix", "load")
_NOT_FOR_THE_ENGINE: Final = ("seq_len", "batch_size", "output_len", "pp", "vpp", "cp", "sharding")


def _refuse_unused(request: ThroughputRequest) -> None:
    """A 400 naming a field the answer would not use: the serving engine's fields on another kind,
    or the job and layout fields on a serving request at a load (its sizes set the context)."""
    if request.kind != "serving":
        field = next((f for f in _ENGINE_FIELDS if getattr(request, f) is not None), None)
        if field is None and request.engine != "vllm":
            field = "engine"
        if field is not None:
            raise InvalidWorkload(field, f"applies to kind serving only, not {request.kind}")
        return
    if not is_engine_request(request):
        return
    refused = serving_refusal(request)
    if refused is not None:
        raise InvalidWorkload(*refused)
    field = next((f for f in _NOT_FOR_THE_ENGINE if getattr(request, f) is not None), None)
    if field is not None:
        raise InvalidWorkload(
            field,
            "a serving request at a load does not use it (input_tokens and output_tokens set the context)",
        )


def estimate_throughput_for(snapshot: CatalogSnapshot, request: ThroughputRequest) -> ThroughputResponse:
    """Validate, then estimate the workload's throughput on the requested GPUs."""
    _refuse_unused(request)
    gpu = one_gpu(snapshot, request.gpu)
    derived = request.interconnect is None
    interconnect: Interconnect = (
        derive_interconnect(gpu, request.gpu_count, "")[0]
        if request.interconnect is None
        else request.interconnect
    )
    if is_engine_request(request):  # the request sizes, not seq_len, set the context
        topology = _topology(request, gpu, interconnect, request.tp or 1)
        return serving_at_load(
            snapshot, request, gpu, interconnect, topology.network, topology.gpus_per_instance
        )
    resolved = resolve_workload(request)
    topology = _topology(request, gpu, interconnect, resolved.tp)
    resolved, memory = laid_out(snapshot, resolved, gpu, request.gpu_count, topology)
    estimate = estimate_throughput(
        resolved,
        gpu,
        request.gpu_count,
        interconnect,
        snapshot.profiles,
        snapshot.gpus,
        output_len=request.output_len,
        index=snapshot.profile_index(),
        topology=topology,
        scale=scale_term(snapshot.profile_index()),
    )
    return ThroughputResponse(
        value=estimate.value,
        unit=estimate.unit,
        provenance=estimate.provenance,
        route=estimate.route,
        workload_class=estimate.workload_class,
        stack=estimate.stack,
        efficiency=estimate.efficiency,
        band=estimate.band,
        scaling=estimate.scaling,
        sources=estimate.sources,
        confidence=estimate.confidence,
        confidence_score=estimate.confidence_score,
        method=_method(estimate.method, estimate.layout, resolved, memory, gpu),
        model=resolved.arch.name,
        gpu=gpu.gpu_id,
        gpu_count=request.gpu_count,
        interconnect=interconnect,
        interconnect_derived=derived,
        gpus_per_instance=topology.gpus_per_instance,
        network=topology.network,
        layout=estimate.layout,
        memory_per_gpu_gib=None if memory is None else round(memory.per_gpu_gib, 2),
    )
