"""A serving fleet's load, as a person reads it, never shows the solver's count slack above the limit."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from service.plans.fleets import LOAD_DIGITS
from solver.optimise.fleet import COUNT_TOLERANCE


def test_the_reported_precision_hides_the_solver_slack() -> None:
    for limit in (0.5, 0.8, 0.85, 0.9, 0.95, 1.0):
        assert round(limit * (1 + COUNT_TOLERANCE), LOAD_DIGITS) == limit


def test_fleet_loads_are_at_most_the_limit_as_written(client: TestClient[Any]) -> None:
    mix = [{"input_tokens": 200, "output_tokens": 200, "share": 1}]
    for rate in (0.85, 1.7, 3.4, 8.5, 17):
        body = {"kind": "serving", "model": {"name": "Llama-2-7b"}, "requests_per_s": rate, "hours": 10}
        plan = client.post("/v1/plans", json={**body, "request_mix": mix, "max_utilization": 0.85}).json()
        loads = [r["load"] for r in plan["choice"]["replicas"]]
        assert loads and all(0 < load <= 0.85 and load == round(load, LOAD_DIGITS) for load in loads), loads
