"""POST /v1/plans/{plan_id}/benchmarks through the API: a training plan and a serving fleet on the
shipped catalog, what changes once a measurement is uploaded, and the 404/400 cases."""

from __future__ import annotations

import math
import re
import shlex
import tomllib
from typing import Any

import pytest
from litestar.testing import TestClient

from service.benchmarks.fleets import MIN_PROMPTS, WARMUPS
from service.benchmarks.jobs import MEASURE_STEPS, MIN_MEASURE_S, WARMUP_STEPS
from tests.service.admin import AUTH
from tests.service.plans.test_api_serving_plans import MIX, SERVING

Client = TestClient[Any]

TRAIN = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "tokens": 20_000_000_000}


def _shortlist(client: Client, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    created = client.post("/v1/plans", json=body)
    assert created.status_code == 201, created.text
    plan = created.json()
    response = client.post(f"/v1/plans/{plan['plan_id']}/benchmarks")
    assert response.status_code == 200, response.text
    return plan, response.json()


@pytest.fixture(scope="module")
def training(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    return _shortlist(client, TRAIN)


@pytest.fixture(scope="module")
def serving(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    return _shortlist(client, SERVING)


def _overlaps(band: dict[str, float], chosen: dict[str, float]) -> bool:
    return band["low_usd"] <= chosen["high_usd"] and band["high_usd"] >= chosen["low_usd"]


def _check_ranking(answer: dict[str, Any]) -> None:
    candidates = answer["candidates"]
    assert candidates, "the shipped catalog has configurations close to the chosen one"
    assert [c["rank"] for c in candidates] == list(range(1, len(candidates) + 1))
    values = [c["net_value_usd"] for c in candidates]
    assert values == sorted(values, reverse=True)
    for c in candidates:
        assert _overlaps(c["cost"], answer["chosen_cost"]), c["gpu"]
        assert c["net_value_usd"] == pytest.approx(c["expected_saving_usd"] - c["benchmark_cost_usd"])
        assert c["worth_it"] == (c["net_value_usd"] > 0)
        recipe = c["recipe"]
        assert recipe["cost_usd"] == pytest.approx(sum(recipe["breakdown"].values()))
        assert recipe["breakdown"]["setup_usd"] > 0  # the instance start and the weights are paid for
        assert recipe["cost_usd"] == c["benchmark_cost_usd"]


def test_a_training_plan_lists_configurations_that_could_win_with_a_torchtitan_recipe(
    training: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    plan, answer = training
    assert answer["plan_type"] == "job" and answer["plan_id"] == plan["plan_id"]
    assert answer["chosen_cost"]["expected_usd"] == pytest.approx(plan["cost"]["total_usd"])
    assert answer["chosen_cost"]["low_usd"] == pytest.approx(plan["cost"]["total_usd_band"]["low"])
    assert answer["chosen_cost"]["high_usd"] == pytest.approx(plan["cost"]["total_usd_band"]["high"])
    _check_ranking(answer)
    chosen = (plan["choice"]["gpu"], plan["choice"]["gpu_count"])
    for c in answer["candidates"]:
        assert (c["gpu"], c["gpu_count"]) != chosen
        recipe, layout = c["recipe"], c["layout"]
        config = tomllib.loads(recipe["config"])
        assert config["parallelism"]["tensor_parallel_degree"] == layout["tp"]
        assert config["parallelism"]["pipeline_parallel_degree"] == layout["pp"]
        assert (
            config["training"]["global_batch_size"] * config["training"]["seq_len"]
            == layout["global_batch_tokens"]
        )
        assert config["training"]["steps"] >= WARMUP_STEPS + MEASURE_STEPS
        assert config["metrics"]["log_freq"] == 1
        assert recipe["measure_minutes"] >= MIN_MEASURE_S / 60
        per_node = c["gpu_count"] // recipe["instances"]
        assert any(f"--nproc_per_node={per_node}" in line for line in recipe["commands"])
        assert any(f"--job.config_file {recipe['config_file']}" in line for line in recipe["commands"])


def _bench_lines(commands: list[str]) -> list[dict[str, str]]:
    lines = []
    for line in commands:
        if line.startswith("vllm bench serve"):
            words = shlex.split(line)
            flags = {
                w: words[i + 1] for i, w in enumerate(words) if w.startswith("--") and i + 1 < len(words)
            }
            lines.append(flags)
    return lines


def test_a_fleet_lists_replica_types_with_a_vllm_bench_line_per_request_size(
    serving: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    plan, answer = serving
    assert answer["plan_type"] == "serving"
    assert answer["chosen_cost"]["expected_usd"] == pytest.approx(plan["cost"]["total_usd"])
    _check_ranking(answer)
    chosen = {(r["gpu"], r["tp"], r["precision"]) for r in plan["choice"]["replicas"]}
    for c in answer["candidates"]:
        assert (c["gpu"], c["tp"], c["precision"]) not in chosen
        commands = c["recipe"]["commands"]
        assert commands[0].startswith(f"vllm serve meta-llama/Llama-2-7b-hf --tensor-parallel-size {c['tp']}")
        lines = _bench_lines(commands)
        assert [(int(x["--random-input-len"]), int(x["--random-output-len"])) for x in lines] == [
            (m["input_tokens"], m["output_tokens"]) for m in MIX
        ]
        for x in lines:
            rate = float(x["--request-rate"])
            assert rate > 0
            assert int(x["--num-prompts"]) >= max(MIN_PROMPTS, math.floor(rate * 180 * 0.999))
            assert int(x["--num-warmups"]) == WARMUPS
            assert x["--dataset-name"] == "random"


def test_an_unchanged_catalog_changes_no_recommendation(
    training: tuple[dict[str, Any], dict[str, Any]], serving: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    for plan, answer in (training, serving):
        changes = answer["changes"]
        assert changes["changed"] is False and changes["differences"] == []
        assert changes["stored"] == changes["now"] == answer["chosen"]
        assert changes["price_sheets_then"] == [v["version"] for v in plan["price_sheet"]["versions"]]


def test_a_measured_replica_type_changes_the_recommendation(admin: Client) -> None:
    """The top candidate is benchmarked and found three times the capacity the engine model derives
    (a hypothetical result, uploaded as the operator's serving profile rows would be): planning the
    stored request again now picks it, on measured capacity, and the endpoint says so."""
    plan, answer = _shortlist(admin, SERVING)
    top = answer["candidates"][0]
    rows = [
        f"Llama-2-7b,{top['gpu']},{top['tp']},{m['input_tokens'] - 1},{m['input_tokens']},"
        f"{m['output_tokens'] - 1},{m['output_tokens']},{3 * float(x['--request-rate']) / plan['max_utilization']:.4f},,"
        "gpuplan benchmark"
        for m, x in zip(MIX, _bench_lines(top["recipe"]["commands"]), strict=True)
    ]
    sheet = "model,gpu,tp,input_len_lo_excl,input_len_hi_incl,output_len_lo_excl,output_len_hi_incl,max_requests_per_s,slo,source\n"
    uploaded = admin.post(
        "/v1/profiles",
        params={"source": "bench"},
        content=(sheet + "\n".join(rows) + "\n").encode(),
        headers=AUTH,
    )
    assert uploaded.status_code == 201, uploaded.text
    again = admin.post(f"/v1/plans/{plan['plan_id']}/benchmarks").json()
    changes = again["changes"]
    assert changes["changed"] is True
    assert top["gpu_name"] in changes["now"]["summary"]
    assert any("measured" in p for p in changes["now"]["provenance"])
    assert changes["cost_change_usd"] < 0
    assert any(d.startswith("choice: ") for d in changes["differences"])
    assert admin.get(f"/v1/plans/{plan['plan_id']}").json() == plan  # the stored plan is kept as it was


def test_an_unknown_plan_is_404(client: Client) -> None:
    response = client.post("/v1/plans/pl-0000000000000000/benchmarks")
    assert response.status_code == 404
    assert re.search("no plan", response.json()["detail"])


def test_a_body_is_refused_naming_it(client: Client, training: tuple[dict[str, Any], dict[str, Any]]) -> None:
    plan, _ = training
    response = client.post(f"/v1/plans/{plan['plan_id']}/benchmarks", params={"top": 3})
    assert response.status_code == 400
    assert "top" in response.text


def test_a_batch_inference_plan_benchmarks_with_vllm_bench_throughput(client: Client) -> None:
    """Batch inference has no training step: each candidate runs one engine of its tensor-parallel
    degree on prompts of the plan's sizes; the plan cannot be launched (no layout), a 422 naming it."""
    body = {
        "kind": "batch_inference",
        "model": {"name": "Llama 3.1 8B"},
        "samples": 1_000_000,
        "seq_len": 1024,
        "output_len": 256,
    }
    plan, answer = _shortlist(client, body)
    _check_ranking(answer)
    for c in answer["candidates"]:
        install, line = c["recipe"]["commands"]
        assert install == "pip install vllm"
        words = shlex.split(line)
        assert words[:3] == ["vllm", "bench", "throughput"]
        flags = {w: words[i + 1] for i, w in enumerate(words) if w.startswith("--") and i + 1 < len(words)}
        assert (flags["--input-len"], flags["--output-len"]) == ("768", "256")
        assert flags["--tensor-parallel-size"] == str(c["tp"])
        assert int(flags["--num-prompts"]) >= 200
    launch = client.get(f"/v1/plans/{plan['plan_id']}/launch", params={"format": "kubernetes"})
    assert launch.status_code == 422 and launch.json()["field"] == "plan_id"
