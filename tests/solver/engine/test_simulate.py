"""The engine simulation: Little's law, a hand-worked step, load and KV behaviour, determinism."""

from __future__ import annotations

import math
import statistics

import pytest

from solver.catalog.models import lookup_model
from solver.engine import (
    ENGINE_PROFILES,
    Replica,
    StepCost,
    StepShape,
    build_replica,
    run_load,
    simulate,
)
from solver.spec.serving import ServingLoad
from tests.solver.engine.serving_rows import catalog


def _replica(model: str = "Llama 3.1 8B", gpu: str = "h100-sxm", precision: str = "bf16") -> Replica:
    index, gpus = catalog()
    return build_replica(lookup_model(model), gpus[gpu], index.hardware(gpu), tp=1, precision=precision)


def test_a_closed_loop_obeys_littles_law() -> None:
    """N = X × R: clients in the loop = throughput × mean time in the system (no think time)."""
    replica = _replica()
    sizes = [(512, 128)]
    done = simulate(replica, sizes, load="concurrency", value=16, requests=400)
    measured = done[40:]
    span = max(r.finish for r in measured) - min(r.arrival for r in measured)
    throughput = len(measured) / span
    mean_e2e = statistics.mean(r.finish - r.arrival for r in measured)
    assert throughput * mean_e2e == pytest.approx(16, rel=0.06)


def test_one_step_is_the_roofline_worked_by_hand() -> None:
    arch = lookup_model("Llama 3.1 8B")
    profile = ENGINE_PROFILES["vllm"]._replace(step_overhead_s=0.001, sequence_overhead_s=1e-5)
    cost = StepCost(arch, profile, tp=1, matmul_flops_per_s=1e15, bandwidth_bytes_per_s=2e12,
                    weight_bytes_per_param=2.0, kv_bytes_per_element=2.0, bus_bytes_per_s=1e11,
                    bus_latency_s=1e-5)  # fmt: skip
    shape = StepShape(decodes=64, decode_context=64 * 1000.0)
    weights = arch.params_b * 1e9 * 2.0 / (2e12 * profile.bandwidth_efficiency)
    kv_per_token = arch.layers * arch.kv_elements_per_token_layer * 2.0
    kv_share = profile.kv_bandwidth_efficiency or profile.bandwidth_efficiency  # paged KV reads
    kv = (kv_per_token * 64_000 + kv_per_token * 64) / (2e12 * kv_share)
    gemms = (2 * (arch.params_b * 1e9 - arch.embedding_params) * 64
             + 2 * arch.hidden_size * arch.vocab_size * 64) / (1e15 * profile.compute_efficiency)  # fmt: skip
    attention = (
        4
        * arch.layers
        * arch.attention_heads
        * arch.effective_head_dim
        * 64_000
        / (1e15 * profile.compute_efficiency)
    )
    # the linear layers and attention each on their own roofline, one after the other
    assert cost.seconds(shape) == pytest.approx(
        0.001 + 64 * 1e-5 + max(weights, gemms) + max(kv, attention), rel=1e-9
    )
    assert weights > gemms and kv > attention  # decoding 64 sequences is bandwidth-bound


def test_ttft_grows_with_the_arrival_rate_until_the_replica_cannot_keep_up() -> None:
    replica = _replica()
    results = [
        run_load(replica, [(1000, 200, 1.0)], ServingLoad(requests_per_s=rate, requests=600))
        for rate in (1.0, 8.0, 16.0, 200.0)
    ]
    ttfts = [r.ttft_ms.p90 for r in results]
    assert ttfts == sorted(ttfts) and ttfts[-1] > 10 * ttfts[0]
    assert results[0].stable and not results[-1].stable
    assert results[0].requests_per_s == pytest.approx(1.0, rel=0.15)


def test_the_offline_batch_is_the_most_a_replica_does() -> None:
    replica = _replica()
    offline = run_load(replica, [(256, 256, 1.0)], ServingLoad(offline=True))
    for concurrency in (1, 8, 64):
        closed = run_load(replica, [(256, 256, 1.0)], ServingLoad(concurrency=concurrency))
        assert closed.output_tokens_per_s < offline.output_tokens_per_s * 1.02
    single = run_load(replica, [(256, 256, 1.0)], ServingLoad(concurrency=1))
    assert single.tpot_ms.p50 < offline.tpot_ms.p50


def test_a_full_kv_cache_preempts_and_still_finishes_every_request() -> None:
    small = _replica()._replace(kv_capacity_tokens=20_000)
    done = simulate(small, [(1000, 1500)], load="offline", value=1, requests=60)
    assert len(done) == 60 and all(math.isfinite(r.finish) for r in done)
    roomy = simulate(_replica(), [(1000, 1500)], load="offline", value=1, requests=60)
    assert max(r.finish for r in done) > max(r.finish for r in roomy)


def test_the_same_seed_gives_the_same_run() -> None:
    replica = _replica()
    load = ServingLoad(requests_per_s=10.0, requests=300)
    assert run_load(replica, [(300, 100, 0.5), (2000, 50, 0.5)], load, seed=7) == run_load(
        replica, [(300, 100, 0.5), (2000, 50, 0.5)], load, seed=7
    )


def test_a_request_beyond_the_kv_cache_is_refused() -> None:
    small = _replica()._replace(kv_capacity_tokens=1000)
    with pytest.raises(ValueError, match="does not fit"):
        simulate(small, [(2000, 100)], load="offline", value=1, requests=10)


@pytest.mark.parametrize(
    ("gib", "name", "vllm", "sglang"),
    [(24.0, "L4", 2048, 2048), (40.0, "A100 40GB", 2048, 4096), (80.0, "A100 80GB", 2048, 8192),
     (80.0, "H100 SXM", 8192, 8192), (180.0, "B200", 8192, 16384)],
)  # fmt: skip
def test_each_engine_budgets_a_step_by_its_documented_defaults(
    gib: float, name: str, vllm: int, sglang: int
) -> None:
    """vLLM V1: 8,192 tokens on 70 GiB or more except A100, else 2,048; SGLang: chunked_prefill_size by
    GPU memory (2,048 under 35 GiB, 4,096 under 60, 8,192 under 160, 16,384 above)."""
    assert ENGINE_PROFILES["vllm"].token_budget(gib, name) == vllm
    assert ENGINE_PROFILES["sglang"].token_budget(gib, name) == sglang
    assert ENGINE_PROFILES["sglang"].max_seqs(gib, name) == 2048


def test_a_steps_kv_reads_do_not_hide_under_its_gemms() -> None:
    """2,048 prompt tokens beside 256 long decodes: the GEMMs are compute-bound, attention's KV reads
    memory-bound; they run one after the other, so the step is their sum, not the roofline of the sums."""
    arch = lookup_model("Llama 3.1 8B")
    profile = ENGINE_PROFILES["vllm"]._replace(step_overhead_s=0.0, sequence_overhead_s=0.0)
    cost = StepCost(arch, profile, tp=1, matmul_flops_per_s=1e15, bandwidth_bytes_per_s=2e12,
                    weight_bytes_per_param=2.0, kv_bytes_per_element=2.0, bus_bytes_per_s=1e11,
                    bus_latency_s=1e-5)  # fmt: skip
    shape = StepShape(decodes=256, decode_context=256 * 4000.0, prefill_tokens=2048, prefill_attention=2048 * 1024.5,
                      prefill_chunks=1, prompts_done=1)  # fmt: skip
    t = cost.terms(shape)
    assert t["linear_compute"] > t["weights"] and t["kv"] > t["attention_compute"]
    assert cost.seconds(shape) == pytest.approx(t["linear_compute"] + t["kv"], rel=1e-12)
    summed_roofline = max(t["linear_compute"] + t["attention_compute"], t["weights"] + t["kv"])
    assert cost.seconds(shape) > 1.3 * summed_roofline


def test_fp4_matmuls_run_at_their_fitted_share_and_attention_at_the_fp8_rate() -> None:
    """NVFP4 GEMMs gain ``fp4_compute_efficiency`` × 2 over fp8 (the peak's 2× is not reached), and
    attention, which no fused kernel runs in fp4, keeps the fp8 rate under fp4 weights."""
    fp4, fp8 = _replica(gpu="b200", precision="fp4").cost, _replica(gpu="b200", precision="fp8").cost
    share = ENGINE_PROFILES["vllm"].fp4_compute_efficiency
    assert 0.3 < share < 1.0
    assert fp4.compute_rate == pytest.approx(2.0 * share * fp8.compute_rate)
    assert fp4.attention_rate == pytest.approx(fp8.attention_rate)
    assert fp8.attention_rate == pytest.approx(fp8.compute_rate)  # fp8 and 16-bit: one rate for both
