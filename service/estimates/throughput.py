"""Throughput of a workload on one GPU type, with its provenance (``solver.throughput`` does the estimate)."""

from __future__ import annotations

import msgspec

from pricing.interconnect import derive_interconnect
from service.catalog.gpu_names import one_gpu
from service.db.snapshot import CatalogSnapshot
from service.estimates.schemas import ThroughputRequest, ThroughputResponse
from solver.errors import InvalidWorkload
from solver.gpus import GpuSpec, Interconnect
from solver.network import Network
from solver.throughput import Topology, default_topology, estimate_throughput
from solver.workload import resolve_workload

__all__ = ["estimate_throughput_for"]


def _topology(request: ThroughputRequest, gpu: GpuSpec, interconnect: Interconnect, tp: int) -> Topology:
    """The request's instances and network, over the GPU's defaults; a tensor-parallel group must fit
    in one instance."""
    topology = default_topology(gpu, request.gpu_count, interconnect)
    if request.gpus_per_instance is not None:
        per_instance = min(request.gpus_per_instance, request.gpu_count)
        topology = msgspec.structs.replace(topology, gpus_per_instance=per_instance)
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


def estimate_throughput_for(snapshot: CatalogSnapshot, request: ThroughputRequest) -> ThroughputResponse:
    """Validate, then estimate the workload's throughput on the requested GPUs."""
    gpu = one_gpu(snapshot, request.gpu)
    resolved = resolve_workload(request)
    derived = request.interconnect is None
    interconnect: Interconnect = (
        derive_interconnect(gpu, request.gpu_count, "")[0]
        if request.interconnect is None
        else request.interconnect
    )
    topology = _topology(request, gpu, interconnect, resolved.tp)
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
        method=estimate.method,
        model=resolved.arch.name,
        gpu=gpu.gpu_id,
        gpu_count=request.gpu_count,
        interconnect=interconnect,
        interconnect_derived=derived,
        gpus_per_instance=topology.gpus_per_instance,
        network=topology.network,
    )
