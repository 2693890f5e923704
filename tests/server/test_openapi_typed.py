"""The OpenAPI document as a client generator reads it: typed answers, stable operation ids, the error codes each
route can really give, the event stream as ``text/event-stream``, and ``Location`` on a 201."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers.server import AUTH, TOKEN
from helpers.twoway import SARAH, Env

from vaultsync.server.http import create_app

OPERATIONS = {
    ("get", "/health"): "health",
    ("get", "/status"): "get_status",
    ("post", "/sync"): "sync_now",
    ("get", "/events"): "events_stream",
    ("get", "/entities"): "list_entities",
    ("get", "/entities/{entity}"): "get_entity",
    ("get", "/facts/{fact_id}"): "get_fact",
    ("post", "/facts"): "remember",
    ("post", "/facts/{fact_id}/supersede"): "supersede",
    ("delete", "/facts/{fact_id}"): "forget",
    ("patch", "/facts/{fact_id}"): "patch_fact",
    ("get", "/recall"): "recall",
    ("get", "/history"): "get_history",
}
MODELS = {
    "get_status": "Status",
    "sync_now": "Report",
    "list_entities": "EntityList",
    "get_entity": "Entity",
    "get_fact": "Fact",
    "remember": "Written",
    "supersede": "Written",
    "forget": "Written",
    "patch_fact": "Written",
    "recall": "HitList",
    "get_history": "History",
}
ERRORS = {
    "health": set(),
    "get_status": {"401"},
    "sync_now": {"401", "409", "422"},  # 422: an Idempotency-Key that is not one, or sent with another request
    "events_stream": {"401", "422"},
    "list_entities": {"401"},
    "get_entity": {"401", "404", "409", "422"},
    "get_fact": {"401", "404", "409", "422"},
    "remember": {"401", "404", "409", "413", "422", "503"},
    "supersede": {"401", "404", "409", "412", "413", "422", "503"},
    "forget": {"401", "404", "409", "412", "422", "503"},
    "patch_fact": {"401", "404", "409", "412", "413", "422", "503"},
    "recall": {"401", "422"},
    "get_history": {"401", "404", "409", "422"},
}


@pytest.fixture
def doc(env: Env) -> dict[str, Any]:
    client = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")
    return dict(client.get("/openapi.json").json())


def _operations(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every operation by its operationId."""
    return {op["operationId"]: op for methods in doc["paths"].values() for op in methods.values()}


def test_operation_ids_are_stable_names(doc: dict[str, Any]) -> None:
    ids = {
        (method, path.replace("{entity:path}", "{entity}")): op["operationId"]
        for path, methods in doc["paths"].items()
        for method, op in methods.items()
    }
    assert {key: ids.get(key) for key in OPERATIONS} == OPERATIONS
    assert len(set(ids.values())) == len(ids)
    assert all(re.fullmatch(r"[a-z][a-z_]*", name) for name in ids.values()), ids  # a name, not a generated one


def test_each_answer_has_its_model(doc: dict[str, Any]) -> None:
    ops = _operations(doc)
    for name, model in MODELS.items():
        ok = "201" if name == "remember" else "200"
        schema = ops[name]["responses"][ok]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{model}"}, name
    for name, op in ops.items():  # every route, those added later too: no free-form answer
        for code, answer in op["responses"].items():
            for media, content in answer.get("content", {}).items():
                if media == "application/json":
                    assert "$ref" in content["schema"], (name, code)
    schemas = doc["components"]["schemas"]
    assert {"id", "entity", "record", "note", "etag"} <= set(schemas["Fact"]["required"])
    assert schemas["HitList"]["properties"]["hits"]["items"] == {"$ref": "#/components/schemas/Hit"}
    assert {"$ref": "#/components/schemas/Explain"} in schemas["Hit"]["properties"]["explain"]["anyOf"]
    assert "explain" not in schemas["Hit"]["required"]  # only when asked for
    explain = schemas["Explain"]
    parts = {"bm25", "context", "entity", "period", "when", "cosine"}  # cosine: the semantic re-ranker's part
    assert explain["required"] == ["bm25"] and set(explain["properties"]) == parts
    assert all(any(t.get("type") == "number" for t in p.get("anyOf", [p])) for p in explain["properties"].values())
    assert "semantic" in schemas["HitList"]["properties"] and "semantic" not in schemas["HitList"]["required"]
    assert schemas["History"]["properties"]["changes"]["items"] == {"$ref": "#/components/schemas/Change"}
    assert "detail" in schemas["Problem"]["required"]
    health = ops["health"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert health == {"$ref": "#/components/schemas/Health"}


def test_each_route_lists_only_its_own_errors(doc: dict[str, Any]) -> None:
    for name, op in _operations(doc).items():
        codes = {code for code in op["responses"] if not code.startswith("2")}
        assert codes == ERRORS.get(name, codes), name
        for code in codes:
            assert op["responses"][code]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Problem"
            }, (name, code)


def test_events_are_a_stream_not_json(doc: dict[str, Any]) -> None:
    ok = _operations(doc)["events_stream"]["responses"]["200"]
    assert set(ok["content"]) == {"text/event-stream"}


def test_headers_are_declared(doc: dict[str, Any]) -> None:
    ops = _operations(doc)
    assert set(ops["remember"]["responses"]["201"]["headers"]) == {"ETag", "Location"}
    assert "ETag" in ops["get_fact"]["responses"]["200"]["headers"]


def test_every_write_route_declares_the_idempotency_key(doc: dict[str, Any]) -> None:
    writes = {op["operationId"]: op for methods in doc["paths"].values() for m, op in methods.items() if m != "get"}
    assert len(writes) == 8, sorted(writes)  # sync, the four fact writes, resolve, an inbox decision, daily
    for name, op in writes.items():
        header = [p for p in op.get("parameters", []) if p["in"] == "header" and p["name"] == "Idempotency-Key"]
        assert len(header) == 1 and not header[0].get("required"), name
        assert "422" in op["responses"] and "409" in op["responses"], name
    remembered = _operations(doc)["remember"]["responses"]
    assert remembered["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Written"}
    assert set(remembered["200"]["headers"]) == {"ETag"}  # the fact held already: no new Location
    reads = [op for methods in doc["paths"].values() for m, op in methods.items() if m == "get"]
    assert all(p["name"] != "Idempotency-Key" for op in reads for p in op.get("parameters", []))


def test_a_new_fact_answers_with_its_location(env: Env) -> None:
    client = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")
    r = client.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen keeps bees"}, headers=AUTH)
    assert r.status_code == 201, r.text
    location = r.headers["location"]
    assert location == f"/facts/{r.json()['fact']['id']}?entity={SARAH.replace('/', '%2F')}"
    again = client.get(location, headers=AUTH)
    assert again.status_code == 200 and again.json()["record"]["fact"] == "Sarah Chen keeps bees"
    assert again.headers["etag"] == r.headers["etag"]
