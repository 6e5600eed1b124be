"""POST /v1/throughput end to end: the class model's provenance fields, the efficiency override, the
software stack, the network between instances, the least checkpointing that fits, and the hardware
order on the derived route (shipped calibration rows and catalog)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

Client = TestClient[Any]

CLASSES = {"pretrain", "full_finetune", "lora", "encoder_vision", "prefill", "decode"}
BOTTLENECKS = {"none", "intra_instance", "inter_instance"}

# 16 GPUs in two 8-GPU instances: gradient synchronisation crosses the network between them.
TRAIN_8B_TWO_NODES = {
    "kind": "train",
    "model": {"name": "Llama 3 8B"},
    "gpu": "h100-sxm",
    "gpu_count": 16,
    "gpus_per_instance": 8,
    "recompute": "full",
    # an explicit data-parallel layout: the network tests below price it as stated
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "sharding": "zero1",
    "micro_batch": 1,
}
TRAIN_1B_ONE_GPU = {"kind": "train", "model": {"name": "Llama 3.2 1B"}, "gpu": "h100-sxm", "gpu_count": 1}


def post(client: Client, body: dict[str, Any]) -> Any:
    return client.post("/v1/throughput", json=body)


def estimate(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = post(client, body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_catalog_gpu_ids_used_below_exist(client: Client) -> None:
    ids = {g["gpu_id"] for g in client.get("/v1/gpus", params={"limit": 1000}).json()["items"]}
    assert {"h200-sxm", "h100-sxm", "a100-80gb-sxm", "a100-40gb-sxm", "l40s", "rtx-4090"} <= ids


@pytest.mark.parametrize(
    "body",
    [
        TRAIN_8B_TWO_NODES,
        {
            "kind": "fine_tune",
            "model": {"name": "Llama 3.1 8B"},
            "method": "lora",
            "gpu": "l40s",
            "gpu_count": 2,
        },
        {
            "kind": "fine_tune",
            "model": {"name": "Llama 3.1 70B"},
            "gpu": "h100-sxm",
            "gpu_count": 32,  # the fine-tuning stack shards (ZeRO-3) but has no tensor parallelism
        },
    ],
)
def test_multi_gpu_training_answer_explains_itself(client: Client, body: dict[str, Any]) -> None:
    result = estimate(client, body)
    assert result["workload_class"] in CLASSES
    assert result["stack"] in ("standard", "optimized")
    assert result["efficiency"]["basis"] in ("calibrated", "prior", "override", "measured")
    band = result["band"]
    assert 0 < band["low"] <= result["value"] <= band["high"]
    scaling = result["scaling"]
    assert scaling is not None, "multi-GPU training says how far it keeps linear scaling"
    assert 0 < scaling["efficiency"] <= 1
    assert 0 <= scaling["communication_fraction"] < 1
    assert scaling["bottleneck"] in BOTTLENECKS and scaling["method"]
    assert result["gpu_count"] == body["gpu_count"]
    assert 1 <= result["gpus_per_instance"] <= result["gpu_count"]
    network = result["network"]
    assert set(network) == {"class", "gbps", "derived", "rule"} and network["rule"]


def test_gpus_per_instance_and_default_network_are_reported(client: Client) -> None:
    result = estimate(client, TRAIN_8B_TWO_NODES)
    assert result["gpus_per_instance"] == 8  # echoed
    default = result["network"]
    assert default["derived"] is True and default["class"] != "none" and default["gbps"] > 0
    stated = estimate(client, TRAIN_8B_TWO_NODES | {"network": {"class": "roce", "gbps": 800}})["network"]
    assert stated["class"] == "roce" and stated["gbps"] == 800 and stated["derived"] is False


@pytest.mark.parametrize(
    ("gpu", "count", "per_instance", "gbps_per_gpu"),
    [("a100-80gb-sxm", 16, 8, 200), ("h100-sxm", 16, 8, 400), ("b200", 16, 8, 400), ("gb200", 144, 72, 400)],
)
def test_the_default_network_is_the_gpu_generations_reference_cluster_per_gpu(
    client: Client, gpu: str, count: int, per_instance: int, gbps_per_gpu: float
) -> None:
    """One NIC per GPU at the generation's rate (DGX A100: HDR 200; DGX H100/B200: NDR 400), scaled to
    the instance: a 72-GPU GB200 rack has 72 NICs, not an 8-GPU node's."""
    body = {k: v for k, v in TRAIN_8B_TWO_NODES.items() if k != "gpus_per_instance"}
    result = estimate(client, body | {"gpu": gpu, "gpu_count": count})
    assert result["gpus_per_instance"] == per_instance
    assert result["network"]["gbps"] == gbps_per_gpu * per_instance and result["network"]["derived"] is True
    assert f"{per_instance}-GPU instances" in result["network"]["rule"]
    halves = estimate(client, body | {"gpu": gpu, "gpu_count": count, "gpus_per_instance": per_instance // 2})
    assert halves["network"]["gbps"] == gbps_per_gpu * (per_instance // 2)  # the NICs go with the GPUs


def test_single_gpu_training_has_no_scaling(client: Client) -> None:
    result = estimate(client, TRAIN_1B_ONE_GPU)
    assert result["scaling"] is None and result["gpus_per_instance"] == 1


def test_known_workload_classes(client: Client) -> None:
    base = {"model": {"name": "Llama 3.1 8B"}, "gpu": "h100-sxm", "gpu_count": 8}  # full training fits 8
    assert estimate(client, base | {"kind": "train"})["workload_class"] == "pretrain"
    assert estimate(client, base | {"kind": "fine_tune"})["workload_class"] == "full_finetune"
    assert estimate(client, base | {"kind": "fine_tune", "method": "lora"})["workload_class"] == "lora"


# --- efficiency override -------------------------------------------------------------------------


def test_mfu_override_is_echoed_and_routes_the_estimate(client: Client) -> None:
    result = estimate(client, TRAIN_8B_TWO_NODES | {"efficiency": {"mfu": 0.4}})
    assert result["route"] == "override" and result["provenance"] == "derived"
    assert result["efficiency"]["basis"] == "override"
    assert result["efficiency"]["mfu"] == pytest.approx(0.4)
    calibrated = estimate(client, TRAIN_8B_TWO_NODES)
    assert calibrated["route"] != "override" and calibrated["efficiency"]["basis"] != "override"


def test_throughput_grows_with_the_given_mfu_but_never_faster_than_it(client: Client) -> None:
    mfus = [0.2, 0.3, 0.4, 0.5]
    values = [estimate(client, TRAIN_8B_TWO_NODES | {"efficiency": {"mfu": m}})["value"] for m in mfus]
    assert values == sorted(values) and len(set(values)) == len(values)
    # communication does not speed up with the compute: a k-fold MFU is at most a k-fold throughput
    for i in range(1, len(mfus)):
        assert values[i] / values[i - 1] <= mfus[i] / mfus[i - 1] * (1 + 1e-9)


def test_override_on_one_gpu_is_proportional_to_the_mfu_within_the_roofline(client: Client) -> None:
    one = TRAIN_1B_ONE_GPU
    low = estimate(client, one | {"efficiency": {"mfu": 0.25}})["value"]
    high = estimate(client, one | {"efficiency": {"mfu": 0.5}})["value"]
    assert low < high <= 2 * low * (1 + 1e-9)


# --- software stack ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "default"),
    [("train", "optimized"), ("fine_tune", "standard")],
)
def test_stack_is_echoed_defaulted_and_changes_the_class_model(
    client: Client, kind: str, default: str
) -> None:
    base = {
        "kind": kind,
        "model": {"name": "Llama 3 8B"},
        "gpu": "h100-sxm",
        "gpu_count": 8,
        "recompute": "full",
    }
    standard = estimate(client, base | {"stack": "standard"})
    optimized = estimate(client, base | {"stack": "optimized"})
    left_out = estimate(client, base)
    assert standard["stack"] == "standard" and optimized["stack"] == "optimized"
    assert left_out["stack"] == default
    assert left_out["value"] == (standard if default == "standard" else optimized)["value"]
    assert {standard["route"], optimized["route"]} == {"class_model"}
    # fused kernels and better communication overlap: the optimized stack is the faster one
    assert optimized["value"] > standard["value"]


# --- the network between instances ---------------------------------------------------------------


def test_ethernet_between_instances_is_slower_than_infiniband(client: Client) -> None:
    ib = estimate(client, TRAIN_8B_TWO_NODES | {"network": {"class": "infiniband", "gbps": 400}})
    eth = estimate(client, TRAIN_8B_TWO_NODES | {"network": {"class": "ethernet", "gbps": 25}})
    assert eth["value"] < ib["value"]
    assert eth["scaling"]["efficiency"] < ib["scaling"]["efficiency"]
    assert eth["scaling"]["communication_fraction"] > ib["scaling"]["communication_fraction"]
    assert eth["scaling"]["bottleneck"] == "inter_instance"
    assert eth["network"] == {
        "class": "ethernet",
        "gbps": 25.0,
        "derived": False,
        "rule": eth["network"]["rule"],
    }
    assert ib["network"]["class"] == "infiniband" and ib["network"]["gbps"] == 400


def test_more_bandwidth_is_never_slower(client: Client) -> None:
    values = [
        estimate(client, TRAIN_8B_TWO_NODES | {"network": {"class": "ethernet", "gbps": gbps}})["value"]
        for gbps in (10, 25, 100, 400)
    ]
    assert values == sorted(values) and values[0] < values[-1]


def test_network_does_not_matter_inside_one_instance(client: Client) -> None:
    one_node = TRAIN_8B_TWO_NODES | {"gpu_count": 8}
    values = {
        estimate(client, one_node | {"network": network})["value"]
        for network in ({"class": "ethernet", "gbps": 10}, {"class": "infiniband", "gbps": 3200})
    }
    assert len(values) == 1


@pytest.mark.parametrize("network_class", ["ethernet", "infiniband", "roce", "efa", "gpudirect_tcpx"])
def test_zero_gbps_with_a_real_network_class_is_400_naming_network_gbps(
    client: Client, network_class: str
) -> None:
    response = post(client, TRAIN_8B_TWO_NODES | {"network": {"class": network_class, "gbps": 0}})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == "network.gbps"


def test_negative_gbps_is_400_naming_network_gbps(client: Client) -> None:
    response = post(client, TRAIN_8B_TWO_NODES | {"network": {"class": "ethernet", "gbps": -25}})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "network.gbps"


def test_no_network_across_instances_cannot_be_estimated(client: Client) -> None:
    response = post(client, TRAIN_8B_TWO_NODES | {"network": {"class": "none", "gbps": 0}})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


# --- recompute left out: the least checkpointing that fits ----------------------------------------


@pytest.mark.parametrize("gpu", ["h100-sxm", "a100-80gb-sxm", "l40s", "rtx-4090"])
def test_left_out_layout_is_one_the_memory_endpoint_fits(client: Client, gpu: str) -> None:
    """The layout search answers a layout (micro-batch, checkpointing) that /v1/memory says fits."""
    workload = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.1 8B"},
        "method": "lora",
        "batch_size": 4,
        "seq_len": 4096,
        "gpu_count": 1,
    }
    auto = estimate(client, workload | {"gpu": gpu})
    layout = auto["layout"]
    assert auto["method"].startswith(
        f"layout tp 1, pp 1, cp 1, dp 1, none, micro-batch {layout['micro_batch']}"
    )
    assert layout["micro_batch"] * layout["gradient_accumulation"] <= 4  # the global batch is never exceeded
    memory = {
        **workload,
        "batch_size": layout["micro_batch"],
        "recompute": layout["recompute"],
        "gradient_accumulation_steps": layout["gradient_accumulation"],
        "gpu": gpu,
    }
    fit = client.post("/v1/memory", json=memory).json()["fits"][0]
    assert fit["fits"], fit
    assert auto["memory_per_gpu_gib"] == pytest.approx(
        client.post("/v1/memory", json=memory).json()["per_gpu_gib"], abs=0.01
    )
    stated = estimate(client, workload | {"gpu": gpu, "recompute": layout["recompute"]})
    assert stated["value"] == pytest.approx(auto["value"])


# --- hardware order on the derived route ----------------------------------------------------------

ORDER_WORKLOADS = [
    {"kind": "train", "model": {"name": "Llama 3 8B"}, "gpu_count": 8, "recompute": "full"},
    {"kind": "train", "model": {"name": "Llama 3 8B"}, "gpu_count": 16, "recompute": "none"},
    {"kind": "train", "model": {"name": "Llama 3.2 1B"}, "gpu_count": 1, "recompute": "selective"},
    {
        "kind": "fine_tune",
        "model": {"name": "Mistral 7B"},
        "method": "lora",
        "gpu_count": 1,
        "recompute": "full",
    },
    {"kind": "fine_tune", "model": {"name": "Llama 3.1 70B"}, "gpu_count": 64, "recompute": "full"},
]


@pytest.mark.parametrize("workload", ORDER_WORKLOADS)
@pytest.mark.parametrize(("faster", "slower"), [("h200-sxm", "h100-sxm"), ("a100-80gb-sxm", "a100-40gb-sxm")])
def test_more_memory_bandwidth_of_one_chip_is_not_slower(
    client: Client, workload: dict[str, Any], faster: str, slower: str
) -> None:
    fast = estimate(client, workload | {"gpu": faster})
    slow = estimate(client, workload | {"gpu": slower})
    assert fast["route"] == slow["route"] == "class_model", (fast["route"], slow["route"])
    assert fast["value"] >= slow["value"]


# --- tensor parallelism across instances ---------------------------------------------------------


@pytest.mark.parametrize(
    "layout",
    [
        {"gpu_count": 16, "gpus_per_instance": 4, "tp": 16},
        {"gpu_count": 2, "gpus_per_instance": 1, "interconnect": "nvswitch", "tp": 2},
    ],
)
def test_tensor_parallel_group_across_instances_is_refused_or_pays_for_the_network(
    client: Client, layout: dict[str, Any]
) -> None:
    # tp == gpu_count: one data-parallel rank, so only the tensor-parallel traffic can cross instances
    body = {"kind": "train", "model": {"name": "Llama 3 8B"}, "gpu": "h100-sxm", "recompute": "full"} | layout
    slow = post(client, body | {"network": {"class": "ethernet", "gbps": 10}})
    if slow.status_code == 400:
        assert slow.json()["field"] in ("tp", "gpus_per_instance")
        return
    fast = estimate(client, body | {"network": {"class": "infiniband", "gbps": 3200}})
    assert slow.status_code == 200, slow.text
    assert slow.json()["value"] < fast["value"]


# --- training at scale: the layout is chosen, or an explicit one is refused -----------------------


def test_a_405b_model_on_4096_h100_gets_a_layout_that_fits(client: Client) -> None:
    """The issue's case: left out, the layout is searched (it used to answer tp 1, pure data parallel)."""
    body = {"kind": "train", "model": {"name": "Llama 3.1 405B"}, "seq_len": 8192, "gpu": "h100-sxm",
            "gpu_count": 4096, "recompute": "none"}  # fmt: skip
    result = estimate(client, body)
    layout = result["layout"]
    assert layout["tp"] * layout["pp"] * layout["cp"] * layout["dp"] == 4096
    assert layout["pp"] > 1 and layout["tp"] == 8 and layout["recompute"] == "none"
    assert result["memory_per_gpu_gib"] <= 80
    assert layout["global_batch_tokens"] <= 6_400_000  # the rule's batch, never inflated
    assert "efficiency at scale" in result["method"] and result["method"].startswith("layout tp 8")
    memory = client.post("/v1/memory", json={
        "kind": "train", "model": {"name": "Llama 3.1 405B"}, "seq_len": 8192, "gpu_count": 4096,
        "tp": layout["tp"], "pp": layout["pp"], "vpp": layout["vpp"], "cp": layout["cp"],
        "sharding": layout["zero"], "batch_size": layout["micro_batch"], "recompute": "none",
        "gradient_accumulation_steps": layout["gradient_accumulation"], "gpu": "h100-sxm",
    }).json()  # fmt: skip
    assert memory["fits"][0]["fits"] and memory["per_gpu_gib"] == pytest.approx(
        result["memory_per_gpu_gib"], abs=0.01
    )


@pytest.mark.parametrize(
    ("layout", "fields"),
    [
        (
            {"gpu_count": 8, "tp": 1, "pp": 1, "sharding": "none", "micro_batch": 1},
            {"tp", "pp", "sharding", "gpu_count"},
        ),
        ({"gpu_count": 4096, "tp": 1, "pp": 1, "cp": 1}, {"global_batch_tokens"}),
    ],
)
def test_an_explicit_layout_that_cannot_fit_is_a_422_naming_the_field(
    client: Client, layout: dict[str, Any], fields: set[str]
) -> None:
    body = {"kind": "train", "model": {"name": "Llama 3 70B"}, "seq_len": 4096, "gpu": "h100-sxm",
            "recompute": "none"} | layout  # fmt: skip
    response = post(client, body)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] in fields and problem["errors"][0]["field"] == problem["field"]
