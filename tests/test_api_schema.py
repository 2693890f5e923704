"""schemathesis against the API's own OpenAPI document: generated requests (bounded) to every route but the
event stream, each answered without a 5xx and with a status, content type and body the document declares."""

from __future__ import annotations

import schemathesis
from helpers_server import AUTH, TOKEN
from helpers_twoway import Env
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from vaultsync.server.http import LOOPBACK, create_app

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_the_api_keeps_its_document(env: Env) -> None:
    app = create_app(env.cfg, TOKEN, LOOPBACK | {"testserver"})  # the test transport's own Host name
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    tried = []
    for found in schema.get_all_operations():
        operation = found.ok()
        if operation.path == "/events":  # a stream that ends only when the client leaves
            continue
        tried.append(f"{operation.method.upper()} {operation.path}")

        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=AUTH, checks=CHECKS)

        check()
    assert len(tried) == 10, tried
