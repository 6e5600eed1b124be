from __future__ import annotations

import collections
import math

import msgspec
import pytest

from pricing.errors import SheetRowError
from pricing.rules.network import (
    CONSERVATIVE_ETHERNET_GBPS,
    default_gbps,
    derive_network,
    network_from_sheet,
)
from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec
from solver.catalog.network import (
    FABRIC_TRAITS,
    NETWORK_CLASSES,
    Network,
    achievable_gbps,
    spans_instances,
)
from tests.gpu_facts import facts


def gpu(gpu_id: str, form_factor: str = "SXM5") -> GpuSpec:
    return GpuSpec(
        gpu_id=gpu_id,
        name=gpu_id.upper(),
        vendor="NVIDIA",
        memory_gib=80,
        form_factor=form_factor,
        **facts(gpu_id),
    )


# Every offer of the shipped sheet -------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> list[tuple[str, str, str, int, Network]]:
    catalog = read_seed_catalog()
    gpus = {spec.gpu_id: spec for spec in catalog.gpus}
    assert len(catalog.offers.offers) == 930 and catalog.offers.problems == []
    return [
        (
            offer.provider,
            offer.instance_type,
            offer.gpu_name,
            offer.gpus_per_instance,
            derive_network(
                offer.provider,
                offer.instance_type,
                gpus[offer.gpu_id],
                offer.gpus_per_instance,
                accelerator=offer.gpu_name,
            ),
        )
        for offer in catalog.offers.offers
    ]


def test_every_shipped_offer_gets_a_consistent_derived_network(
    shipped: list[tuple[str, str, str, int, Network]],
) -> None:
    for provider, instance_type, _, _, network in shipped:
        assert network.network_class in NETWORK_CLASSES, (provider, instance_type)
        assert network.derived
        assert network.rule.startswith("derived: ")
        assert (network.gbps == 0) == (network.network_class == "none")


# Sizes whose provider page states no bandwidth and no fabric: the only big-cloud rows left to rule 9.
UNDOCUMENTED_BIG_CLOUD_TYPES = {
    ("azure", size)
    for base in (
        "Standard_NC6",
        "Standard_NC12",
        "Standard_NC24",
        "Standard_NV6",
        "Standard_NV12",
        "Standard_NV24",
    )
    for size in (base, f"{base}_Promo")
} | {
    ("azure", "Standard_NC6s_v3"),
    ("azure", "Standard_NC12s_v3"),
    ("azure", "Standard_NC24s_v3"),
    ("oci", "BM.GPU.RTXPRO.8"),
}


def test_the_big_clouds_tables_cover_every_shipped_type_but_the_undocumented_ones(
    shipped: list[tuple[str, str, str, int, Network]],
) -> None:
    defaulted = {
        (provider, instance_type)
        for provider, instance_type, _, _, network in shipped
        if provider in {"aws", "gcp", "azure", "oci"} and "conservative default" in network.rule
    }
    assert defaulted == UNDOCUMENTED_BIG_CLOUD_TYPES


def test_class_counts_per_provider(shipped: list[tuple[str, str, str, int, Network]]) -> None:
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for provider, _, _, _, network in shipped:
        counts[provider][network.network_class] += 1
    header = f"{'provider':<15}" + "".join(f"{c:>15}" for c in NETWORK_CLASSES) + f"{'total':>8}"
    print("\n" + header)
    for provider in sorted(counts, key=lambda p: -sum(counts[p].values())):
        row = counts[provider]
        print(
            f"{provider:<15}" + "".join(f"{row[c]:>15}" for c in NETWORK_CLASSES) + f"{sum(row.values()):>8}"
        )
    totals = collections.Counter[str]()
    for row in counts.values():
        totals.update(row)
    print(
        f"{'all':<15}" + "".join(f"{totals[c]:>15}" for c in NETWORK_CLASSES) + f"{sum(totals.values()):>8}"
    )
    assert len(counts) == 20 and sum(totals.values()) == 930
    assert set(counts["vast"]) == {"none"}
    # Separate marketplace rentals have no network between them (issue 24): every marketplace offer
    # of the shipped sheet is `none`, and only hyperscalers and VPC neoclouds fall back to ethernet.
    for provider in ("lium", "spheron", "primeintellect", "hyperbolic", "yotta", "shadeform"):
        assert set(counts[provider]) == {"none"}, provider
    assert set(counts["lambda"]) == set(counts["verda"]) == set(counts["hyperstack"]) == {"none"}
    assert totals["infiniband"] and totals["efa"] and totals["roce"] and totals["gpudirect_tcpx"]


# Spot checks of the rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "instance_type", "gpu_id", "count", "accelerator", "expected_class", "expected_gbps"),
    [
        ("aws", "p5.48xlarge", "h100-sxm", 8, "H100", "efa", 3200),
        ("aws", "p4d.24xlarge", "a100-40gb-sxm", 8, "A100", "efa", 400),
        ("aws", "p5.4xlarge", "h100-sxm", 1, "H100", "efa", 100),
        ("aws", "g5.48xlarge", "a10g", 8, "A10G", "efa", 100),
        ("aws", "g5.2xlarge", "a10g", 1, "A10G", "ethernet", 5),
        ("gcp", "", "h100-sxm", 8, "H100", "gpudirect_tcpx", 800),
        ("gcp", "a3-highgpu-8g", "h100-sxm", 8, "H100", "gpudirect_tcpx", 800),
        ("gcp", "", "h100-sxm", 8, "H100-MEGA", "gpudirect_tcpx", 1600),
        ("gcp", "", "h100-sxm", 1, "H100", "ethernet", 25),
        ("gcp", "", "h200-sxm", 8, "H200", "roce", 3200),
        ("gcp", "", "b200", 8, "B200", "roce", 3200),
        ("gcp", "", "a100-40gb-sxm", 16, "A100", "ethernet", 100),
        ("azure", "Standard_ND96isr_H100_v5", "h100-sxm", 8, "H100", "infiniband", 3200),
        ("azure", "Standard_ND96asr_v4", "a100-40gb-sxm", 8, "A100", "infiniband", 1600),
        ("azure", "Standard_NC24r_Promo", "k80", 4, "K80", "infiniband", 56),
        ("azure", "Standard_NC96ads_A100_v4", "a100-80gb-pcie", 4, "A100-80GB", "ethernet", 80),
        ("oci", "BM.GPU.H100.8", "h100-sxm", 8, "H100", "roce", 3200),
        ("oci", "BM.GPU4.8", "a100-40gb-sxm", 8, "A100", "roce", 1600),
        ("oci", "VM.GPU.A10.1", "a10", 1, "A10", "ethernet", 24),
        ("nebius", "gpu-h200-sxm_8gpu-128vcpu-1600gb", "h200-sxm", 8, "H200", "infiniband", 3200),
        ("nebius", "gpu-h100-sxm_1gpu-16vcpu-200gb", "h100-sxm", 1, "H100", "ethernet", 10),
        ("coreweave", "gd-8xh100ib-i128", "h100-sxm", 8, "H100", "infiniband", 3200),
        ("coreweave", "gd-8xa100-i128", "a100-80gb-sxm", 8, "A100", "infiniband", 1600),
        ("vast", "8x-H100_SXM-32-65536", "h100-sxm", 8, "H100", "none", 0),
        ("runpod", "4x_A100-80GB_SECURE", "a100-80gb-sxm", 4, "A100-80GB", "ethernet", 0.1),
        ("aws", "p9.unlisted", "h100-sxm", 8, "H100", "ethernet", 10),
        # Rule 9 by class: neoclouds without a documented network and every marketplace are `none`.
        ("lambda", "gpu_8x_h100_sxm5", "h100-sxm", 8, "H100", "none", 0),
        ("verda", "1B200.30V", "b200", 1, "B200", "none", 0),
        ("hyperstack", "n3-H100x8", "h100-sxm", 8, "H100", "none", 0),
        ("cudo", "epyc-genoa-a100-pcie_1x12v24gb", "a100-80gb-pcie", 1, "A100", "none", 0),
        ("lium", "RTX4090_1x", "rtx-4090", 1, "RTX4090", "none", 0),
        ("lium", "B200_1x", "b200", 1, "B200", "none", 0),
        ("spheron", "B200_1x", "b200", 1, "B200", "none", 0),
        ("primeintellect", "lambdalabs_h100x8", "h100-sxm", 8, "H100", "none", 0),
        ("shadeform", "lambdalabs_gpu_1x_h100", "h100-sxm", 1, "H100", "none", 0),
        ("hyperbolic", "h100-sxm", "h100-sxm", 1, "H100", "none", 0),
        ("yotta", "B200_1x", "b200", 1, "B200", "none", 0),
        ("somecloud", "x", "h100-sxm", 8, "H100", "none", 0),
    ],
)
def test_documented_rule(
    provider: str,
    instance_type: str,
    gpu_id: str,
    count: int,
    accelerator: str,
    expected_class: str,
    expected_gbps: float,
) -> None:
    network = derive_network(provider, instance_type, gpu(gpu_id), count, accelerator=accelerator)
    assert (network.network_class, network.gbps) == (expected_class, expected_gbps)
    assert network.derived and network.rule.startswith("derived: ")


def test_rules_say_why() -> None:
    lam = derive_network("lambda", "gpu_8x_h100_sxm5", gpu("h100-sxm"), 8)
    assert "1-Click Clusters" in lam.rule and "(neocloud)" in lam.rule and "network_class" in lam.rule
    lium = derive_network("lium", "B200_1x", gpu("b200"), 1)
    assert "(marketplace)" in lium.rule and "another party's host" in lium.rule
    stranger = derive_network("somecloud", "x", gpu("h100-sxm"), 8)
    assert "unknown provider, taken as a marketplace" in stranger.rule
    aws = derive_network("aws", "p9.unlisted", gpu("h100-sxm"), 8)
    assert "VPC" in aws.rule and "conservative default" in aws.rule
    g5 = derive_network("aws", "g5.48xlarge", gpu("a10g", "PCIe"), 8)
    assert "no GPUDirect RDMA" in g5.rule
    p5 = derive_network("aws", "p5.48xlarge", gpu("h100-sxm"), 8)
    assert "GPUDirect" not in p5.rule
    mega = derive_network("gcp", "", gpu("h100-sxm"), 8, accelerator="H100-MEGA")
    assert "a3-megagpu-8g" in mega.rule and "TCPXO" in mega.rule


def test_unmapped_gcp_count_falls_back_to_the_default() -> None:
    network = derive_network("gcp", "", gpu("h200-sxm"), 1, accelerator="H200")
    assert (network.network_class, network.gbps) == ("ethernet", CONSERVATIVE_ETHERNET_GBPS)


# The types --------------------------------------------------------------------------------------------


def test_network_encodes_its_class_as_class() -> None:
    network = derive_network("aws", "p5.48xlarge", gpu("h100-sxm"), 8)
    encoded = msgspec.json.decode(msgspec.json.encode(network))
    assert encoded["class"] == "efa" and encoded["gbps"] == 3200.0 and encoded["derived"] is True
    assert "network_class" not in encoded
    assert msgspec.json.decode(msgspec.json.encode(network), type=Network) == network


@pytest.mark.parametrize(
    "payload",
    [
        b'{"class": "none", "gbps": 5, "derived": false, "rule": "x"}',
        b'{"class": "ethernet", "gbps": 0, "derived": false, "rule": "x"}',
        b'{"class": "ethernet", "gbps": -1, "derived": false, "rule": "x"}',
        b'{"class": "token-ring", "gbps": 4, "derived": false, "rule": "x"}',
    ],
)
def test_decoding_rejects_an_inconsistent_network(payload: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(payload, type=Network)


def test_construction_rejects_a_non_finite_rate() -> None:
    with pytest.raises(ValueError, match="finite"):
        Network(network_class="roce", gbps=math.nan, derived=False, rule="x")


def test_fabric_traits_cover_every_class_and_rank_sensibly() -> None:
    assert set(FABRIC_TRAITS) == set(NETWORK_CLASSES)
    assert FABRIC_TRAITS["none"].collective_efficiency == 0
    for name in NETWORK_CLASSES[1:]:
        traits = FABRIC_TRAITS[name]
        assert 0 < traits.collective_efficiency <= 1 and traits.latency_us > 0 and traits.source
    assert FABRIC_TRAITS["infiniband"].latency_us < FABRIC_TRAITS["efa"].latency_us
    assert FABRIC_TRAITS["efa"].latency_us < FABRIC_TRAITS["ethernet"].latency_us
    assert not FABRIC_TRAITS["ethernet"].gpudirect_rdma and FABRIC_TRAITS["infiniband"].gpudirect_rdma


def test_achievable_bandwidth_and_spanning() -> None:
    p5 = derive_network("aws", "p5.48xlarge", gpu("h100-sxm"), 8)
    assert achievable_gbps(p5) == pytest.approx(3200 * FABRIC_TRAITS["efa"].collective_efficiency)
    vast = derive_network("vast", "2x-H100_SXM-32-65536", gpu("h100-sxm"), 2)
    assert achievable_gbps(vast) == 0 and not spans_instances(vast) and spans_instances(p5)


# Sheet columns ----------------------------------------------------------------------------------------

DERIVED_EFA = derive_network("aws", "p4d.24xlarge", gpu("a100-40gb-sxm"), 8)
DERIVED_NONE = derive_network("vast", "8x-H100_SXM-32-65536", gpu("h100-sxm"), 8)


def test_empty_columns_keep_the_derivation() -> None:
    assert network_from_sheet(None, None, DERIVED_EFA, gpus_per_instance=8) is DERIVED_EFA
    assert network_from_sheet(" ", "", DERIVED_EFA, gpus_per_instance=8) is DERIVED_EFA


def test_stated_class_and_rate_win() -> None:
    network = network_from_sheet("InfiniBand", "3200", DERIVED_EFA, gpus_per_instance=8)
    assert network == Network(
        network_class="infiniband", gbps=3200, derived=False, rule="stated by the sheet"
    )
    assert network_from_sheet("roce", 1600.0, DERIVED_EFA, gpus_per_instance=8).gbps == 1600


def test_stated_class_without_rate() -> None:
    same = network_from_sheet("efa", None, DERIVED_EFA, gpus_per_instance=8)
    assert (same.network_class, same.gbps, same.derived) == ("efa", 400, False)
    assert same.rule.startswith("stated by the sheet") and "derived: aws p4d" in same.rule
    other = network_from_sheet("infiniband", "", DERIVED_EFA, gpus_per_instance=8)
    assert (other.network_class, other.gbps) == ("infiniband", default_gbps("infiniband", 8))
    assert other.gbps == 1600 and "class default for 8 GPU(s)" in other.rule
    eth = network_from_sheet("ethernet", None, DERIVED_EFA, gpus_per_instance=8)
    assert eth.gbps == CONSERVATIVE_ETHERNET_GBPS
    none = network_from_sheet("none", None, DERIVED_EFA, gpus_per_instance=8)
    assert (none.network_class, none.gbps, none.derived) == ("none", 0, False)


def test_stated_rate_without_class_keeps_the_derived_class() -> None:
    network = network_from_sheet(None, "200", DERIVED_EFA, gpus_per_instance=8)
    assert (network.network_class, network.gbps, network.derived) == ("efa", 200, False)
    assert network.rule.startswith("stated by the sheet; class efa kept from the derived: ")


@pytest.mark.parametrize(
    ("network_class", "network_gbps", "derived", "column", "message"),
    [
        ("ib", None, DERIVED_EFA, "network_class", "valid classes: none, ethernet, roce, infiniband"),
        ("roce", "abc", DERIVED_EFA, "network_gbps", "not a number"),
        ("roce", "-5", DERIVED_EFA, "network_gbps", "non-negative"),
        ("roce", "nan", DERIVED_EFA, "network_gbps", "non-negative"),
        ("roce", "inf", DERIVED_EFA, "network_gbps", "non-negative"),
        ("roce", "0", DERIVED_EFA, "network_gbps", "must be > 0"),
        ("roce", "3200000", DERIVED_EFA, "network_gbps", "implausible"),
        ("none", "10", DERIVED_EFA, "network_gbps", "class 'none' has no bandwidth"),
        (None, "10", DERIVED_NONE, "network_class", "class 'none' has no bandwidth"),
    ],
)
def test_bad_columns_name_the_column(
    network_class: str | None, network_gbps: str | None, derived: Network, column: str, message: str
) -> None:
    with pytest.raises(SheetRowError) as caught:
        network_from_sheet(network_class, network_gbps, derived, gpus_per_instance=8)
    assert caught.value.column == column
    assert message in caught.value.reason
