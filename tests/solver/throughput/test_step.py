"""The step model of a parallel layout: each dimension moves step time the documented way, and the
network counts every concurrent data-parallel group an instance's NICs carry."""

from __future__ import annotations

import msgspec
import pytest

from solver.catalog.gpus import GpuSpec
from solver.spec.workload import ResolvedWorkload, Workload, resolve_workload
from solver.throughput.links import instance_links
from solver.throughput.step import Layout, Links, inter_instance_bytes_per_nic, sizes_of, step_time
from tests.gpu_facts import facts

H100 = GpuSpec(gpu_id="h100-sxm", name="H100 SXM", vendor="NVIDIA", memory_gib=80, nvlink_bandwidth_gbps=900,
               **facts("h100-sxm"))  # fmt: skip
SECONDS_PER_TOKEN = 2e-5


def _links(gbps_per_instance: float = 3200.0) -> Links:
    return instance_links(
        H100, "nvswitch", 8, network_gbps=gbps_per_instance, network_efficiency=0.8,
        network_latency_s=5e-6, network_label="test",
    )  # fmt: skip


def _job(model: str = "Llama 3 70B", seq: int = 4096) -> ResolvedWorkload:
    fields = {"kind": "train", "model": {"name": model}, "seq_len": seq}
    return resolve_workload(msgspec.convert(fields, Workload))


def _layout(**fields: object) -> Layout:
    base: dict[str, object] = {
        "tp": 1, "pp": 1, "vpp": 1, "cp": 1, "dp": 64, "zero": "zero1", "micro_batch": 1,
        "gradient_accumulation": 8, "recompute": "none", "global_batch_tokens": 0,
    }  # fmt: skip
    return Layout(**{**base, **fields})  # type: ignore[arg-type]


def _step(layout: Layout, links: Links | None = None, job: ResolvedWorkload | None = None) -> float:
    rw = job or _job()
    return step_time(
        layout, links or _links(), SECONDS_PER_TOKEN, sizes_of(rw, 0.0, "optimized"), "optimized"
    ).total


def test_doubling_tp_at_a_fixed_dp_doubles_the_groups_each_nic_carries() -> None:
    """With tp GPUs of an instance in tp different data-parallel groups, the instance's NICs carry tp
    all-reduces at once: for the same message per group, doubling tp doubles the bytes per NIC (the
    old model charged one group)."""
    message = 2e9
    one = inter_instance_bytes_per_nic(message, groups_per_instance=1, instances=16, nics=8)
    two = inter_instance_bytes_per_nic(message, groups_per_instance=2, instances=16, nics=8)
    assert two == pytest.approx(2 * one)


def test_every_gpu_of_an_instance_sends_its_group_shard_whatever_tp() -> None:
    """A layout at fixed dp: each GPU's gradient shard shrinks as 1/tp while its instance carries tp
    times more groups, so every NIC sends 2(k−1)/k · P·2/8 bytes (k: instances a group spans); counting
    one group (the old model) made it tp times less."""
    job = _job()
    grads = job.arch.params_b * 1e9 * 2.0  # 16-bit gradients, optimized stack
    for tp in (1, 2, 4):
        step = step_time(_layout(tp=tp, dp=64), _links(), SECONDS_PER_TOKEN, sizes_of(job, 0.0, "optimized"),
                         "optimized")  # fmt: skip
        spans = 64 * tp // 8
        assert step.inter_bytes_per_nic == pytest.approx(2 * (spans - 1) / spans * grads / 8)


def test_more_pipeline_stages_at_the_same_micro_batches_add_bubble() -> None:
    """The bubble is (p − 1)/(v·m + p − 1) of the step (Narayanan et al. 2021)."""
    sizes = sizes_of(_job(), 0.0, "optimized")
    shares = []
    for pp in (2, 4, 8):
        step = step_time(_layout(pp=pp, dp=8, gradient_accumulation=16), _links(), SECONDS_PER_TOKEN, sizes,
                         "optimized")  # fmt: skip
        share = step.bubble / (step.compute + step.bubble)
        assert share == pytest.approx((pp - 1) / (16 + pp - 1))
        shares.append(share)
    assert shares == sorted(shares)


def test_interleaving_shrinks_the_bubble() -> None:
    assert _step(_layout(pp=8, vpp=4, dp=8)) < _step(_layout(pp=8, vpp=1, dp=8))


def test_more_micro_batches_amortise_the_bubble() -> None:
    few, many = _layout(pp=8, dp=8, gradient_accumulation=4), _layout(pp=8, dp=8, gradient_accumulation=32)
    assert _step(few) / 4 > _step(many) / 32


def test_tensor_parallelism_splits_the_work_but_adds_exposed_all_reduces() -> None:
    one = _step(_layout(dp=1))
    eight = _step(_layout(tp=8, dp=1))
    assert one / 8 < eight < one


def test_context_parallelism_splits_the_sequence_but_adds_key_value_traffic() -> None:
    job = _job("Llama 3.1 70B", seq=32768)
    one = _step(_layout(dp=1), job=job)
    two = _step(_layout(cp=2, dp=1), job=job)
    assert one / 2 < two < one


def test_zero3_gathers_cost_more_than_zero1_over_a_thin_network() -> None:
    thin = _links(400.0)
    assert _step(_layout(zero="zero3"), thin) > _step(_layout(zero="zero1"), thin)


def test_more_data_parallel_ranks_over_a_thin_network_expose_more() -> None:
    thin = _links(100.0)
    job = _job()
    sizes = sizes_of(job, 0.0, "optimized")
    small = step_time(_layout(dp=8, gradient_accumulation=1), thin, SECONDS_PER_TOKEN, sizes, "optimized")
    large = step_time(_layout(dp=64, gradient_accumulation=1), thin, SECONDS_PER_TOKEN, sizes, "optimized")
    assert small.inter == 0.0 and large.inter > 0.0  # 8 ranks stay inside one instance


def test_a_larger_micro_batch_at_the_same_tokens_does_not_slow_the_compute() -> None:
    small = _layout(micro_batch=1, gradient_accumulation=8)
    large = _layout(micro_batch=8, gradient_accumulation=1)
    assert _step(large) <= _step(small) * (1 + 1e-9)


def test_instances_without_a_network_cannot_run_a_pipeline_across_them() -> None:
    assert _step(_layout(pp=2, dp=8), _links(0.0)) == float("inf")
