"""A replica type's capacity: measured buckets win, else the engine model's rate within the SLO."""

from __future__ import annotations

import pytest

from service.db.seed_files import read_seed_catalog
from solver.catalog.models import lookup_model
from solver.engine import MAX_UTILIZATION, ServingSetup, engine_capacity, replica_capacity
from solver.spec.serving import RequestClass, ServingSlo
from tests.solver.engine.serving_rows import catalog


def _setup(gpu: str, model: str = "Llama-2-7b", precision: str = "bf16") -> ServingSetup:
    index, gpus = catalog()
    return ServingSetup(
        arch=lookup_model(model), gpu=gpus[gpu], hardware=index.hardware(gpu), precision=precision
    )


def _request(i: int, o: int) -> RequestClass:
    return RequestClass(input_tokens=i, output_tokens=o, share=1.0)


SERVING_ROWS = read_seed_catalog().serving.items


def test_a_measured_bucket_is_the_capacity_without_an_slo() -> None:
    found = engine_capacity(SERVING_ROWS, _setup("h100-sxm"), 1, _request(300, 300), None)
    assert found.provenance == "measured" and found.sources and found.confidence == "high"


def test_elsewhere_the_engine_derives_it() -> None:
    found = engine_capacity(SERVING_ROWS, _setup("b200"), 1, _request(300, 300), None)
    assert found.provenance == "derived" and found.requests_per_s > 0 and "engine model" in found.method


def test_the_capacity_falls_with_longer_requests_and_tighter_slos() -> None:
    replica = _setup("b200").replica(1)
    short, _ = replica_capacity(replica, (200, 100, 1.0), None)
    long, _ = replica_capacity(replica, (2000, 1000, 1.0), None)
    assert long < short
    loose, _ = replica_capacity(
        replica, (1000, 200, 1.0), ServingSlo(ttft_ms=5000, tpot_ms=200, percentile=90)
    )
    tight, how = replica_capacity(
        replica, (1000, 200, 1.0), ServingSlo(ttft_ms=200, tpot_ms=10, percentile=90)
    )
    free, _ = replica_capacity(replica, (1000, 200, 1.0), None)
    assert 0 < tight < loose <= free / MAX_UTILIZATION and "TTFT" in how


def test_an_slo_holds_for_the_90th_percentile_of_requests_unless_another_is_stated() -> None:
    replica = _setup("a100-80gb-sxm").replica(1)
    size = (1000, 200, 1.0)
    default, how = replica_capacity(replica, size, ServingSlo(ttft_ms=500, tpot_ms=30))
    at_p90, _ = replica_capacity(replica, size, ServingSlo(ttft_ms=500, tpot_ms=30, percentile=90))
    at_p99, _ = replica_capacity(replica, size, ServingSlo(ttft_ms=500, tpot_ms=30, percentile=99))
    assert default == at_p90 > at_p99 > 0 and "p90 TTFT 500 ms and TPOT 30 ms" in how


def test_an_slo_no_rate_meets_is_zero_and_says_why() -> None:
    replica = _setup("l4").replica(1)
    found, how = replica_capacity(replica, (3000, 500, 1.0), ServingSlo(ttft_ms=10, percentile=99))
    assert found == 0 and "slo_unreachable" in how


def test_a_model_the_gpu_cannot_hold_has_no_capacity() -> None:
    found = engine_capacity(SERVING_ROWS, _setup("l4", "Llama 3.1 70B"), 1, _request(500, 200), None)
    assert found.requests_per_s == 0 and "no_kv_room" in found.method


def test_a_precision_the_gpu_lacks_has_no_capacity_and_says_what_it_runs() -> None:
    found = engine_capacity(SERVING_ROWS, _setup("t4"), 1, _request(30, 80), None)
    assert found.requests_per_s == 0
    assert found.method == "unavailable (precision): T4 has no bf16 tensor cores; it runs fp32, fp16, int8"


@pytest.mark.parametrize("slo", [None, ServingSlo(tpot_ms=100, percentile=90)])
def test_a_measured_row_under_an_slo_is_scaled_by_the_engine(slo: ServingSlo | None) -> None:
    found = engine_capacity(SERVING_ROWS, _setup("h100-sxm"), 1, _request(300, 300), slo)
    row = engine_capacity(SERVING_ROWS, _setup("h100-sxm"), 1, _request(300, 300), None)
    assert found.sources == row.sources and found.requests_per_s <= row.requests_per_s


def test_a_measured_row_under_an_slo_simulates_the_saturated_rate_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import solver.engine.capacity as capacity

    offline = []
    real = capacity.run_load

    def counting(replica, classes, load, seed=0, *, saturated=None):  # type: ignore[no-untyped-def]
        offline.append(load.offline)
        return real(replica, classes, load, seed, saturated=saturated)

    monkeypatch.setattr(capacity, "run_load", counting)
    slo = ServingSlo(tpot_ms=100, percentile=90)
    found = engine_capacity(SERVING_ROWS, _setup("h100-sxm"), 1, _request(300, 300), slo)
    assert found.sources and sum(offline) == 1 and len(offline) == 1 + 1 + capacity.BISECTIONS
