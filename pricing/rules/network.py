"""Derive the network between an offer's instances, and read it from a sheet when the sheet states it.

The rules, in order (the first that applies wins; its text is stored with the offer). Each cites where
its numbers come from; ``gbps`` counts only the NICs GPU collectives use (see ``solver.catalog.network``).

1. **aws** — a table of the catalog's instance types. Bandwidth is EC2's *baseline* (sustained, not the
   "up to" burst; AWS ``DescribeInstanceTypes`` as generated into aws/karpenter-provider-aws
   ``pkg/providers/instancetype/zz_generated.bandwidth.go``); EFA support per eksctl-io/eksctl
   ``pkg/utils/instance/instance_types.go``. EFA types → ``efa`` (p4d/p4de 400, p5/p5e/p5en/p6-b200
   3200, p5.4xlarge 100, and the larger g5/g6/g6e sizes, whose EFA has no GPUDirect RDMA); the rest →
   ``ethernet`` (ENA).
2. **gcp** — the machine type, named by the instance type or, for the catalog's GPU-only rows (empty
   instance type), implied by the GPU and count: A2 (A100) ``ethernet`` 24/32/50/100 Gbit/s for
   1/2/4/8+ GPUs; A3 High (H100) 25/50/100 for 1/2/4 GPUs, ``a3-highgpu-8g`` GPUDirect-TCPX 4 × 200;
   A3 Mega (accelerator ``H100-MEGA``) GPUDirect-TCPXO 8 × 200; A3 Ultra (H200) and A4 (B200) RoCE on
   8 × 400 ConnectX-7; G2 (L4) ``ethernet`` 10/32/50/100 (cloud.google.com/compute/docs/gpus/
   gpu-network-bandwidth).
3. **azure** — the size: ND H100 v5 (and H200/MI300X v5) 8 × 400 Gbit/s NDR InfiniBand; ND A100 v4 and
   NDm A100 v4 8 × 200 HDR; NDv2 100 EDR; the RDMA "r" NC sizes FDR (56); every other N size
   ``ethernet`` at its documented "max bandwidth" (MicrosoftDocs/azure-docs ``articles/virtual-machines/
   sizes/gpu-accelerated``, ``setup-infiniband.md``). InfiniBand links VMs of one scale set.
4. **oci** — the shape: bare-metal H100/H200/B200/MI300X/MI355X/GB300 RDMA cluster network (RoCE v2)
   3200, BM.GPU4.8 / A100-v2.8 / GB200 1600, L40S 800; the rest ``ethernet`` at the shape's bandwidth
   (docs.oracle.com ``Compute/References/computeshapes.htm``). Cluster networks must be requested.
5. **nebius** — 8-GPU presets of the H100/H200/B200 SXM platforms join a GPU cluster on InfiniBand
   (8 HCAs, 400 Gbit/s each; docs.nebius.com GPU clusters, skypilot-org/skypilot
   ``examples/nebius_infiniband``); other presets ``ethernet``.
6. **coreweave** — HGX boards (8 socketed GPUs) are on a rail-optimised, non-blocking InfiniBand fat
   tree, HDR (200 per GPU) for A100 and NDR (400) after it (docs.coreweave.com HPC interconnect).
7. **vast** — ``none``: instances on different hosts sit on separate bridge networks behind NAT; only
   offers in one physical cluster can share an overlay network, which a catalog row does not promise
   (docs.vast.ai "multi-node training using torch + NCCL").
8. **runpod** — ``ethernet`` at 0.1 Gbit/s: Global Networking links an account's pods at 100 Mbit/s
   (docs.runpod.io ``pods/networking``); Instant Clusters are a separate product.
9. **everything else**, by the provider's class in the table shared with the reliability rule
   (``solver.provider_class``; a provider it does not list is a marketplace):

   * **hyperscaler** (aws, gcp, azure, oci types the tables above do not list) — ``ethernet`` at the
     conservative default of 10 Gbit/s: every VM sits in the account's VPC (AWS, Google Cloud, Azure and
     OCI VPC/VNet docs), but no rate is documented for the type. 10 Gbit/s is the smallest NIC a current
     GPU server ships with and what a VM behind a shared uplink can count on.
   * **neoclouds that document a VPC** (nebius presets outside rule 5: docs.nebius.com VPC networks and
     subnets; coreweave boards outside rule 6: CoreWeave VPCs) — ``ethernet`` at 10 Gbit/s, as above.
   * **other neoclouds** — ``none``: no network between two separately rented instances that GPU
     collectives could use is documented in what was read. Lambda's InfiniBand belongs to 1-Click
     Clusters and Verda's (ex DataCrunch) to Instant Clusters (docs.verda.com instant clusters: a
     partitioned 400 Gb/s InfiniBand fabric between the cluster's worker nodes), each a separate product
     from the catalog's on-demand instance types; Hyperstack's docs put an account's VMs in an
     environment of one region (docs.hyperstack.cloud API quickstart) and state no network between them
     or its rate; cudo, seeweb, jarvislabs and daytona document none either.
   * **marketplace** (shadeform, primeintellect, spheron, lium, hyperbolic, yotta, and any unknown
     provider) — ``none``: each rental is an independent container or VM on a host of another party, and
     two rentals need not share a data centre, let alone a network. Shadeform is "an abstraction layer
     over lots of cloud providers and data centers" (docs.shadeform.ai concepts); Prime Intellect a
     compute exchange over other providers' GPUs (blocmates; its INTELLECT-1 run crossed nodes over the public
     internet with DiLoCo, arXiv:2412.01152, not NCCL collectives); Spheron a decentralised compute
     marketplace (Spheron blog); Lium a Bittensor subnet GPU marketplace (subnetalpha.ai); Hyperbolic a
     GPU marketplace whose suppliers set their prices (docs.hyperbolic.xyz); Yotta provisionally a
     marketplace (service/data/README-provider_costs.md).

   A sheet that knows of a network between its instances states it in ``network_class`` /
   ``network_gbps`` (an InfiniBand cluster sold through a marketplace, a provider's private LAN).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from pricing.cells import cell_float
from pricing.errors import SheetRowError
from solver import (
    NETWORK_CLASSES,
    PROVIDER_CLASS_OF,
    GpuSpec,
    Network,
    NetworkClass,
    provider_class,
    reference_nic_gbps,
)

__all__ = [
    "CONSERVATIVE_ETHERNET_GBPS",
    "NETWORK_COLUMNS",
    "default_gbps",
    "derive_network",
    "network_from_sheet",
    "owned_network",
]

CONSERVATIVE_ETHERNET_GBPS: Final = 10.0
"""Bandwidth assumed for an ethernet network nobody documents (rule 9)."""

NETWORK_COLUMNS: Final = ("network_class", "network_gbps")
"""Optional sheet columns that state the network instead of deriving it."""

_DEFAULT_GBPS_PER_GPU: Final[dict[NetworkClass, float]] = {
    "roce": 200.0,  # OCI BM.GPU4.8 / A100-v2.8: 1600 Gbit/s over 8 GPUs, the slowest RoCE fabric above
    "infiniband": 200.0,  # HDR per GPU (Azure ND A100 v4, CoreWeave A100): the older of the two IB rates
    "efa": 50.0,  # p4d: 400 Gbit/s over 8 GPUs, EFA's first GPU generation
    "gpudirect_tcpx": 100.0,  # a3-highgpu-8g: 4 x 200 Gbit/s over 8 GPUs
}
"""Per-GPU bandwidth for a sheet that names a fabric class without a rate: the slowest documented
instance of that class above, so an unstated rate is never flattering."""


def _net(network_class: NetworkClass, gbps: float, text: str) -> Network:
    return Network(network_class=network_class, gbps=float(gbps), derived=True, rule=f"derived: {text}")


# 1. AWS ------------------------------------------------------------------------------------------------

_AWS_SOURCE = "EC2 baseline bandwidth (DescribeInstanceTypes via karpenter-provider-aws); EFA per eksctl"

_AWS_EFA: Final[dict[str, float]] = {
    "p3dn.24xlarge": 100,
    "p4d.24xlarge": 400,
    "p4de.24xlarge": 400,
    "p5.4xlarge": 100,
    "p5.48xlarge": 3200,
    "p5e.48xlarge": 3200,
    "p5en.48xlarge": 3200,
    "p6-b200.48xlarge": 3200,
    "p6-b300.48xlarge": 6400,
    "g5.8xlarge": 25,
    "g5.12xlarge": 40,
    "g5.16xlarge": 25,
    "g5.24xlarge": 50,
    "g5.48xlarge": 100,
    "g6.8xlarge": 25,
    "g6.12xlarge": 40,
    "g6.16xlarge": 25,
    "g6.24xlarge": 50,
    "g6.48xlarge": 100,
    "g6e.8xlarge": 25,
    "g6e.12xlarge": 100,
    "g6e.16xlarge": 35,
    "g6e.24xlarge": 200,
    "g6e.48xlarge": 400,
}
_AWS_ENA: Final[dict[str, float]] = {
    "p3.2xlarge": 2.5,
    "p3.8xlarge": 10,
    "p3.16xlarge": 25,
    "g5.xlarge": 2.5,
    "g5.2xlarge": 5,
    "g5.4xlarge": 10,
    "g6.xlarge": 2.5,
    "g6.2xlarge": 5,
    "g6.4xlarge": 10,
    "g6e.xlarge": 2.5,
    "g6e.2xlarge": 5,
    "g6e.4xlarge": 20,
}
_AWS_NO_GPUDIRECT = ("p3dn.", "g5.", "g6.", "g6e.")


def _aws(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    if instance_type in _AWS_EFA:
        rdma = " (no GPUDirect RDMA)" if instance_type.startswith(_AWS_NO_GPUDIRECT) else ""
        gbps = _AWS_EFA[instance_type]
        return _net("efa", gbps, f"aws {instance_type}: EFA{rdma}, {gbps:g} Gbit/s ({_AWS_SOURCE})")
    if instance_type in _AWS_ENA:
        gbps = _AWS_ENA[instance_type]
        return _net(
            "ethernet", gbps, f"aws {instance_type}: ENA only, {gbps:g} Gbit/s baseline ({_AWS_SOURCE})"
        )
    return None


# 2. GCP ------------------------------------------------------------------------------------------------

_GCP_SOURCE = "cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"

# machine type -> (class, gbps). A2/G2/A3 sizes below 8 GPUs have one gVNIC; the 8-GPU A3/A4 types count
# only their GPU NICs (the gVNIC beside them carries host traffic).
_GCP_MACHINES: Final[dict[str, tuple[NetworkClass, float]]] = {
    "a2-highgpu-1g": ("ethernet", 24),
    "a2-highgpu-2g": ("ethernet", 32),
    "a2-highgpu-4g": ("ethernet", 50),
    "a2-highgpu-8g": ("ethernet", 100),
    "a2-megagpu-16g": ("ethernet", 100),
    "a2-ultragpu-1g": ("ethernet", 24),
    "a2-ultragpu-2g": ("ethernet", 32),
    "a2-ultragpu-4g": ("ethernet", 50),
    "a2-ultragpu-8g": ("ethernet", 100),
    "a3-highgpu-1g": ("ethernet", 25),
    "a3-highgpu-2g": ("ethernet", 50),
    "a3-highgpu-4g": ("ethernet", 100),
    "a3-highgpu-8g": ("gpudirect_tcpx", 800),
    "a3-edgegpu-8g": ("gpudirect_tcpx", 800),
    "a3-megagpu-8g": ("gpudirect_tcpx", 1600),
    "a3-ultragpu-8g": ("roce", 3200),
    "a4-highgpu-8g": ("roce", 3200),
    "g2-standard-4": ("ethernet", 10),
    "g2-standard-8": ("ethernet", 16),
    "g2-standard-12": ("ethernet", 16),
    "g2-standard-16": ("ethernet", 32),
    "g2-standard-24": ("ethernet", 32),
    "g2-standard-32": ("ethernet", 32),
    "g2-standard-48": ("ethernet", 50),
    "g2-standard-96": ("ethernet", 100),
}
# GPU id -> {count: machine type} for GPU-only rows; G2 picks the smallest host of that GPU count.
_GCP_IMPLIED: Final[dict[str, dict[int, str]]] = {
    "a100-40gb-sxm": {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g"}
    | {16: "a2-megagpu-16g"},
    "a100-80gb-sxm": {1: "a2-ultragpu-1g", 2: "a2-ultragpu-2g", 4: "a2-ultragpu-4g", 8: "a2-ultragpu-8g"},
    "h100-sxm": {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
    "h200-sxm": {8: "a3-ultragpu-8g"},
    "b200": {8: "a4-highgpu-8g"},
    "l4": {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}
_GCP_FABRIC_NAMES: Final[dict[NetworkClass, str]] = {
    "gpudirect_tcpx": "GPUDirect-TCPX",
    "roce": "RoCE (ConnectX-7, GPUDirect RDMA)",
    "ethernet": "gVNIC ethernet",
}


def _gcp(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    machine = instance_type.casefold()
    how = "machine type"
    if not machine:
        machine = _GCP_IMPLIED.get(gpu.gpu_id, {}).get(count, "")
        if machine == "a3-highgpu-8g" and "mega" in accelerator.casefold():
            machine = "a3-megagpu-8g"
        how = f"{accelerator or gpu.name}:{count} implies"
    if machine not in _GCP_MACHINES:
        return None
    network_class, gbps = _GCP_MACHINES[machine]
    fabric = _GCP_FABRIC_NAMES[network_class]
    if machine == "a3-megagpu-8g":
        fabric = "GPUDirect-TCPXO"
    return _net(network_class, gbps, f"gcp {how} {machine}: {fabric}, {gbps:g} Gbit/s ({_GCP_SOURCE})")


# 3. Azure ----------------------------------------------------------------------------------------------

_AZURE_SOURCE = "MicrosoftDocs/azure-docs virtual-machines/sizes/gpu-accelerated"
_AZURE_IB: Final[dict[str, tuple[float, str]]] = {
    "standard_nd96isr_h100_v5": (3200, "ND H100 v5: 8 x 400 Gbit/s NDR"),
    "standard_nd96isr_h200_v5": (3200, "ND H200 v5: 8 x 400 Gbit/s NDR"),
    "standard_nd96isr_mi300x_v5": (3200, "ND MI300X v5: 8 x 400 Gbit/s NDR"),
    "standard_nd96asr_v4": (1600, "ND A100 v4: 8 x 200 Gbit/s HDR"),
    "standard_nd96amsr_a100_v4": (1600, "NDm A100 v4: 8 x 200 Gbit/s HDR"),
    "standard_nd40rs_v2": (100, "NDv2: 100 Gbit/s EDR"),
    "standard_nc24r": (56, "NC24r: FDR (setup-infiniband.md)"),
    "standard_nc24rs_v2": (56, "NC24rs_v2: FDR (setup-infiniband.md)"),
    "standard_nc24rs_v3": (56, "NC24rs_v3: FDR (setup-infiniband.md)"),
}
_AZURE_ETHERNET: Final[dict[str, float]] = {  # the size pages' "Max Bandwidth (Mbps)" / 1000
    "standard_nc24ads_a100_v4": 20,
    "standard_nc48ads_a100_v4": 40,
    "standard_nc96ads_a100_v4": 80,
    "standard_nc40ads_h100_v5": 40,
    "standard_nc80adis_h100_v5": 80,
    "standard_nc4as_t4_v3": 8,
    "standard_nc8as_t4_v3": 8,
    "standard_nc16as_t4_v3": 8,
    "standard_nc64as_t4_v3": 32,
    "standard_nv12s_v3": 6,
    "standard_nv24s_v3": 12,
    "standard_nv48s_v3": 24,
    "standard_nv32as_v4": 8,
    "standard_nv36ads_a10_v5": 40,
    "standard_nv36adms_a10_v5": 80,
    "standard_nv72ads_a10_v5": 80,
}


def _azure(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    size = instance_type.casefold().removesuffix("_promo")
    if size in _AZURE_IB:
        gbps, what = _AZURE_IB[size]
        return _net(
            "infiniband", gbps, f"azure {instance_type}: {what} InfiniBand, one scale set ({_AZURE_SOURCE})"
        )
    if size in _AZURE_ETHERNET:
        gbps = _AZURE_ETHERNET[size]
        return _net(
            "ethernet", gbps, f"azure {instance_type}: accelerated ethernet {gbps:g} Gbit/s ({_AZURE_SOURCE})"
        )
    return None


# 4. OCI ------------------------------------------------------------------------------------------------

_OCI_SOURCE = "docs.oracle.com Compute/References/computeshapes.htm"
_OCI_SHAPES: Final[dict[str, tuple[NetworkClass, float, str]]] = {
    "BM.GPU.H100.8": ("roce", 3200, "8 x 2 x 200 Gbit/s RDMA"),
    "BM.GPU.H200.8": ("roce", 3200, "8 x 400 Gbit/s RDMA"),
    "BM.GPU.B200.8": ("roce", 3200, "8 x 400 Gbit/s RDMA"),
    "BM.GPU.MI300X.8": ("roce", 3200, "8 x 400 Gbit/s RDMA"),
    "BM.GPU.MI355X.8": ("roce", 3200, "8 x 400 Gbit/s RDMA"),
    "BM.GPU.GB300.4": ("roce", 3200, "4 x 800 Gbit/s RDMA"),
    "BM.GPU.GB200.4": ("roce", 1600, "4 x 400 Gbit/s RDMA"),
    "BM.GPU4.8": ("roce", 1600, "8 x 200 Gbit/s RDMA"),
    "BM.GPU.A100-v2.8": ("roce", 1600, "16 x 100 Gbit/s RDMA"),
    "BM.GPU.L40S.4": ("roce", 800, "800 Gbit/s RDMA"),
    # Not in the shapes table read; every 8-GPU HGX bare-metal shape since BM.GPU4.8 has an RDMA cluster
    # network, so the B300 shape is taken at its B200 sibling's rate (an inference, stated as such).
    "BM.GPU.B300.8": ("roce", 3200, "assumed as BM.GPU.B200.8 (no B300 row in the table read)"),
    "BM.GPU.A10.4": ("ethernet", 100, "2 x 50 Gbit/s, no RDMA"),
    "BM.GPU3.8": ("ethernet", 50, "2 x 25 Gbit/s, no RDMA"),
    "BM.GPU2.2": ("ethernet", 50, "2 x 25 Gbit/s, no RDMA"),
    "VM.GPU.A10.1": ("ethernet", 24, "24 Gbit/s"),
    "VM.GPU.A10.2": ("ethernet", 48, "48 Gbit/s"),
    "VM.GPU3.1": ("ethernet", 4, "4 Gbit/s"),
    "VM.GPU3.2": ("ethernet", 8, "8 Gbit/s"),
    "VM.GPU3.4": ("ethernet", 24.6, "24.6 Gbit/s"),
    "VM.GPU2.1": ("ethernet", 8, "8 Gbit/s"),
}


def _oci(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    if instance_type not in _OCI_SHAPES:
        return None
    network_class, gbps, what = _OCI_SHAPES[instance_type]
    fabric = "RDMA cluster network (RoCE v2)" if network_class == "roce" else "ethernet"
    return _net(network_class, gbps, f"oci {instance_type}: {fabric}, {what} ({_OCI_SOURCE})")


# 5-8. Nebius, CoreWeave, Vast, RunPod ----------------------------------------------------------------

_NEBIUS_CLUSTER = re.compile(r"^gpu-(h100|h200|b200)-sxm_8gpu-", re.IGNORECASE)


def _nebius(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    if _NEBIUS_CLUSTER.match(instance_type):
        return _net(
            "infiniband",
            3200,
            f"nebius {instance_type}: 8-GPU preset in a GPU cluster, 8 x 400 Gbit/s InfiniBand "
            "(docs.nebius.com GPU clusters; skypilot examples/nebius_infiniband)",
        )
    return None


def _is_hgx_board(gpu: GpuSpec, count: int) -> bool:
    head = (gpu.form_factor or "").casefold().split("(")[0]
    return count >= 8 and any(m in head for m in ("sxm", "oam", "hgx")) and "pcie" not in head


def _coreweave(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    if not _is_hgx_board(gpu, count):
        return None
    per_gpu, rate = (200, "HDR") if gpu.architecture == "ampere" else (400, "NDR")
    return _net(
        "infiniband",
        per_gpu * count,
        f"coreweave {count}x {gpu.name} HGX: rail-optimised non-blocking InfiniBand, {count} x {per_gpu} "
        f"Gbit/s {rate} (docs.coreweave.com HPC interconnect)",
    )


def _vast(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    return Network(
        network_class="none",
        gbps=0.0,
        derived=True,
        rule="derived: vast marketplace offer: hosts' containers sit on separate bridge networks behind NAT; "
        "an overlay network needs offers in one physical cluster, which a catalog row does not promise "
        "(docs.vast.ai multi-node training using torch + NCCL)",
    )


def _runpod(instance_type: str, gpu: GpuSpec, count: int, accelerator: str) -> Network | None:
    return _net(
        "ethernet",
        0.1,
        "runpod pod: Global Networking links an account's pods at 100 Mbit/s (docs.runpod.io "
        "pods/networking); Instant Clusters are a separate product",
    )


_PROVIDER_RULES: Final[dict[str, Callable[[str, GpuSpec, int, str], Network | None]]] = {
    "aws": _aws,
    "gcp": _gcp,
    "azure": _azure,
    "oci": _oci,
    "nebius": _nebius,
    "coreweave": _coreweave,
    "vast": _vast,
    "runpod": _runpod,
}

_VPC_NEOCLOUDS: Final[dict[str, str]] = {
    "nebius": "an account's VMs share a Nebius VPC network (docs.nebius.com VPC)",
    "coreweave": "an account's instances share a CoreWeave VPC",
}
_NO_NETWORK: Final[dict[str, str]] = {
    "lambda": "Lambda's InfiniBand belongs to 1-Click Clusters; no network between on-demand instances "
    "is documented",
    "verda": "Verda's InfiniBand belongs to Instant Clusters (docs.verda.com); no network between "
    "single instances is documented",
    "hyperstack": "Hyperstack's docs put an account's VMs in one region's environment and state no "
    "network between them",
    "shadeform": 'Shadeform is "an abstraction layer over lots of cloud providers and data centers" '
    "(docs.shadeform.ai): two rentals may sit in different clouds",
    "primeintellect": "Prime Intellect resells other providers' GPUs; its INTELLECT-1 run crossed nodes "
    "over the public internet (arXiv:2412.01152)",
}
_CLASS_WHY: Final[dict[str, str]] = {
    "neocloud": "no network between separately rented instances is documented for this provider",
    "marketplace": "a marketplace rental is an independent container or VM on another party's host; "
    "no network between two rentals is promised",
    "owned": "an owned node in a price sheet states no network",
}


def _by_class(key: str, instance_type: str) -> Network:
    """Rule 9: what a provider's class allows where no rule above knew the instance type."""
    kind = provider_class(key)
    where = f"{key or 'unknown provider'} {instance_type or '(no instance type)'}"
    if kind == "hyperscaler" or key in _VPC_NEOCLOUDS:
        why = _VPC_NEOCLOUDS.get(key, "every VM sits in the account's VPC")
        return _net(
            "ethernet",
            CONSERVATIVE_ETHERNET_GBPS,
            f"{where}: {why}; no rate documented for this type, ethernet at the conservative default of "
            f"{CONSERVATIVE_ETHERNET_GBPS:g} Gbit/s",
        )
    label = kind if key in PROVIDER_CLASS_OF else f"unknown provider, taken as a {kind}"
    why = _NO_NETWORK.get(key, _CLASS_WHY[kind])
    return Network(
        network_class="none",
        gbps=0.0,
        derived=True,
        rule=f"derived: {where} ({label}): {why}; a sheet that knows of a network between its instances "
        "states it in network_class",
    )


def derive_network(
    provider: str, instance_type: str, gpu: GpuSpec, gpus_per_instance: int, *, accelerator: str = ""
) -> Network:
    """The network between instances of one offer and the rule that gave it (rules 1-9 above).

    ``accelerator`` is the sheet's GPU name as written; it matters only where the instance type is
    empty (GCP GPU-only rows, where ``H100-MEGA`` means an A3 Mega machine rather than A3 High).
    """
    key = provider.strip().casefold()
    instance_type = instance_type.strip()
    rule = _PROVIDER_RULES.get(key)
    if rule is not None:
        found = rule(instance_type, gpu, gpus_per_instance, accelerator.strip())
        if found is not None:
            return found
    return _by_class(key, instance_type)


# Sheet override -----------------------------------------------------------------------------------------

_MAX_PLAUSIBLE_GBPS: Final = 100_000.0  # 100 Tbit/s per instance: anything above is a unit mistake


_OWNED_PCIE_NODE_GBPS: Final = 100.0


def owned_network(gpu: GpuSpec, gpus_per_node: int) -> Network:
    """The network assumed between owned nodes (the ownership sheet states none).

    Socketed parts (SXM/OAM, 8-GPU HGX/DGX-class boards) are bought as training nodes, which carry
    their generation's reference cluster NICs, one per GPU (``reference_nic_gbps``: NVIDIA DGX A100
    8 × 200 Gbit/s HDR, DGX H100/B200 8 × 400 Gbit/s ConnectX-7; AMD MI300X platforms likewise):
    InfiniBand at that rate per GPU. PCIe-card servers: ethernet at 100 Gbit/s per node (a dual-port
    100 GbE NIC, the usual server option).
    """
    form = (gpu.form_factor or "").casefold().split("(")[0]
    socketed = (
        any(marker in form for marker in ("sxm", "oam", "superchip", "hgx", "dgx")) and "pcie" not in form
    )
    if socketed:
        per_gpu, cluster = reference_nic_gbps(gpu.architecture)
        rule = f"assumed for owned {gpus_per_node}x {gpu.name} nodes: {cluster}"
        return Network(network_class="infiniband", gbps=per_gpu * gpus_per_node, derived=True, rule=rule)
    rule = f"assumed for owned {gpus_per_node}x {gpu.name} PCIe servers: 100 Gbit/s ethernet per node"
    return Network(network_class="ethernet", gbps=_OWNED_PCIE_NODE_GBPS, derived=True, rule=rule)


def default_gbps(network_class: NetworkClass, gpus_per_instance: int) -> float:
    """The bandwidth assumed for a class a sheet names without a rate, for an instance of this size."""
    if network_class == "none":
        return 0.0
    if network_class == "ethernet":
        return CONSERVATIVE_ETHERNET_GBPS
    return _DEFAULT_GBPS_PER_GPU[network_class] * max(gpus_per_instance, 1)


def _parse_class(text: str) -> NetworkClass:
    wanted = text.strip().casefold()
    for network_class in NETWORK_CLASSES:
        if network_class == wanted:
            return network_class
    raise SheetRowError(
        "network_class", f"unknown network class {text!r}; valid classes: {', '.join(NETWORK_CLASSES)}"
    )


def _parse_gbps(value: str | float | None) -> float | None:
    gbps = cell_float({"network_gbps": value}, "network_gbps")
    if gbps is not None and gbps > _MAX_PLAUSIBLE_GBPS:
        raise SheetRowError("network_gbps", f"{value!r} Gbit/s per instance is implausible (is it Mbit/s?)")
    return gbps


def network_from_sheet(
    network_class: str | None,
    network_gbps: str | float | None,
    derived: Network,
    *,
    gpus_per_instance: int,
) -> Network:
    """The offer's network once the sheet's optional ``network_class`` / ``network_gbps`` are applied.

    Both empty: ``derived`` unchanged. A class with a rate: exactly that. A class without a rate: the
    derived rate when the derivation reached the same class, else ``default_gbps`` for this instance
    size (the rule says which). A rate without a class: the derived class at the stated rate. Any stated
    value marks the result ``derived=False``. Raises ``SheetRowError`` naming the column at fault.
    """
    if not network_class and network_gbps is None:
        return derived
    class_text = (network_class or "").strip()
    gbps = _parse_gbps(network_gbps)
    if not class_text and gbps is None:
        return derived
    stated_class = _parse_class(class_text) if class_text else None
    final_class = stated_class or derived.network_class
    if final_class == "none":
        if gbps:
            column = "network_gbps" if stated_class else "network_class"
            raise SheetRowError(column, f"class 'none' has no bandwidth, got network_gbps={network_gbps!r}")
        return Network(network_class="none", gbps=0.0, derived=False, rule="stated by the sheet (class none)")
    if gbps == 0:
        raise SheetRowError("network_gbps", f"must be > 0 for class {final_class!r} (use class 'none')")
    if gbps is not None:
        kept = "" if stated_class else f"; class {final_class} kept from the {derived.rule}"
        return Network(network_class=final_class, gbps=gbps, derived=False, rule=f"stated by the sheet{kept}")
    if derived.network_class == final_class:
        rate, why = derived.gbps, f"the rate of the {derived.rule}"
    else:
        rate = default_gbps(final_class, gpus_per_instance)
        why = f"the class default for {gpus_per_instance} GPU(s), as no rate was given"
    return Network(
        network_class=final_class,
        gbps=rate,
        derived=False,
        rule=f"stated by the sheet: class {final_class}; {rate:g} Gbit/s is {why}",
    )
