"""Schemathesis over the whole OpenAPI schema: every operation, generated valid and invalid input.

Checks: no 500, documented status codes and content types, responses match their schemas, schema-valid
requests are accepted and schema-invalid ones rejected.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings

from service.app import create_app
from service.settings import Settings
from service.store import Store

schema = schemathesis.openapi.from_asgi(
    "/schema/openapi.json", create_app(Settings(db_path=":memory:"), store=Store.open(":memory:"))
)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms(case: schemathesis.Case) -> None:
    case.call_and_validate()
