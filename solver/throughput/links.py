"""The links a multi-GPU job's collectives cross, as bandwidths and latencies for :mod:`solver.throughput.scaling`.

Inside an instance (NCCL "bus bandwidth" per GPU, ``busBW``, the figure nccl-tests reports):

- ``nvswitch`` / ``nvlink``: the GPU's NVLink (or Infinity Fabric) bandwidth, half of the quoted
  bidirectional total per direction, × :data:`NVLINK_BUS_EFFICIENCY` (nccl-tests all-reduce on 8×H100
  HGX reaches ~360–480 GB/s of the 450 GB/s per direction); when the catalog has no figure, the
  generation's board fabric (:data:`FABRIC_GBPS`);
- ``pcie``: the card's PCIe generation (Gen3 16, Gen4 32, Gen5 64 GB/s per direction on x16) ×
  :data:`PCIE_BUS_EFFICIENCY` (peer traffic crosses the host's root complex, or host memory where
  peer-to-peer is disabled, as on GeForce cards);
- between instances: the instance's network bandwidth × the class's achievable share, with the class's
  latency (the caller supplies both from the offer's network).
"""

from __future__ import annotations

from typing import Final

from solver.catalog.gpus import GpuSpec, Interconnect
from solver.throughput.step import Links

__all__ = ["FABRIC_GBPS", "NVLINK_BUS_EFFICIENCY", "PCIE_BUS_EFFICIENCY", "instance_links"]

NVLINK_BUS_EFFICIENCY: Final = 0.8
PCIE_BUS_EFFICIENCY: Final = 0.5
FABRIC_GBPS: Final[dict[str, float]] = {
    "volta": 300.0,
    "ampere": 600.0,
    "hopper": 900.0,
    "blackwell": 1800.0,
    "cdna3": 896.0,  # 7 Infinity Fabric links × 128 GB/s (AMD Instinct MI300X datasheet)
    "cdna4": 1075.0,  # MI355X: 7 links × 153.6 GB/s (AMD Instinct MI355X datasheet)
}
"""Bidirectional GPU-to-GPU fabric bandwidth (GB/s) of a generation's 8-GPU boards."""

_PCIE_GBPS: Final[dict[str, float]] = {
    "pascal": 16.0,
    "volta": 16.0,
    "turing": 16.0,
    "ampere": 32.0,
    "ada": 32.0,
    "hopper": 64.0,
    "blackwell": 64.0,
    "cdna3": 64.0,
    "cdna4": 64.0,
}
_NVLINK_LATENCY_S: Final = 10e-6
_PCIE_LATENCY_S: Final = 20e-6


def _intra(gpu: GpuSpec, interconnect: Interconnect) -> tuple[float, float, str]:
    generation = gpu.architecture
    if interconnect in ("nvswitch", "nvlink"):
        quoted = gpu.nvlink_bandwidth_gbps or FABRIC_GBPS.get(generation)
        if quoted:
            bus = quoted / 2 * NVLINK_BUS_EFFICIENCY
            return bus * 1e9, _NVLINK_LATENCY_S, f"{interconnect} at {bus:,.0f} GB/s bus bandwidth"
    pcie = _PCIE_GBPS.get(generation, 16.0) * PCIE_BUS_EFFICIENCY
    return pcie * 1e9, _PCIE_LATENCY_S, f"PCIe at {pcie:,.0f} GB/s bus bandwidth"


def instance_links(
    gpu: GpuSpec,
    interconnect: Interconnect,
    gpus_per_instance: int,
    *,
    network_gbps: float,
    network_efficiency: float,
    network_latency_s: float,
    network_label: str,
) -> Links:
    """The :class:`~solver.throughput.scaling.Links` of instances of ``gpus_per_instance`` × ``gpu``."""
    intra, latency, label = _intra(gpu, interconnect)
    inter = network_gbps / 8 * 1e9 * network_efficiency
    return Links(
        gpus_per_instance=max(1, gpus_per_instance),
        intra_bytes_per_s=intra,
        intra_latency_s=latency,
        intra_label=label,
        inter_bytes_per_s=inter,
        inter_latency_s=network_latency_s,
        inter_label=f"{network_label} at {inter / 1e9:,.1f} GB/s per instance"
        if inter > 0
        else network_label,
    )
