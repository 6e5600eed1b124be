"""Each kind of price is optimised on its own (issue 24, "every price kind"): the on-demand entry of
``pricing_options`` is the plan the same request gives with only on-demand prices."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

Client = TestClient[Any]

LONG = {
    "kind": "train",
    "model": {"name": "Llama 3.1 8B"},
    "micro_batch": 4,
    "seq_len": 4096,
    "tokens": 300_000_000_000,
    "constraints": {"gpus": ["H100 SXM"], "max_gpus": 64, "deadline_hours": 300},
}


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def _with(body: dict[str, Any], **constraints: object) -> dict[str, Any]:
    return {**body, "constraints": {**body["constraints"], **constraints}}


def test_the_on_demand_option_is_the_on_demand_only_plan(client: Client) -> None:
    """The README's long.json with spot allowed: before, the on-demand option shown was the best
    on-demand row of the seller whose spot rows won the pruning, not the on-demand optimum."""
    spot = _plan(client, _with(LONG, spot=True))
    on_demand_only = _plan(client, _with(LONG, spot=False))
    options = {option["pricing"]: option for option in spot["pricing_options"]}
    assert {"on_demand", "spot"} <= set(options)
    shown = options["on_demand"]
    best = on_demand_only
    assert shown["gpu_count"] == best["choice"]["gpu_count"]
    assert shown["provider"] == best["choice"]["offer"]["provider"]
    assert shown["total_usd"] == best["cost"]["total_usd"]
    assert shown["hours"] == best["estimate"]["hours"]
    chosen = [option for option in spot["pricing_options"] if option["chosen"]]
    assert len(chosen) == 1 and chosen[0]["total_usd"] == min(o["total_usd"] for o in options.values())
