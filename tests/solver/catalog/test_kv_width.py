"""One KV-cache width for memory, throughput and the engine (issue 23: fp8 weights no longer mean an
fp8 cache in one model and a 16-bit cache in another)."""

from __future__ import annotations

import msgspec
import pytest

from solver.catalog.models import lookup_model
from solver.catalog.precisions import kv_element_bytes, measured_kv_cache
from solver.memory.peak import estimate_memory
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.workcost import decode_bytes_per_token


def test_the_width_follows_the_cache_not_the_weights() -> None:
    assert kv_element_bytes("fp8") == kv_element_bytes("bf16") == 2.0
    assert kv_element_bytes("fp8", "fp8") == kv_element_bytes("bf16", "fp8") == 1.0
    assert kv_element_bytes("fp32") == 4.0
    assert measured_kv_cache("fp8") == "fp8" and measured_kv_cache("bf16") == "auto"


@pytest.mark.parametrize("kv_cache", ["auto", "fp8"])
def test_the_memory_model_and_the_decode_rate_read_the_same_bytes(kv_cache: str) -> None:
    body = {"kind": "serving", "model": {"name": "Llama 3.1 8B"}, "precision": "fp8", "seq_len": 4096,
            "batch_size": 16, "kv_cache": kv_cache}  # fmt: skip
    workload = resolve_workload(msgspec.convert(body, Workload))
    arch = lookup_model("Llama 3.1 8B")
    per_element = kv_element_bytes("fp8", workload.kv_cache)
    cached = arch.layers * arch.kv_elements_per_token_layer * per_element * 4096 * 16 / 2**30
    assert estimate_memory(workload).breakdown.kv_cache == pytest.approx(cached, rel=1e-6)
    weights_only = decode_bytes_per_token(arch, "fp8", 16, 0.0, per_element)
    with_context = decode_bytes_per_token(arch, "fp8", 16, 1000.0, per_element)
    assert with_context - weights_only == pytest.approx(
        arch.layers * arch.kv_elements_per_token_layer * per_element * 1000
    )
