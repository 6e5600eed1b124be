"""What the host and software blocks cost a plan (issue 16): the benchmark workloads with and without
them, in process on the shipped catalog. Both filters work once per offer group or GPU type, so a plan
with them should take about as long as one without (it has fewer supplies to enumerate)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from service.db.store import Store
from service.plans.pipeline import PlanService
from solver.spec.host import HostSpec
from solver.spec.plan import PlanRequest
from solver.spec.software import SoftwareSpec
from tests.perf.conftest import median_ms, timed
from tests.perf.workloads import PLAN_BODIES

PLAIN = [msgspec.convert(body, PlanRequest) for body in PLAN_BODIES]
FILTERED = [
    msgspec.structs.replace(
        request,
        host=HostSpec(cpu_cores_per_gpu=4, host_ram_gib_per_gpu=16),
        software=SoftwareSpec(stack="cuda", requires=["vllm"]),
    )
    for request in PLAIN
]


def _p50(service: PlanService, requests: list[PlanRequest]) -> float:
    for request in requests:  # warm the caches
        service.create(request)
    cycle = iter(requests * 100)
    return median_ms(timed(lambda: service.create(next(cycle)), 90))


def test_host_and_software_blocks_keep_plans_as_fast(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "filters.duckdb"))
    try:
        service = PlanService(store)
        plain, filtered = _p50(service, PLAIN), _p50(service, FILTERED)
        again = _p50(service, PLAIN)
    finally:
        store.close()
    base = min(plain, again)
    print(f"\n{len(PLAIN)} workloads in process: plain p50 {plain:.2f} / {again:.2f} ms (before / after)")
    print(
        f"with host + software blocks p50 {filtered:.2f} ms = {filtered / base:.2f}x plain (target <= 1.2x)"
    )
