"""A GPU's rejection tells the truth: the closest configuration the planner tried on it, in the hours
and dollars a plan restricted to that GPU shows, and the limit that would admit it (issue 24)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]

PRETRAIN_8B = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "seq_len": 4096, "tokens": 100_000_000_000}


def _reasons(plan: dict[str, Any], reason: str) -> dict[str, str]:
    return {g["gpu"]: r["detail"] for g in plan["rejected"] for r in g["reasons"] if r["reason"] == reason}


def _number(pattern: str, detail: str) -> float:
    found = re.search(pattern, detail)
    assert found is not None, detail
    return float(found.group(1).replace(",", ""))


def test_every_deadline_rejection_quotes_the_hours_of_a_plan_restricted_to_that_gpu(client: Client) -> None:
    plan = client.post("/v1/plans", json={**PRETRAIN_8B, "constraints": {"deadline_hours": 150}}).json()
    late = _reasons(plan, "deadline")
    assert len(late) >= 4, plan["rejected"]
    for gpu, detail in sorted(late.items())[:4]:
        fastest = {**PRETRAIN_8B, "objective": "time", "constraints": {"gpus": [gpu]}}
        restricted = client.post("/v1/plans", json=fastest).json()
        assert _number(r"needs ([\d,.]+) h", detail) == round(restricted["estimate"]["hours"], 1), detail
        assert f"{restricted['choice']['gpu_count']} GPU(s)" in detail
        assert "a deadline of" in detail and "max_gpus" in detail


def test_every_budget_rejection_quotes_the_cheapest_configuration_tried(client: Client) -> None:
    plan = client.post("/v1/plans", json={**PRETRAIN_8B, "constraints": {"budget_usd": 9000}}).json()
    dear = _reasons(plan, "budget")
    assert dear, plan["rejected"]
    for gpu, detail in sorted(dear.items())[:3]:
        cheapest = client.post("/v1/plans", json={**PRETRAIN_8B, "constraints": {"gpus": [gpu]}}).json()
        assert _number(r"costs \$([\d,.]+)", detail) == round(cheapest["cost"]["total_usd"], 2), detail
        assert "a budget of $" in detail
