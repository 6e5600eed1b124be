"""The communication model: what multi-GPU training keeps of linear scaling, and why."""

from __future__ import annotations

import msgspec

from solver.catalog.gpus import GpuSpec
from solver.spec.workload import ResolvedWorkload, Workload, resolve_workload
from solver.throughput.links import instance_links
from solver.throughput.scaling import Links, training_scaling
from tests.gpu_facts import facts

H100 = GpuSpec(
    gpu_id="h100-sxm",
    name="H100 SXM",
    vendor="NVIDIA",
    memory_gib=80,
    nvlink_bandwidth_gbps=900,
    **facts("h100-sxm"),
)


def _links(per_instance: int, gbps: float, efficiency: float = 0.9) -> Links:
    return instance_links(
        H100, "nvswitch" if per_instance > 1 else "none", per_instance,
        network_gbps=gbps, network_efficiency=efficiency, network_latency_s=5e-6, network_label="test",
    )  # fmt: skip


def _job(count: int, **fields: object) -> ResolvedWorkload:
    base = {"kind": "train", "model": {"name": "Llama 3 8B"}, "seq_len": 4096, "gpu_count": count}
    return resolve_workload(msgspec.convert({**base, **fields}, Workload))


SECONDS_PER_TOKEN = 1e-4


def test_one_gpu_scales_perfectly() -> None:
    found, sigma = training_scaling(
        _job(1), _links(8, 3200), SECONDS_PER_TOKEN, workload_class="pretrain", stack="optimized"
    )
    assert found.efficiency == 1.0 and found.bottleneck == "none" and sigma == 0.0


def test_inside_one_nvswitch_box_little_is_exposed() -> None:
    found, _ = training_scaling(
        _job(8), _links(8, 3200), SECONDS_PER_TOKEN, workload_class="pretrain", stack="optimized"
    )
    assert found.efficiency > 0.95 and found.communication_fraction < 0.05


def test_a_slow_network_between_instances_is_the_bottleneck() -> None:
    fast, _ = training_scaling(
        _job(64), _links(8, 3200), SECONDS_PER_TOKEN, workload_class="full_finetune", stack="standard"
    )
    slow, sigma = training_scaling(
        _job(64), _links(2, 25, 0.5), SECONDS_PER_TOKEN, workload_class="full_finetune", stack="standard"
    )
    assert slow.efficiency < fast.efficiency and slow.bottleneck == "inter_instance"
    assert sigma > 0 and "exposed communication" in slow.method


def test_zero3_gathers_cost_more_than_zero1_over_the_network() -> None:
    links = _links(8, 400, 0.5)
    zero1, _ = training_scaling(
        _job(32, sharding="zero1"), links, SECONDS_PER_TOKEN, workload_class="pretrain", stack="optimized"
    )
    zero3, _ = training_scaling(
        _job(32, sharding="zero3"), links, SECONDS_PER_TOKEN, workload_class="pretrain", stack="optimized"
    )
    assert zero3.efficiency < zero1.efficiency and "ZeRO-3" in zero3.method


def test_lora_synchronises_only_its_adapters() -> None:
    links = _links(2, 25, 0.5)
    full, _ = training_scaling(
        _job(16, kind="fine_tune"), links, SECONDS_PER_TOKEN, workload_class="full_finetune", stack="standard"
    )
    lora, _ = training_scaling(
        _job(16, kind="fine_tune", method="lora"), links, SECONDS_PER_TOKEN,
        workload_class="lora", stack="standard", adapter_params=20e6,
    )  # fmt: skip
    assert lora.efficiency > full.efficiency


def test_instances_without_a_network_cannot_synchronise() -> None:
    isolated = _links(1, 0.0, 0.0)
    found, _ = training_scaling(
        _job(2), isolated, SECONDS_PER_TOKEN, workload_class="pretrain", stack="optimized"
    )
    assert found.efficiency == 0.0 and "no network" in found.method
