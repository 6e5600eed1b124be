"""Memory stays flat under churn (issue 13, B12): after price-sheet swaps the planner's caches hold the
newest model generation's tables only, however many snapshots came before; and a price sheet, which
changes no model input, leaves the layouts, supply-shape steps and estimates worked out before it in
place (before, every new sheet made each workload's next plan cold again: 1.7 s for a 16k-GPU 70B plan).
(The 10-minute RSS soak is in ``tests/perf/test_churn_soak.py``, run by ``make bench``.)"""

from __future__ import annotations

import msgspec

from service.db.store import Store
from service.estimates.throughput import layout_cache
from service.plans.pipeline import PlanService
from service.plans.throughput import ThroughputCache, ThroughputKey, plan_cache
from service.price_sheets.importer import import_sheet
from solver.spec.plan import PlanRequest
from solver.spec.workload import Workload, resolve_workload
from tests.perf.workloads import PLAN_BODIES, SERVING_BODIES

REQUESTS = [msgspec.convert(body, PlanRequest) for body in [*PLAN_BODIES[:3], SERVING_BODIES[0]]]


def _sheet(round_: int) -> bytes:
    return (
        "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"
        f"churn,c.h100x1,H100 SXM,1,eu-1,{2.5 + round_ / 100:.2f}\n"
    ).encode()


def test_tables_of_older_snapshots_are_dropped_and_not_kept() -> None:
    cache = ThroughputCache()
    workload = resolve_workload(
        msgspec.convert({"kind": "train", "model": {"name": "Llama 3.2 1B"}, "batch_size": 8}, Workload)
    )
    for generation in (1, 2, 3):
        for part in ("estimates", "shapes", "capacities"):
            cache.table(ThroughputKey(generation=generation, workload=workload, output_len=None, part=part))
    assert cache.generations() == [3, 3, 3]
    stale = cache.table(ThroughputKey(generation=2, workload=workload, output_len=None))
    stale["x"] = 1  # a request still on snapshot 2 has a table for itself …
    assert cache.generations() == [3, 3, 3]  # … that is not kept


def test_planner_caches_stay_bounded_across_sheet_swaps() -> None:
    with Store.open(":memory:") as store:
        plans = PlanService(store)
        held: list[int] = []
        for round_ in range(6):
            report = import_sheet(store, source="churn", fmt="rental_csv", body=_sheet(round_), origin="test")
            assert report.result == "ok"
            for request in REQUESTS:
                plans.create(request)
            generations = plans.throughput_cache.generations()
            assert set(generations) == {store.snapshot.model_generation()}, generations
            held.append(len(generations))
        assert len(set(held)) == 1, held  # the same number of tables after every swap


def test_a_price_sheet_keeps_what_the_models_worked_out() -> None:
    with Store.open(":memory:") as store:
        plans = PlanService(store)
        request = REQUESTS[0]  # the 16k-GPU 70B plan: its layout search is the slowest there is
        plans.create(request)
        before = store.snapshot
        layouts = layout_cache(before)
        held = len(layouts)
        assert held > 0
        report = import_sheet(store, source="churn", fmt="rental_csv", body=_sheet(1), origin="test")
        assert report.result == "ok"
        after = store.snapshot
        assert after.generation > before.generation
        assert after.model_generation() == before.model_generation()
        assert layout_cache(after) is layouts and plan_cache(after) is plan_cache(before)
        plans.create(request)
        assert len(layouts) == held  # nothing searched again


def test_a_snapshot_with_other_model_inputs_starts_its_own_caches() -> None:
    with Store.open(":memory:") as store:
        plans = PlanService(store)
        plans.create(REQUESTS[2])
        older = store.snapshot
        for changed in (
            {"profiles": older.profiles[1:]},
            {"serving": older.serving[1:]},
            {"gpus": {k: v for k, v in older.gpus.items() if k != "h100-sxm"}},
        ):
            newer = msgspec.structs.replace(
                older, generation=older.generation + 1, built=type(older.built)(), **changed
            )
            newer.take_over(older)
            assert newer.model_generation() == newer.generation
            assert layout_cache(newer) is not layout_cache(older)
            assert plan_cache(newer) is not plan_cache(older)
