"""Schemathesis over the whole OpenAPI schema: every operation, generated valid and invalid input.

Checks: no 500, documented status codes and content types, responses match their schemas, schema-valid
requests are accepted and schema-invalid ones rejected. One exception, stated here: workload bodies have
cross-field rules JSON Schema cannot express (``tp`` must divide ``gpu_count``, qlora needs a 4-bit
precision, ``seq_len`` within the model's context …), so a schema-valid body may still be a 400 — which
must then be a problem+json naming the field.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from service.app import create_app
from service.db.store import Store
from service.settings import Settings

schema = schemathesis.openapi.from_asgi(
    "/schema/openapi.json", create_app(Settings(db_path=":memory:"), store=Store.open(":memory:"))
)

_CROSS_FIELD_BODIES = {
    ("POST", "/v1/memory"),
    ("POST", "/v1/throughput"),
    ("POST", "/v1/buy-vs-rent"),
    ("POST", "/v1/plans"),
}


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms(case: schemathesis.Case) -> None:
    if (case.method.upper(), case.path) in _CROSS_FIELD_BODIES:
        response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
        if response.status_code == 400:
            problem = response.json()
            assert problem["field"] and problem["errors"], problem
    else:
        case.call_and_validate()
