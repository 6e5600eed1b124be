"""POST /v1/plans (job plans) end to end: warnings with stable codes, the bands around hours and cost,
the scaling and checkpointing the plan chose, agreement with the estimate endpoints, and the network
between the chosen instances."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from litestar.testing import TestClient

from solver.optimise.warnings import LONG_RUN_DAYS, WarningCode

Client = TestClient[Any]

CODES = set(typing.get_args(WarningCode))
LEVELS = ("none", "selective", "full")
PLAN_ONLY = ("tokens", "samples", "epochs", "constraints", "objective", "acquisition", "top_k")

LORA_8B = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 8B"},
    "method": "lora",
    "micro_batch": 4,
    "seq_len": 2048,
    "tokens": 2_000_000_000,
}
FULL_70B_ON_H100 = {
    "kind": "fine_tune",
    "model": {"name": "Llama 3.1 70B"},
    "method": "full",
    "micro_batch": 1,
    "seq_len": 2048,
    "tokens": 200_000_000,
    "constraints": {"gpus": ["H100"], "deadline_hours": 48},
}
PLANS = {
    "lora_8b": LORA_8B,
    "lora_8b_one_gpu": LORA_8B | {"constraints": {"max_gpus": 1}},
    # without headroom the planner may take a layout whose memory band runs past the card
    "lora_8b_at_the_edge": LORA_8B | {"constraints": {"memory_headroom": 0}},
    # GCP's A2 (A100) machines are linked by gVNIC ethernet only: an 8-hour deadline needs several of them
    # (Lambda's on-demand instances, used here before issue 24, document no network between them at all)
    "lora_8b_ethernet_fast": LORA_8B
    | {"constraints": {"providers": ["gcp"], "gpus": ["A100"], "deadline_hours": 8}},
    "full_70b_h100": FULL_70B_ON_H100,
    "pretrain_1b": {
        "kind": "train",
        "model": {"name": "Llama 3.2 1B"},
        "micro_batch": 8,
        "seq_len": 2048,
        "tokens": 50_000_000_000,
        "constraints": {"deadline_hours": 72},
    },
    "pretrain_1b_long": {
        "kind": "train",
        "model": {"name": "Llama 3.2 1B"},
        "micro_batch": 8,
        "seq_len": 2048,
        "tokens": 500_000_000_000,
        "constraints": {"max_gpus": 8},
    },
}


def create(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    assert plan["plan_type"] == "job"
    return plan


def workload_of(body: dict[str, Any], choice: dict[str, Any]) -> dict[str, Any]:
    """The plan request's job in the chosen layout, as a body for the estimate endpoints."""
    job = {k: v for k, v in body.items() if k not in PLAN_ONLY}
    layout = choice["layout"]
    return job | {
        "gpu": choice["gpu"],
        "gpu_count": choice["gpu_count"],
        "tp": layout["tp"],
        "pp": layout["pp"],
        "vpp": layout["vpp"],
        "cp": layout["cp"],
        "sharding": layout["zero"],
        "micro_batch": layout["micro_batch"],
        "gradient_accumulation_steps": layout["gradient_accumulation"],
        "global_batch_tokens": layout["global_batch_tokens"],
        "recompute": layout["recompute"],
    }


@pytest.fixture(scope="module")
def plans(client: Client) -> dict[str, dict[str, Any]]:
    return {name: create(client, body) for name, body in PLANS.items()}


@pytest.fixture(scope="module")
def offers_by_id(client: Client) -> dict[str, dict[str, Any]]:
    items = client.get("/v1/offers", params={"limit": 1000}).json()["items"]
    return {o["offer_id"]: o for o in items}


@pytest.mark.parametrize("name", PLANS)
def test_warnings_are_coded_and_each_code_matches_the_plan(
    plans: dict[str, dict[str, Any]], offers_by_id: dict[str, dict[str, Any]], name: str
) -> None:
    plan = plans[name]
    warnings = plan["warnings"]
    assert isinstance(warnings, list)
    for warning in warnings:
        assert set(warning) == {"code", "message"} and warning["code"] in CODES and warning["message"]
    codes = [w["code"] for w in warnings]
    assert len(codes) == len(set(codes)), "one warning per reason"
    choice, estimate = plan["choice"], plan["estimate"]
    memory, throughput = estimate["memory"], estimate["throughput"]
    network = offers_by_id[choice["offer"]["offer_id"]]["network"]
    expected = {
        "memory_band_exceeds_capacity": memory["band"]["high_gib"] > memory["capacity_gib"],
        "long_run": estimate["hours"] > LONG_RUN_DAYS * 24,
        "low_confidence_throughput": throughput["confidence"] == "low",
        "multi_instance_ethernet": PLANS[name]["kind"] in ("train", "fine_tune")
        and choice["instances"] > 1
        and network["class"] == "ethernet"
        and choice["gpu_count"] > choice["tp"],
        "low_confidence_capacity": False,  # serving fleets only
        "price_sheet_stale": bool(plan["price_sheet"]["warnings"]),
        # these plans ask nothing of the host: only host memory for offloaded state can be unknown
        "host_unknown": memory["host_ram_gib"] > 0
        and offers_by_id[choice["offer"]["offer_id"]]["host_memory_gib"] is None,
        "deadline_at_risk": estimate["deadline_probability"] is not None
        and estimate["deadline_probability"] < 0.9,
        "country_unknown": False,  # these plans name no constraints.countries
        "availability_cap": False,  # the shipped sheets publish no available_instances
    }
    assert 0 < estimate["goodput"] <= 1
    assert estimate["goodput"] == pytest.approx(estimate["compute_hours"] / estimate["hours"])
    assert set(expected) == CODES
    assert {code for code, raised in expected.items() if raised} == set(codes)
    stale = [w["message"] for w in warnings if w["code"] == "price_sheet_stale"]
    assert stale == plan["price_sheet"]["warnings"]


def test_the_plans_above_raise_several_different_codes(plans: dict[str, dict[str, Any]]) -> None:
    raised = {w["code"] for plan in plans.values() for w in plan["warnings"]}
    assert {"memory_band_exceeds_capacity", "long_run", "multi_instance_ethernet"} <= raised


@pytest.mark.parametrize("name", PLANS)
def test_bands_bracket_hours_and_cost(plans: dict[str, dict[str, Any]], name: str) -> None:
    plan = plans[name]
    estimate, cost = plan["estimate"], plan["cost"]
    assert 0 < estimate["hours_band"]["low"] <= estimate["hours"] <= estimate["hours_band"]["high"]
    assert estimate["hours_band"]["low"] < estimate["hours_band"]["high"]
    assert 0 < cost["total_usd_band"]["low"] <= cost["total_usd"] <= cost["total_usd_band"]["high"]
    # the throughput band is what the hours band inverts: the faster end finishes first
    band = estimate["throughput"]["band"]
    assert band["low"] <= estimate["throughput"]["value"] <= band["high"]
    assert estimate["compute_hours"] == pytest.approx(
        estimate["work"] / estimate["throughput"]["value"] / 3600
    )
    # ... then setup and checkpoints are added at both ends, interruptions at the high end
    reliability = estimate["reliability"]
    compute_low, compute_high = estimate["work"] / band["high"] / 3600, estimate["work"] / band["low"] / 3600
    overhead = reliability["setup_hours"] + reliability["checkpoint_hours"]
    assert compute_low + reliability["setup_hours"] <= estimate["hours_band"]["low"] <= compute_low + overhead
    assert estimate["hours_band"]["high"] >= compute_high + overhead + reliability["lost_hours"]


@pytest.mark.parametrize("name", PLANS)
def test_scaling_and_checkpointing_of_the_choice(plans: dict[str, dict[str, Any]], name: str) -> None:
    plan = plans[name]
    choice, scaling = plan["choice"], plan["estimate"]["scaling"]
    assert choice["recompute"] in LEVELS
    assert plan["estimate"]["throughput"]["workload_class"] and plan["estimate"]["throughput"]["stack"]
    if choice["gpu_count"] == 1:
        assert scaling is None
    else:
        assert 0 < scaling["efficiency"] <= 1 and 0 <= scaling["communication_fraction"] < 1
        assert scaling["bottleneck"] in ("none", "intra_instance", "inter_instance", "pipeline_bubble")
        assert scaling["method"]
        layout = choice["layout"]
        assert layout["tp"] * layout["pp"] * layout["cp"] * layout["dp"] == choice["gpu_count"]
        assert (layout["tp"], layout["zero"], layout["recompute"]) == (
            choice["tp"], choice["sharding"], choice["recompute"]
        )  # fmt: skip


@pytest.mark.parametrize("name", PLANS)
def test_chosen_configuration_agrees_with_the_estimate_endpoints(
    client: Client, plans: dict[str, dict[str, Any]], offers_by_id: dict[str, dict[str, Any]], name: str
) -> None:
    plan = plans[name]
    choice, estimate = plan["choice"], plan["estimate"]
    offer = offers_by_id[choice["offer"]["offer_id"]]
    assert choice["instances"] * offer["gpus_per_instance"] >= choice["gpu_count"]
    job = workload_of(PLANS[name], choice)
    memory = client.post("/v1/memory", json=job).json()
    assert memory["per_gpu_gib"] == pytest.approx(estimate["memory"]["per_gpu_gib"])
    assert memory["per_gpu_gib"] <= estimate["memory"]["capacity_gib"]
    network = {"class": offer["network"]["class"], "gbps": offer["network"]["gbps"]}
    rate = client.post(
        "/v1/throughput",
        json=job
        | {
            "gpus_per_instance": offer["gpus_per_instance"],
            "interconnect": offer["interconnect"],
            "network": network,
        },
    ).json()
    throughput = estimate["throughput"]
    assert rate["value"] == pytest.approx(throughput["value"])
    for field in ("unit", "route", "workload_class", "stack", "band", "efficiency"):
        assert rate[field] == throughput[field], field
    assert rate["scaling"] == estimate["scaling"]


@pytest.mark.parametrize("level", LEVELS)
def test_stated_recompute_is_what_the_plan_uses(client: Client, level: str) -> None:
    plan = create(client, LORA_8B | {"recompute": level})
    assert plan["choice"]["recompute"] == level


def test_left_out_recompute_is_chosen_as_the_cheapest_level(
    client: Client, plans: dict[str, dict[str, Any]]
) -> None:
    auto = plans["lora_8b"]
    stated = {level: create(client, LORA_8B | {"recompute": level}) for level in LEVELS}
    cheapest = min(p["cost"]["total_usd"] for p in stated.values())
    assert auto["cost"]["total_usd"] == pytest.approx(cheapest)
    chosen = auto["choice"]["recompute"]
    assert stated[chosen]["cost"]["total_usd"] == pytest.approx(auto["cost"]["total_usd"])


def test_full_70b_fine_tune_over_a_thin_network_keeps_data_parallel_traffic_inside_instances(
    plans: dict[str, dict[str, Any]], offers_by_id: dict[str, dict[str, Any]]
) -> None:
    """A 70B full fine-tune needs several nodes; over ethernet the layout search pipelines across
    them (point-to-point activations only) and keeps every gradient all-reduce inside an instance."""
    plan = plans["full_70b_h100"]
    choice = plan["choice"]
    assert choice["gpu"].startswith("h100") and choice["instances"] > 1, "70B full needs more than one node"
    offer = offers_by_id[choice["offer"]["offer_id"]]
    if offer["network"]["class"] in ("ethernet", "none"):
        layout = choice["layout"]
        assert layout["pp"] > 1
        assert layout["tp"] * layout["cp"] * layout["dp"] <= offer["gpus_per_instance"]


def test_multi_instance_choice_over_ethernet_carries_the_warning(
    plans: dict[str, dict[str, Any]], offers_by_id: dict[str, dict[str, Any]]
) -> None:
    plan = plans["lora_8b_ethernet_fast"]
    choice = plan["choice"]
    assert choice["instances"] > 1
    network = offers_by_id[choice["offer"]["offer_id"]]["network"]
    assert network["class"] == "ethernet"
    warning = next(w for w in plan["warnings"] if w["code"] == "multi_instance_ethernet")
    assert str(choice["instances"]) in warning["message"] and "ethernet" in warning["message"]


# A batch-inference job runs independent replicas: its instances never talk to each other.
FAST_BATCH_INFERENCE = {
    "kind": "batch_inference",
    "model": {"name": "Llama 3.1 8B"},
    "seq_len": 2048,
    "tokens": 2_000_000_000,
    "constraints": {"deadline_hours": 2},
}


@pytest.fixture(scope="module")
def batch_plan(client: Client) -> dict[str, Any]:
    return create(client, FAST_BATCH_INFERENCE)


def test_fast_batch_inference_runs_independent_replicas_even_without_a_network(
    batch_plan: dict[str, Any], offers_by_id: dict[str, dict[str, Any]]
) -> None:
    """Replicas never talk to each other, so separate rentals with no network between them (network
    ``none``, every marketplace offer since issue 24) may serve a batch job that training could not."""
    choice = batch_plan["choice"]
    assert choice["instances"] > 1 and choice["gpu_count"] > choice["tp"]
    assert offers_by_id[choice["offer"]["offer_id"]]["network"]["class"] in {"none", "ethernet"}
    assert batch_plan["estimate"]["scaling"] is None, "no gradient synchronisation, no scaling loss"
    assert "independent replicas" in batch_plan["estimate"]["throughput"]["method"]


def test_batch_inference_replicas_do_not_warn_about_training_over_ethernet(
    batch_plan: dict[str, Any],
) -> None:
    assert "multi_instance_ethernet" not in {w["code"] for w in batch_plan["warnings"]}
