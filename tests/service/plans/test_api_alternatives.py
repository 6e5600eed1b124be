"""A plan's alternatives say what each is and what made it lose (issue 25): the GPU's name, $/h, layout
and peak memory, ``lost_on`` (the objective, the deadline's risk, memory headroom, a limit or a tie) and
a reason whose numbers differ as printed (never "175.8 h vs 175.8 h")."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]
LORA = {"model": {"name": "Llama 3.1 8B"}, "kind": "fine_tune", "method": "lora", "tokens": 2_000_000_000,
        "seq_len": 2048, "batch_size": 4}  # fmt: skip
PAIR = re.compile(r"(\$?[\d,]+\.?\d* ?h?%?) vs (\$?[\d,]+\.?\d* ?h?%?)")


def _alternatives(client: Client, **extra: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    plan = client.post("/v1/plans", json={**LORA, **extra}).json()
    assert plan["alternatives"], plan
    return plan, plan["alternatives"]


def test_each_alternative_names_its_gpu_price_layout_and_memory(client: Client) -> None:
    _, alternatives = _alternatives(client, top_k=10)
    for a in alternatives:
        assert a["gpu_name"] and a["gpu_name"] != a["gpu"]
        assert a["usd_per_hour"] > 0 and a["tp"] >= 1 and a["layout"]["dp"] >= 1
        assert 0 < a["memory_gib"] < a["memory_capacity_gib"]
        assert all(left != right for left, right in PAIR.findall(a["why"])), a["why"]


def test_on_cost_each_loses_on_cost_and_says_by_how_much(client: Client) -> None:
    plan, alternatives = _alternatives(client, top_k=10)
    for a in alternatives:
        assert a["lost_on"] == "cost" and a["cost_usd"] > plan["cost"]["total_usd"]
        assert a["why"].startswith(f"costs more: ${a['cost_usd']:,.2f} vs ${plan['cost']['total_usd']:,.2f}")
        assert ("finishes sooner" in a["why"]) == (a["hours"] < plan["estimate"]["hours"])


def test_on_time_each_loses_on_time(client: Client) -> None:
    plan, alternatives = _alternatives(client, objective="time")
    for a in alternatives:
        assert a["lost_on"] == "time" and a["hours"] >= plan["estimate"]["hours"]
        assert a["why"].startswith("slower: ") and ("though cheaper" in a["why"]) == (
            a["cost_usd"] < plan["cost"]["total_usd"]
        )


def test_with_a_deadline_each_reason_gives_both_chances_of_meeting_it(client: Client) -> None:
    """A deadline just past the cheapest plan's hours: the cheaper choice is the riskier one."""
    plan, alternatives = _alternatives(client, constraints={"deadline_hours": 85})
    chance = plan["estimate"]["deadline_probability"]
    assert chance is not None
    noted = [a for a in alternatives if "finishes by the deadline with" in a["why"]]
    assert noted, "the alternatives' chances differ from the choice's"
    for a in noted:
        assert a["why"].endswith(f"chance vs {chance:.0%}")


def test_a_limit_that_rules_gpus_out_gives_the_value_that_would_admit_one(client: Client) -> None:
    """The 422 of a workload no GPU finishes in an hour: each deadline rejection carries ``admit_at``,
    and a plan with the least of them is feasible."""
    refused = client.post("/v1/plans", json={**LORA, "constraints": {"deadline_hours": 1}})
    assert refused.status_code == 422
    admits = [
        r["admit_at"] for g in refused.json()["rejected"] for r in g["reasons"] if r["reason"] == "deadline"
    ]
    assert admits and all(a is not None and a > 1 for a in admits)
    least = min(admits)
    assert (
        client.post("/v1/plans", json={**LORA, "constraints": {"deadline_hours": least}}).status_code == 201
    )
    tight = client.post("/v1/plans", json={**LORA, "constraints": {"budget_usd": 5}})
    budgets = [
        r["admit_at"] for g in tight.json()["rejected"] for r in g["reasons"] if r["reason"] == "budget"
    ]
    assert (
        budgets
        and client.post("/v1/plans", json={**LORA, "constraints": {"budget_usd": min(budgets)}}).status_code
        == 201
    )
