"""The plan form (issue 25): every job field the API takes has a form field, a request made through
the form is the one the API gets, the API's validation message stands beside the field it names, and
the alternatives, the infeasible page and the downloads say what the JSON knows."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from typing import Any

import msgspec.inspect as mi
from litestar.testing import TestClient

from service.web.plan_fields import PLAN_FORM_FIELDS
from service.web.plan_query import plan_request_of
from solver import PLAN_REQUEST_KINDS

Client = TestClient[Any]
LORA = {"model": "Llama 3.1 8B", "kind": "fine_tune", "method": "lora", "tokens": "2000000000",
        "seq_len": "2048", "batch_size": "4"}  # fmt: skip


def _paths(t: mi.StructType, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for field in t.fields:
        inner = field.type
        while isinstance(inner, (mi.Metadata, mi.UnionType)):
            if isinstance(inner, mi.Metadata):
                inner = inner.type
            else:
                inner = next((x for x in inner.types if isinstance(x, mi.StructType)), inner.types[0])
        path = (*prefix, field.name)
        nested = isinstance(inner, mi.StructType)
        found.extend(_paths(inner, path) if nested else [path])  # type: ignore[arg-type]
    return found


def test_every_field_of_a_job_plan_request_has_a_form_field() -> None:
    batch = next(k for k in PLAN_REQUEST_KINDS if k.__struct_config__.tag == "batch_inference")
    info = mi.type_info(batch)
    assert isinstance(info, mi.StructType)
    form = {f.path for f in PLAN_FORM_FIELDS}
    missing = [p for p in _paths(info) if p not in form]
    assert missing == [], "the form lacks these request fields"
    assert ("model", "name") in form and ("model", "params_b") in form  # a catalog name or a shape


def test_the_form_builds_the_request_the_api_takes() -> None:
    query = {**LORA, "precision": "bf16", "optimizer": "adamw_8bit", "recompute": "selective",
             "lora_rank": "16", "lora_targets": "q_proj, v_proj", "providers": "lambda, runpod",
             "countries": "US", "exclude_gpus": "H100 SXM", "interconnect": "nvlink", "spot": "on",
             "software_stack": "cuda", "requires": "flash_attention_2", "cpu_cores_per_gpu": "4",
             "dataset_gb": "12.5", "restart_minutes": "20", "memory_headroom": "0.2"}  # fmt: skip
    request = plan_request_of(query)
    limits = request.constraints
    assert request.optimizer == "adamw_8bit" and request.recompute == "selective" and request.lora_rank == 16
    assert request.lora_targets == ["q_proj", "v_proj"]
    assert limits.providers == ["lambda", "runpod"] and limits.countries == ["US"] and limits.spot
    assert limits.exclude_gpus == ["H100 SXM"] and limits.interconnect == "nvlink"
    assert limits.memory_headroom == 0.2
    assert request.software is not None and request.software.requires == ["flash_attention_2"]
    assert request.host is not None and request.host.cpu_cores_per_gpu == 4
    assert request.data is not None and request.data.dataset_gb == 12.5
    assert request.reliability is not None and request.reliability.restart_minutes == 20
    assert plan_request_of({**LORA, "lora_targets": "all_linear"}).lora_targets == "all_linear"


def _field_error(html: str) -> tuple[str, str]:
    found = re.search(r'class="field-error" id="error-(\w+)">([^<]*)<', html)
    assert found is not None, "a message beside a field"
    return found.group(1), found.group(2)


def test_the_apis_message_stands_beside_the_field_it_names(client: Client) -> None:
    """Before: QLoRA failed with 'precision: …', a field the form did not have."""
    page = client.get("/plan", params={**LORA, "method": "qlora"}).text
    assert _field_error(page) == ("precision", "qlora needs a 4-bit base (nf4 or int4), got bf16")
    assert 'id="precision" name="precision" aria-invalid="true" aria-describedby="error-precision"' in page
    assert _field_error(client.get("/plan", params={**LORA, "countries": "USA"}).text)[0] == "countries"
    assert _field_error(client.get("/plan", params={**LORA, "lora_rank": "0"}).text)[0] == "lora_rank"
    assert _field_error(client.get("/plan", params={**LORA, "cpu_cores_per_gpu": "-1"}).text)[0] == (
        "cpu_cores_per_gpu"
    )
    fixed = client.get("/plan", params={**LORA, "method": "qlora", "precision": "nf4"}).text
    assert 'class="field-error"' not in fixed and 'id="alternatives"' in fixed


def test_a_provider_chosen_in_the_form_is_the_one_planned(client: Client) -> None:
    page = client.get("/plan", params={**LORA, "providers": "lambda"}).text
    api = client.post("/v1/plans", json={"model": {"name": "Llama 3.1 8B"}, "kind": "fine_tune", "method": "lora",
                                         "tokens": 2_000_000_000, "seq_len": 2048, "batch_size": 4,
                                         "constraints": {"providers": ["lambda"]}}).json()  # fmt: skip
    assert api["choice"]["offer"]["provider"] == "lambda"
    assert f"from lambda {api['choice']['offer']['instance_type']}" in page


def _data(page: str, link: str) -> bytes:
    found = re.search(rf'id="{link}" download="[^"]+" href="data:[^;]+;base64,([^"]+)"', page)
    assert found is not None
    return base64.b64decode(found.group(1))


def test_alternatives_name_gpus_offers_prices_layouts_memory_and_what_lost(client: Client) -> None:
    page = client.get("/plan", params=LORA).text
    plan = json.loads(_data(page, "download-json"))  # the unsaved plan, as shown
    assert plan["alternatives"], "a plan with alternatives"
    table = page[page.index('id="alternatives"') :]
    for a in plan["alternatives"]:
        assert a["gpu_name"] and f'<th scope="row" class="key">{a["gpu_name"]}</th>' in table
        assert a["lost_on"] in ("cost", "time", "deadline_risk", "memory_headroom", "limits", "tie")
        assert f"${a['usd_per_hour']:,.2f}" in table and f"{a['memory_gib']:,.1f} GiB" in table
        assert a["layout"] is not None and f"tp {a['layout']['tp']}, pp {a['layout']['pp']}" in table
        for left, right in re.findall(r"([$\d.,]+ ?h?) vs ([$\d.,]+ ?h?)", a["why"]):
            assert left != right, a["why"]
    rows = list(csv.DictReader(io.StringIO(_data(page, "download-csv").decode())))
    assert [r["rank"] for r in rows] == ["0", *(str(a["rank"]) for a in plan["alternatives"])]
    assert rows[1]["gpu_name"] == plan["alternatives"][0]["gpu_name"] and rows[1]["lost_on"]


def test_the_pareto_chart_numbers_every_point_and_lists_it(client: Client) -> None:
    page = client.get("/plan", params=LORA).text
    plan = json.loads(_data(page, "download-json"))
    assert page.count('<g class="point"') == len(plan["pareto"])
    titles = re.findall(r'<g class="point" data-number="(\d+)"><title>([^<]+)</title>', page)
    assert sorted(int(n) for n, _ in titles) == list(range(1, len(plan["pareto"]) + 1))
    assert all(" × " in t and " h, $" in t for _, t in titles)  # name, count, hours and cost in the tooltip
    rows = page[page.index('id="pareto-points"') :].split("</table>")[0].count("<tr")
    assert rows == len(plan["pareto"]) + 1  # a row per point and the header
    stored = client.post("/plan", params=LORA, follow_redirects=False).headers["location"]
    svg = client.get(f"{stored}/pareto.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.startswith("<svg xmlns=") and svg.text.count('<g class="point"') == len(plan["pareto"])


def test_an_infeasible_plan_names_gpus_and_the_limit_to_relax(client: Client) -> None:
    page = client.get("/plan", params={**LORA, "deadline_hours": "1"}).text
    assert 'role="alert"' in page and 'id="relax"' in page
    relax = page[page.index('id="relax"') :].split("</ul>")[0]
    found = re.search(r"([\d,]+) hours would admit ([^—<]+?) —", relax)
    assert found is not None and "constraints.deadline_hours" in relax
    hours, gpu = int(found.group(1).replace(",", "")), found.group(2)
    link = re.search(r'class="relax-link" href="([^"]+)"', relax)
    assert link is not None and f"deadline_hours={hours}" in link.group(1)
    admitted = client.get(html.unescape(link.group(1))).text  # the link plans with that deadline
    assert 'id="choice"' in admitted and 'role="alert"' not in admitted
    rejected = page[page.index('id="rejected"') :]
    assert f'class="key">{gpu}</th>' in rejected and "h100-sxm" not in rejected  # names, not ids


def test_a_model_of_ones_own_shape_is_planned_from_the_form() -> None:
    """With the model name left empty, the architecture fields describe the model (as the API takes
    ``model.params_b``, ``model.layers`` …), and a missing one is named."""
    shape = {"model_params_b": "1.5", "model_layers": "24", "model_hidden_size": "2048",
             "model_intermediate_size": "5632", "model_attention_heads": "16", "model_kv_heads": "16",
             "model_vocab_size": "32000", "model_max_seq_len": "4096"}  # fmt: skip
    query = {"kind": "train", "tokens": "1000000000", "seq_len": "2048", **shape}
    request = plan_request_of(query)
    assert request.model.name is None and request.model.params_b == 1.5 and request.model.layers == 24


def test_owned_gpus_are_typed_as_gpu_count_and_cost() -> None:
    query = {**LORA, "owned_inventory": "H100 SXM:16:0.9, A100 80GB SXM:8"}
    owned = plan_request_of(query).owned_inventory
    assert [(o.gpu, o.count, o.usd_per_gpu_hour) for o in owned] == [
        ("H100 SXM", 16, 0.9),
        ("A100 80GB SXM", 8, None),
    ]
