"""``OptionPool`` (a workload's candidates grouped and ordered once, for every job of that workload) picks
the same options as grouping afresh per job: filter by the job's window, the Pareto front per group
(``pareto_front``, as the portfolio picked before the pool), the ``top_k`` cheapest at most ``per_group``
a group, plus the fastest. Checked on the shipped catalog's candidates for the README's workloads."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import msgspec
import pytest

from service.db.store import Store
from service.plans.pipeline import PlanService
from service.portfolios.inputs import owned_at_marginal
from solver import Candidate, JobOption, JobPlanRequest, OptionPool
from solver.optimise.planner import pareto_front
from solver.portfolio.options import _option, _span
from tests.service.portfolios.bodies import LORA_8B, PRETRAIN_1B


def _afresh(
    candidates: list[Candidate], rates: dict[str, float], window: float | None, top_k: int, per_group: int
) -> list[JobOption]:
    groups: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        if (c.supply.acquisition != "own" or c.supply.gpu_id in rates) and (
            window is None or _span(c) <= window
        ):
            groups[(c.supply.acquisition, c.supply.gpu_id, c.supply.provider or "")].append(c)
    ranked = sorted(
        ((key, _option(c)) for key, group in groups.items() for c in pareto_front(group)),
        key=lambda ko: (ko[1].cost_usd, ko[1].span_hours),
    )
    kept: list[JobOption] = []
    for key, option in ranked:
        if len(kept) < top_k and sum(1 for k, o in ranked if k == key and o in kept) < per_group:
            kept.append(option)
    fastest = min((o for _k, o in ranked), key=lambda o: (o.span_hours, o.cost_usd), default=None)
    return kept + ([fastest] if fastest is not None and fastest not in kept else [])


@pytest.mark.parametrize("body", [LORA_8B, PRETRAIN_1B], ids=["lora-8b", "pretrain-1b"])
def test_the_pool_picks_what_grouping_afresh_picks_for_every_window(body: dict[str, Any]) -> None:
    store = Store.open(":memory:")
    try:
        rates = {"h100-sxm": 0.2}
        plan = msgspec.convert(body, JobPlanRequest)
        _inputs, found = PlanService(store).job_candidates(plan, store.snapshot, owned_at_marginal(rates))
        pool = OptionPool(found.candidates, rates)
        spans = sorted(_span(c) for c in found.candidates)
        windows = [None, spans[0] - 1, spans[0], spans[len(spans) // 4], spans[len(spans) // 2], spans[-1]]
        for window in windows:
            for top_k, per_group in ((6, 2), (1, 1), (12, 3)):
                expected = _afresh(found.candidates, rates, window, top_k, per_group)
                assert pool.pick(max_span_hours=window, top_k=top_k, per_group=per_group) == expected
        assert pool.pick(max_span_hours=spans[0] - 1) == []
    finally:
        store.close()


def test_a_window_that_rules_out_a_faster_cheaper_candidate_lets_the_one_it_dominated_back() -> None:
    """Two candidates of one group: ``a`` beats ``b`` on expected hours and cost but reserves more hours
    (a wider 90 % band, as spot interruptions give); a window between the two keeps ``b``."""
    store = Store.open(":memory:")
    try:
        plan = msgspec.convert(PRETRAIN_1B, JobPlanRequest)
        _inputs, found = PlanService(store).job_candidates(plan, store.snapshot)
        real = found.candidates[0]

        def shaped(hours: float, span: float, cost: float) -> Candidate:
            charges = msgspec.structs.replace(real.charges, deadline_hours=span)
            return msgspec.structs.replace(real, hours=hours, cost_usd=cost, charges=charges)

        a, b = shaped(10.0, 30.0, 5.0), shaped(12.0, 14.0, 6.0)
        pool = OptionPool([a, b], {})
        assert [o.span_hours for o in pool.pick()] == [30.0]
        assert [o.span_hours for o in pool.pick(max_span_hours=20.0)] == [14.0]
        assert pool.pick(max_span_hours=20.0) == _afresh([a, b], {}, 20.0, 6, 2)
    finally:
        store.close()
