"""Host requirements: offers' per-instance CPUs, memory and storage per GPU against the request, and the
host memory CPU offload needs against each configuration's offer."""

from __future__ import annotations

import msgspec
import pytest

from solver.optimise.candidates import WorkAmount, enumerate_candidates
from solver.optimise.warnings import candidate_warnings
from solver.spec.host import HostSpec, host_shortfall, host_unknown
from solver.spec.workload import ModelSpec, Workload
from tests.solver.optimise.test_planner import GPUS, supply, throughput

SPEC = HostSpec(cpu_cores_per_gpu=8, host_ram_gib_per_gpu=64, storage_read_gbps=2)


def test_numbers_are_compared_per_gpu() -> None:
    assert host_shortfall(SPEC, 8, vcpus=96, host_memory_gib=1024, storage_read_gbps=40) is None
    why = host_shortfall(SPEC, 8, vcpus=48, host_memory_gib=1024, storage_read_gbps=40)
    assert why == "6 vCPUs per GPU (48 for 8 GPU(s)), below host.cpu_cores_per_gpu 8"
    why = host_shortfall(SPEC, 4, vcpus=64, host_memory_gib=200, storage_read_gbps=40)
    assert why is not None and "50 GiB of host memory per GPU" in why
    why = host_shortfall(SPEC, 8, vcpus=64, host_memory_gib=1024, storage_read_gbps=10)
    assert why is not None and "host.storage_read_gbps 2" in why


def test_an_offer_that_does_not_state_a_number_is_kept_and_the_gap_named() -> None:
    assert host_shortfall(SPEC, 8, vcpus=None, host_memory_gib=None, storage_read_gbps=None) is None
    assert host_unknown(SPEC, vcpus=96, host_memory_gib=None, storage_read_gbps=None) == (
        "host_ram_gib_per_gpu",
        "storage_read_gbps",
    )
    assert host_unknown(
        HostSpec(cpu_cores_per_gpu=4), vcpus=None, host_memory_gib=None, storage_read_gbps=None
    ) == ("cpu_cores_per_gpu",)


def test_the_request_block_is_bounded_and_optional() -> None:
    assert not HostSpec().asks() and SPEC.asks()
    with pytest.raises(msgspec.ValidationError, match="cpu_cores_per_gpu"):
        msgspec.convert({"cpu_cores_per_gpu": 0}, HostSpec)
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.convert({"gpu_ram": 1}, HostSpec)


def _work(unit: str) -> WorkAmount:
    return WorkAmount(amount=10**9, unit="tokens")


OFFLOAD = Workload(
    kind="fine_tune", model=ModelSpec(name="Llama 3.2 1B"), batch_size=2, seq_len=1024, offload="optimizer"
)


def test_offload_needs_its_host_memory_from_the_offer() -> None:
    small = msgspec.structs.replace(supply(0, "big", 1, 1.0), host_ram_gib_per_gpu=2.0)
    large = msgspec.structs.replace(supply(1, "big", 1, 3.0), host_ram_gib_per_gpu=512.0)
    found = enumerate_candidates(OFFLOAD, [small, large], GPUS, throughput, _work, max_gpus=1)
    assert {c.supply.supply_id for c in found.candidates} == {"s1"}
    need = found.candidates[0].memory.host_ram_gib
    assert need > 2.0
    host = next(r for r in found.rejections if r.reason == "host")
    assert host.supply_id == "s0"
    assert host.detail == (
        f"needs {need:,.1f} GiB of host memory per GPU (offloaded or paged state); the offer has 2 GiB per GPU"
    )


def test_without_offload_host_memory_is_not_checked() -> None:
    small = msgspec.structs.replace(supply(0, "big", 1, 1.0), host_ram_gib_per_gpu=2.0)
    plain = msgspec.structs.replace(OFFLOAD, offload="none")
    found = enumerate_candidates(plain, [small], GPUS, throughput, _work, max_gpus=1)
    assert found.candidates and not any(r.reason == "host" for r in found.rejections)


def test_an_offer_without_host_memory_is_kept_with_a_warning() -> None:
    unknown = msgspec.structs.replace(supply(0, "big", 1, 1.0), instance_type="x1")
    found = enumerate_candidates(OFFLOAD, [unknown], GPUS, throughput, _work, max_gpus=1)
    codes = {w.code: w.message for w in candidate_warnings(found.candidates[0])}
    assert "x1 does not state its host memory" in codes["host_unknown"]
