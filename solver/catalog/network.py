"""The network between instances: its class, its bandwidth, and what each class typically delivers.

Inside one instance GPUs talk over the interconnect (``solver.catalog.gpus.Interconnect``: PCIe, NVLink,
NVSwitch). Between instances they talk over the *network* described here. The communication model
prices every collective that crosses instances at ``gbps × FABRIC_TRAITS[class].collective_efficiency``
plus the class's latency, so a plan that spreads a job over several instances pays for what the network
really is.

Classes (``NetworkClass``):

* ``none`` — the instances of this offer cannot talk to each other at a useful speed: there is no
  private network between two rentals (e.g. a marketplace host whose containers reach each other only
  through NAT over the public internet). A multi-instance job on such an offer is impossible, not
  merely slow; ``gbps`` is 0.
* ``ethernet`` — a private TCP/IP network between instances (a cloud VPC, a provider LAN). NCCL uses
  its socket transport through the host CPU; no GPUDirect RDMA.
* ``gpudirect_tcpx`` — Google Cloud's GPUDirect-TCPX (A3 High/Edge) and -TCPXO (A3 Mega): TCP whose
  payload is read from and written to GPU memory by dedicated NICs, without RDMA verbs.
* ``efa`` — AWS Elastic Fabric Adapter: OS-bypass transport (SRD) on AWS's own fabric, used by NCCL
  through the aws-ofi-nccl plugin.
* ``roce`` — RDMA over Converged Ethernet (OCI cluster networks, GCP A3 Ultra / A4 ConnectX-7 NICs,
  Spectrum-X).
* ``infiniband`` — an InfiniBand fabric with one HCA per GPU (Azure ND, Nebius GPU clusters, CoreWeave).

``gbps`` is the instance's total bandwidth to other instances on the fabric GPU collectives use, in
Gbit/s, one direction: the GPU NICs only (e.g. 8 × 400 Gbit/s), not the separate host NIC beside them.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from typing import Final, Literal

import msgspec

__all__ = [
    "FABRIC_TRAITS",
    "NETWORK_CLASSES",
    "FabricTraits",
    "Network",
    "NetworkClass",
    "achievable_gbps",
    "reference_cluster_network",
    "reference_nic_gbps",
    "spans_instances",
]

NetworkClass = Literal["none", "ethernet", "roce", "infiniband", "efa", "gpudirect_tcpx"]
"""How the instances of one offer reach each other (see the module docstring)."""

NETWORK_CLASSES: Final[tuple[NetworkClass, ...]] = typing.get_args(NetworkClass)
"""Every class, in the order ``NetworkClass`` lists them (not a bandwidth order: compare ``gbps``)."""


class Network(msgspec.Struct, frozen=True, kw_only=True):
    """The network between instances of one offer, and the rule (or sheet) it came from.

    Encoded in JSON as ``{"class": …, "gbps": …, "derived": …, "rule": …}``. ``gbps`` is 0 exactly when
    the class is ``none``; every other class has a positive, finite bandwidth.
    """

    network_class: NetworkClass = msgspec.field(name="class")
    gbps: float
    derived: bool
    rule: str

    def __post_init__(self) -> None:
        if not math.isfinite(self.gbps) or self.gbps < 0:
            raise ValueError(f"gbps must be a finite number >= 0, got {self.gbps!r}")
        if self.network_class == "none" and self.gbps != 0:
            raise ValueError(f"class 'none' carries no bandwidth, got gbps={self.gbps!r}")
        if self.network_class != "none" and self.gbps == 0:
            raise ValueError(f"class {self.network_class!r} needs a positive gbps")


class FabricTraits(msgspec.Struct, frozen=True, kw_only=True):
    """What a network class typically delivers to NCCL collectives, and where the figures come from.

    ``latency_us``: one-way small-message latency between two GPUs on different instances, µs (the
    α of an α-β model). ``collective_efficiency``: large-message bus bandwidth ÷ line rate of the
    instance's GPU NICs, for ring collectives across enough instances that the network is the
    bottleneck (two-node tree runs can report more than line rate and are not used). ``gpudirect_rdma``:
    whether the NIC reads and writes GPU memory directly, so collectives need no host-memory staging.
    """

    latency_us: float
    collective_efficiency: float
    gpudirect_rdma: bool
    source: str


FABRIC_TRAITS: Final[Mapping[NetworkClass, FabricTraits]] = {
    "none": FabricTraits(
        latency_us=math.inf,
        collective_efficiency=0.0,
        gpudirect_rdma=False,
        source="no usable path between instances: a multi-instance plan is infeasible, not slow",
    ),
    "ethernet": FabricTraits(
        latency_us=30.0,
        collective_efficiency=0.5,
        gpudirect_rdma=False,
        source=(
            "efficiency: NVIDIA/nccl issue #209, 8-GPU nodes on GCP 32 Gbit/s TCP: all-reduce busbw "
            "14.8 Gbit/s on 2 nodes (0.46), 22.4 on 4 nodes (0.70); NVIDIA/nccl issue #450 reports less "
            "on 100 Gbit/s TCP. latency: OCI blog 'Zettascale in practice: OSU and NCCL benchmark on H100' "
            "(TCP/IP 10-50 µs)"
        ),
    ),
    "gpudirect_tcpx": FabricTraits(
        latency_us=20.0,
        collective_efficiency=0.7,
        gpudirect_rdma=False,
        source=(
            "estimate: TCP with GPU-memory payloads (Google Cloud 'GPUDirect-TCPX/TCPXO' docs); NVIDIA AI "
            "Cluster Runtime GKE TCPXO guide reports ~340 GB/s busbw with TCPXO vs ~4 GB/s plain TCP on "
            "a3-megagpu-8g (a small-node-count run, above line rate), so no clean >=4-node fraction was "
            "found; placed between ethernet and the RDMA fabrics. latency: TCP stack, OCI blog range"
        ),
    ),
    "efa": FabricTraits(
        latency_us=15.0,
        collective_efficiency=0.85,
        gpudirect_rdma=True,
        source=(
            "efficiency: stas00/ml-engineering network/README.md, EFA v1 400 Gbit/s gives an effective "
            "340 Gbit/s in all_reduce tests (p4d); GPUDirect RDMA on p4d and newer P instances only, EFA on "
            "p3dn and G instances stages through host memory. latency: estimate (SRD over libfabric, "
            "between RDMA and TCP)"
        ),
    ),
    "roce": FabricTraits(
        latency_us=2.0,
        collective_efficiency=0.85,
        gpudirect_rdma=True,
        source=(
            "latency: OCI blog 'Zettascale in practice' (RDMA ~2 µs) and OCI Supercluster post (as low as "
            "2 µs). efficiency: stas00/ml-engineering network/README.md rule of thumb (expect ~80% of the "
            "advertised rate) and network/benchmarks/README.md, 4 × 8×B200 nodes all_reduce busbw 376.7 GB/s "
            "on 8 × 400 Gbit/s NICs (0.94)"
        ),
    ),
    "infiniband": FabricTraits(
        latency_us=1.5,
        collective_efficiency=0.9,
        gpudirect_rdma=True,
        source=(
            "latency: ib_send_lat 0.8 µs for 32 B on RC (switch hops add ~0.1-0.6 µs, stas00/ml-engineering "
            "network/README.md lists EDR 0.5 µs, HDR 0.6 µs). efficiency: stas00/ml-engineering "
            "network/benchmarks/README.md, 4 × 8×B200 nodes all_reduce busbw 376.7 GB/s on 8 × 400 Gbit/s "
            "(0.94); 0.9 leaves room for tuning and congestion"
        ),
    ),
}
"""Typical behaviour of each class (the comm model's defaults); ``none`` is never a slow link."""


def spans_instances(network: Network) -> bool:
    """Whether a job may run across several instances of this offer at all."""
    return network.network_class != "none"


def achievable_gbps(network: Network) -> float:
    """The bandwidth a large ring collective can expect from this network, Gbit/s (0 for ``none``)."""
    return network.gbps * FABRIC_TRAITS[network.network_class].collective_efficiency


_REFERENCE_NIC_GBPS: Final[dict[str, tuple[float, str]]] = {
    "volta": (50.0, "NVIDIA DGX-1 with V100: 4 x 100 Gbit/s EDR InfiniBand for 8 GPUs (DGX-1 datasheet)"),
    "ampere": (
        200.0,
        "NVIDIA DGX A100: 8 x single-port ConnectX-6 200 Gbit/s HDR InfiniBand, one per GPU (DGX A100 datasheet)",
    ),
}
_ASSUMED_NIC_GBPS: Final = (
    400.0,
    "one 400 Gbit/s NDR InfiniBand NIC per GPU, as on NVIDIA DGX H100 and DGX B200 (8 x ConnectX-7 400 Gbit/s, "
    "their datasheets), GB200 NVL72 racks and 8-GPU MI300X platforms",
)


def reference_nic_gbps(architecture: str) -> tuple[float, str]:
    """Gbit/s per GPU of a GPU generation's reference training cluster (one NIC per GPU: HDR 200 on
    A100, whose PCIe 4 hosts cannot feed a 400 Gbit/s NIC; NDR 400 from H100 on), and its source."""
    return _REFERENCE_NIC_GBPS.get(architecture, _ASSUMED_NIC_GBPS)


def reference_cluster_network(architecture: str, gpus_per_instance: int) -> Network:
    """The network assumed between instances of a GPU when an estimate spans several and names none:
    the GPU generation's reference training cluster (:func:`reference_nic_gbps`), scaled to the
    instance."""
    per_gpu, cluster = reference_nic_gbps(architecture)
    return Network(
        network_class="infiniband",
        gbps=per_gpu * gpus_per_instance,
        derived=True,
        rule=f"assumed: a training cluster of {gpus_per_instance}-GPU instances, {cluster}",
    )
