"""A 50-job, 13-week portfolio through POST /v1/portfolios: p50 over repeated solves (issue 27: <= 10 s).

Run with ``make bench``. The portfolio mixes LoRA fine-tunes of Llama 3.1 8B, pretraining of Llama 3.2 1B
and 3B and batch inference, with staggered windows and deadlines, 16 owned H100 SXM, up to 4 more 8-GPU
boards to buy, a cap on one provider and a serving workload growing 5 % a week. The first solve fills
the plan cache (layouts and supply-shape steps per model); later solves of the same models reuse it, as
a service that plans many portfolios does. Printed: cold and warm wall time (with the time spent on
the options before the MILP), the MILP's size and time; then the same portfolio with every job
splittable (0.5 h restarts per stage).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

_LORA = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora", "batch_size": 4,
         "seq_len": 2048, "recompute": "selective", "tokens": 2_000_000_000}  # fmt: skip
_PRETRAIN_1B = {"kind": "train", "model": {"name": "Llama 3.2 1B"}, "batch_size": 8, "seq_len": 2048,
                "tokens": 50_000_000_000}  # fmt: skip
_PRETRAIN_3B = {"kind": "train", "model": {"name": "Llama 3.2 3B"}, "batch_size": 8, "seq_len": 2048,
                "tokens": 20_000_000_000}  # fmt: skip
_BATCH = {"kind": "batch_inference", "model": {"name": "Llama 3.1 8B"}, "seq_len": 1024, "output_len": 256,
          "tokens": 5_000_000_000}  # fmt: skip
_KINDS = (_LORA, _PRETRAIN_1B, _PRETRAIN_3B, _BATCH)


def fifty_jobs() -> dict[str, Any]:
    jobs = []
    for i in range(50):
        base = _KINDS[i % len(_KINDS)]
        scale = 1 + (i * 7) % 4  # 1-4x the base work
        start = 168.0 * ((i * 5) % 10)
        jobs.append({"name": f"job-{i:02d}", "plan": {**base, "tokens": base["tokens"] * scale},
                     "earliest_start": start, "deadline": start + 168.0 * (2 + i % 3), "priority": i % 3})  # fmt: skip
    serving = {"kind": "serving", "model": {"name": "Llama 3.2 1B"}, "requests_per_s": 20,
               "request_mix": [{"input_tokens": 1000, "output_tokens": 200, "share": 1.0}]}  # fmt: skip
    return {
        "horizon": {"start": "2027-01-04", "buckets": 13, "bucket": "week"},
        "jobs": jobs,
        "serving": [{"name": "chat", "plan": serving, "growth_per_bucket": 0.05}],
        "owned": [{"gpu": "H100 SXM", "count": 16}],
        "buy": [{"gpu": "H100 SXM", "max_units": 4}],
        "availability": [{"scope": "provider", "key": "lium", "max_instances": 4}],
    }


@pytest.mark.perf
def test_fifty_jobs_over_thirteen_weeks_solve_in_ten_seconds_p50() -> None:
    body = fifty_jobs()
    store = Store.open(":memory:")
    with TestClient(create_app(Settings(db_path=":memory:"), store=store), timeout=600) as client:
        started = time.perf_counter()
        first = client.post("/v1/portfolios", json=body)
        cold = time.perf_counter() - started
        assert first.status_code == 201, first.text[:500]
        cold_solver = first.json()["solver"]
        warm, solves = [], []
        for _ in range(5):
            started = time.perf_counter()
            response = client.post("/v1/portfolios", json=body)
            warm.append(time.perf_counter() - started)
            assert response.status_code == 201
            solves.append(response.json()["solver"])
        split_body = {**body, "jobs": [{**j, "splittable": True, "restart_hours": 0.5} for j in body["jobs"]]}
        split, split_solves = [], []
        for _ in range(3):
            started = time.perf_counter()
            response = client.post("/v1/portfolios", json=split_body)
            split.append(time.perf_counter() - started)
            assert response.status_code == 201
            split_solves.append(response.json())
    store.close()
    p50 = statistics.median(warm)
    solver = solves[0]
    print(
        f"\nportfolio 50 jobs x 13 weeks: cold {cold:.2f} s (options {cold_solver['options_ms'] / 1000:.2f} s, "
        f"MILP build {cold_solver['build_ms']:.0f} ms, solve {cold_solver['solve_ms']:.0f} ms), "
        f"warm p50 {p50:.2f} s (max {max(warm):.2f} s, options p50 "
        f"{statistics.median(s['options_ms'] for s in solves):.0f} ms); "
        f"MILP {solver['variables']} variables, {solver['constraints']} constraints, "
        f"{solver['options_per_job']} options per job at most, build {solver['build_ms']:.0f} ms, "
        f"solve p50 {statistics.median(s['solve_ms'] for s in solves):.0f} ms, status {solver['status']}, "
        f"gap {solver['gap']}"
    )
    staged = split_solves[0]
    print(
        f"every job splittable (0.5 h restarts): p50 {statistics.median(split):.2f} s; MILP "
        f"{staged['solver']['variables']} variables, solve p50 "
        f"{statistics.median(o['solver']['solve_ms'] for o in split_solves):.0f} ms, "
        f"{sum(j['split'] for j in staged['jobs'])} jobs run split, total ${staged['total_usd']:,.2f} "
        f"(whole runs only: ${first.json()['total_usd']:,.2f})"
    )
    assert p50 <= 10.0 and statistics.median(split) <= 10.0
    assert all(s["status"] == "optimal" for s in solves)
    assert staged["total_usd"] <= first.json()["total_usd"] * (1 + 2e-4)  # a choice, never a cost (MIP gap)
