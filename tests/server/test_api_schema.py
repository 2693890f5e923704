"""schemathesis against the API's own OpenAPI document: generated requests (bounded) to every route of a real
server but the event stream, each answered without a 5xx and with a status, content type and body the document
declares."""

from __future__ import annotations

import schemathesis
from helpers.server import AUTH, running_server
from helpers.twoway import Env
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_the_api_keeps_its_document(env: Env) -> None:
    # Against a real server: an in-process transport would leave its event loop's thread behind, and a later
    # first import must fork with no thread but the main one.
    with running_server(env.config_path) as url:
        _check(schemathesis.openapi.from_url(f"{url}/openapi.json"), url)


def _check(schema: schemathesis.BaseSchema, url: str) -> None:
    tried = []
    for found in schema.get_all_operations():
        operation = found.ok()
        if operation.path == "/events":  # a stream that ends only when the client leaves
            continue
        tried.append(f"{operation.method.upper()} {operation.path}")

        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(base_url=url, headers=AUTH, checks=CHECKS)

        check()
    assert len(tried) == 19, tried  # 12, the 5 routes of the vault plugin, /context and /daily
