"""The serving form (issue 25): besides its rate, mix, SLO and fleet rules it takes the serving
request's precision, quantisation, limits, places, host and software as the plan form does, and shows
the API's message beside the field it names."""

from __future__ import annotations

import re
from typing import Any

import msgspec.inspect as mi
from litestar.testing import TestClient

from service.web.plan_fields import SERVING_FORM_FIELDS
from service.web.serving_query import serving_request_of
from solver import PLAN_REQUEST_KINDS
from tests.service.web.test_plan_form import _paths

Client = TestClient[Any]
FLEET = {"model": "Llama-2-7b", "requests_per_s": "5", "in_0": "100", "out_0": "100", "share_0": "1"}
OWN_FIELDS = {("requests_per_s",), ("hours",), ("acquisition",), ("max_utilization",), ("min_replicas",),
              ("mix_threshold",), ("survive_instance_loss",), ("slo", "ttft_ms"), ("slo", "tpot_ms"),
              ("constraints", "max_gpus"), ("request_mix",), ("model", "name")}  # fmt: skip
"""The serving page's own inputs (serving_query.py)."""
JOB_ONLY = {("method",), ("lora_rank",), ("lora_targets",), ("lora_dropout",), ("optimizer",),
            ("optimizer_in_backward",), ("master_weights",), ("offload",), ("attention",), ("recompute",),
            ("gradient_accumulation_steps",), ("batch_size",), ("micro_batch",), ("global_batch_tokens",),
            ("seq_len",), ("objective",), ("top_k",), ("constraints", "deadline_hours"),
            ("constraints", "budget_usd")}  # fmt: skip
"""Training and job fields a serving request also carries, which the serving page leaves at their defaults."""


def test_every_serving_field_but_the_job_ones_has_a_form_field() -> None:
    serving = next(k for k in PLAN_REQUEST_KINDS if k.__struct_config__.tag == "serving")
    info = mi.type_info(serving)
    assert isinstance(info, mi.StructType)
    shown = OWN_FIELDS | {f.path for f in SERVING_FORM_FIELDS}
    missing = [p for p in _paths(info) if p not in shown and p not in JOB_ONLY and p[0] != "request_mix"]
    assert missing == []


def test_the_serving_form_builds_the_request_the_api_takes() -> None:
    request = serving_request_of({**FLEET, "precision": "fp16", "quantisation": "fp8, int4", "providers": "lambda",
                                  "percentile": "90", "ttft_ms": "500", "mig": "on", "gpus": "A100 80GB SXM"})  # fmt: skip
    assert request.precision == "fp16" and request.quantisation == ["fp8", "int4"]  # type: ignore[union-attr]
    assert request.constraints.providers == ["lambda"] and request.constraints.mig
    assert request.slo is not None and request.slo.percentile == 90 and request.slo.ttft_ms == 500  # type: ignore[union-attr]


def test_the_serving_page_shows_the_apis_message_beside_its_field(client: Client) -> None:
    page = client.get("/serving", params={**FLEET, "countries": "USA"}).text
    found = re.search(r'class="field-error" id="error-(\w+)">([^<]*)<', page)
    assert found is not None and found.group(1) == "countries"
    assert '<details id="group-where" open>' in page  # the section holding it opens
    chosen = client.get("/serving", params={**FLEET, "providers": "lambda"}).text
    assert 'id="fleet-cost"' in chosen and "lambda" in chosen.split('id="fleet-why"')[1]


def test_the_best_single_type_is_named(client: Client) -> None:
    """A mixed fleet's comparison names the single type's GPU (before: its id, 'rtx-3090')."""
    body = {"kind": "serving", "model": {"name": "Llama-2-7b"}, "requests_per_s": 20,
            "request_mix": [{"input_tokens": 20, "output_tokens": 20, "share": 0.5},
                            {"input_tokens": 800, "output_tokens": 1500, "share": 0.5}]}  # fmt: skip
    plan = client.post("/v1/plans", json=body).json()
    single = plan["best_single_type"]
    assert single is not None and single["gpu_name"] and single["gpu_name"] != single["gpu"]
    page = client.get(f"/plans/{plan['plan_id']}").text
    assert plan["saving_vs_single_type"] is not None  # so the page compares with the single type
    assert f"{single['replicas']} × {single['gpu_name']} at" in page
