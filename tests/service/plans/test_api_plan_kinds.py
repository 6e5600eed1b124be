"""POST /v1/plans takes a union tagged by ``kind``: each member has its own fields and checks, and the
OpenAPI document shows the union with its discriminator (issue 21)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.perf.workloads import PLAN_BODIES, SERVING_BODIES

Client = TestClient[Any]
JOB = next(b for b in PLAN_BODIES if b["kind"] == "train")
SERVING = SERVING_BODIES[0]


def test_the_document_shows_one_of_four_kinds_with_a_discriminator(client: Client) -> None:
    document = client.get("/schema/openapi.json").json()
    body = document["paths"]["/v1/plans"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/PlanRequest"}
    union = document["components"]["schemas"]["PlanRequest"]
    assert union["discriminator"]["propertyName"] == "kind"
    assert set(union["discriminator"]["mapping"]) == {"train", "fine_tune", "batch_inference", "serving"}
    assert len(union["oneOf"]) == 4
    serving = document["components"]["schemas"]["ServingPlan"]
    assert {"requests_per_s", "request_mix"} <= set(serving["required"])
    assert "tokens" not in serving["properties"]
    assert "requests_per_s" not in document["components"]["schemas"]["TrainPlan"]["properties"]
    assert "output_len" in document["components"]["schemas"]["BatchInferencePlan"]["properties"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**JOB, "requests_per_s": 5.0}, "requests_per_s"),  # a serving field on a training job
        ({**SERVING, "tokens": 10**9}, "tokens"),  # a job's work on a serving fleet
        ({**JOB, "output_len": 128}, "output_len"),  # only batch inference generates
        ({k: v for k, v in SERVING.items() if k != "requests_per_s"}, "requests_per_s"),
        ({**JOB, "kind": "pretrain"}, "kind"),
    ],
)
def test_a_field_of_another_kind_is_a_400_naming_it(client: Client, body: dict[str, Any], field: str) -> None:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field, response.text


def test_the_work_is_checked_by_its_kind(client: Client) -> None:
    no_work = {k: v for k, v in JOB.items() if k not in ("tokens", "samples")}
    response = client.post("/v1/plans", json=no_work)
    assert response.status_code == 400 and response.json()["field"] == "tokens", response.text
    both = {**JOB, "tokens": 10**9, "samples": 10**6}
    response = client.post("/v1/plans", json=both)
    assert response.status_code == 400 and response.json()["field"] == "tokens", response.text
