"""The HTTP API in-process (FastAPI's test client over the real app, real files, real git): every route, auth on
every route, the error codes, what path-like parameters can reach, CORS, the Host check and the body cap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from helpers.server import AUTH, TOKEN
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync.server.http import create_app
from vaultsync.state.files import StateFiles
from vaultsync.system.lock import run_lock

ROUTES = [
    ("GET", "/status", None),
    ("POST", "/sync", None),
    ("GET", "/events?limit=1", None),
    ("GET", "/entities", None),
    ("GET", f"/entities/{SARAH}", None),
    ("GET", "/facts/sarah-chen-001", None),
    ("POST", "/facts", {"entity": SARAH, "fact": "x"}),
    ("POST", "/facts/sarah-chen-001/supersede", {"fact": "x"}),
    ("DELETE", "/facts/sarah-chen-001", None),
    ("PATCH", "/facts/sarah-chen-001", {"category": "x"}),
    ("GET", "/recall?q=sarah", None),
    ("GET", "/history", None),
    ("GET", "/conflicts", None),
    ("POST", "/conflicts/resolve", {"copy": "x.md", "keep": "mine"}),
    ("GET", "/inbox", None),
    ("POST", "/inbox/sarah-chen-001/accept", None),
    ("GET", "/review/latest", None),
    ("GET", "/context?q=sarah", None),
    ("POST", "/daily", {"text": "x"}),
]


@pytest.fixture
def client(env: Env) -> TestClient:
    return TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")


def test_every_route_but_health_wants_the_token(client: TestClient, env: Env) -> None:
    served = {(m, r.path) for r in client.app.routes for m in getattr(r, "methods", ())}  # type: ignore[attr-defined]
    listed = {(m, p.split("?")[0]) for m, p, _ in ROUTES}
    api = {(m, p) for m, p in served if not p.startswith(("/openapi", "/docs", "/redoc")) and m != "HEAD"}
    assert len(api) == len(ROUTES) + 1  # every route is in ROUTES, and /health
    assert listed
    before = env.items_path(SARAH).read_bytes()
    for method, path, body in ROUTES:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            r = client.request(method, path, json=body, headers=headers)
            assert r.status_code == 401, (method, path, headers)
            assert r.headers["www-authenticate"] == "Bearer"
    assert env.items_path(SARAH).read_bytes() == before
    assert client.get("/health").json()["ok"] is True


def test_status_and_sync(client: TestClient) -> None:
    r = client.post("/sync", headers=AUTH)
    assert r.status_code == 200 and r.json()["exit_code"] == 0
    status = client.get("/status", headers=AUTH).json()
    assert status["last_run"]["kind"] == "api" and status["open_conflicts"] == [] and "schedule" in status


def test_sync_while_a_pass_runs_is_409_with_retry_after(client: TestClient, env: Env) -> None:
    with run_lock(StateFiles(env.cfg.state_dir).lock):
        r = client.post("/sync", headers=AUTH)
    assert r.status_code == 409 and int(r.headers["retry-after"]) > 0


def test_entities(client: TestClient) -> None:
    listed = client.get("/entities", headers=AUTH).json()["entities"]
    assert {"entity": SARAH, "para": "areas", "slug": "sarah-chen", "note": f"{SARAH_DIR}/sarah-chen.md"} in listed
    one = client.get(f"/entities/{SARAH}", headers=AUTH).json()
    assert one["name"] == "Sarah Chen" and one["active"] and one["superseded"]
    assert client.get("/entities/areas/people/nobody", headers=AUTH).status_code == 404


def test_fact_etag_and_if_match(client: TestClient, env: Env) -> None:
    r = client.get("/facts/sarah-chen-001", headers=AUTH)
    assert r.status_code == 200 and r.json()["note"] == f"{SARAH_DIR}/facts/sarah-chen-001.md"
    tag = r.headers["etag"]
    assert client.get("/facts/nope-001", headers=AUTH).status_code == 404
    note = env.vault / f"{SARAH_DIR}/facts/sarah-chen-001.md"
    note.write_text(note.read_text().replace("category: context", "category: career"))
    before = env.items_path(SARAH).read_bytes()
    for method, path, body in ROUTES[7:10]:  # the writes that take If-Match
        r = client.request(method, path, json=body, headers={**AUTH, "If-Match": tag})
        assert r.status_code == 412, (method, path)
    assert env.items_path(SARAH).read_bytes() == before
    fresh = client.get("/facts/sarah-chen-001", headers=AUTH).headers["etag"]
    r = client.patch("/facts/sarah-chen-001", json={"source": "chat"}, headers={**AUTH, "If-Match": fresh})
    assert r.status_code == 200 and r.json()["fact"]["record"]["category"] == "career"


def test_remember_supersede_forget_patch(client: TestClient, env: Env) -> None:
    r = client.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen likes tea", "category": "pref"}, headers=AUTH)
    assert r.status_code == 201, r.text
    new = r.json()["fact"]
    assert new["id"] == "sarah-chen-007" and (env.vault / new["note"]).is_file() and r.json()["commits"]
    r = client.post("/facts/sarah-chen-007/supersede", json={"fact": "Sarah Chen likes coffee"}, headers=AUTH)
    assert r.status_code == 200 and env.fact(SARAH, "sarah-chen-007")["supersededBy"] == r.json()["fact"]["id"]
    r = client.post("/facts/sarah-chen-003/supersede", json={"by": "sarah-chen-004"}, headers=AUTH)
    assert r.status_code == 200 and env.fact(SARAH, "sarah-chen-003")["status"] == "superseded"
    r = client.patch("/facts/sarah-chen-004", json={"category": "work"}, headers=AUTH)
    assert r.status_code == 200 and env.fact(SARAH, "sarah-chen-004")["category"] == "work"
    r = client.delete("/facts/sarah-chen-004", headers=AUTH)
    assert r.status_code == 200 and not (env.vault / f"{SARAH_DIR}/facts/sarah-chen-004.md").exists()
    assert client.get("/facts/sarah-chen-004", headers=AUTH).status_code == 404
    r = client.post("/facts", json={"entity": "areas/people/nora", "fact": "Nora", "create": True}, headers=AUTH)
    assert r.status_code == 201 and r.json()["fact"]["id"] == "nora-001"


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/facts", {"entity": SARAH}, "fact"),
        ("POST", "/facts", {"entity": SARAH, "fact": ""}, "fact"),
        ("POST", "/facts", {"entity": SARAH, "fact": "x", "colour": "red"}, "colour"),
        ("POST", "/facts", {"entity": "people/sarah", "fact": "x"}, "entity"),
        ("POST", "/facts", {"entity": SARAH, "fact": "x", "fields": {"id": "x"}}, "id"),
        ("POST", "/facts/sarah-chen-001/supersede", {}, "by"),
        ("POST", "/facts/sarah-chen-001/supersede", {"by": "a/b"}, "by"),
        ("PATCH", "/facts/sarah-chen-001", {"id": "other"}, "id"),
        ("PATCH", "/facts/sarah-chen-001", {"fact": ""}, "fact"),
        ("PATCH", "/facts/sarah-chen-001", [1, 2], "body"),
    ],
)
def test_invalid_bodies_are_422_naming_the_field(
    client: TestClient, method: str, path: str, body: object, field: str
) -> None:
    r = client.request(method, path, json=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert any(field in [str(x) for x in e["loc"]] for e in r.json()["detail"]), r.json()


def test_unknown_entity_is_404_and_bad_json_is_422(client: TestClient) -> None:
    r = client.post("/facts", json={"entity": "areas/people/nobody", "fact": "x"}, headers=AUTH)
    assert r.status_code == 404
    r = client.post("/facts", content=b"{not json", headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 422


def test_an_id_shared_by_entities(client: TestClient, env: Env) -> None:
    for rel in ("areas/people/kim", "areas/people/lee"):
        (env.life / rel).mkdir(parents=True)
        (env.life / rel / "items.json").write_text('[{"id": "f001", "fact": "a fact"}]\n')
    r = client.get("/facts/f001", headers=AUTH)
    assert r.status_code == 409 and r.json()["detail"]["entities"] == ["areas/people/kim", "areas/people/lee"]
    r = client.get("/facts/f001?entity=areas/people/lee", headers=AUTH)
    assert r.status_code == 200 and r.json()["entity"] == "areas/people/lee"


TRAVERSALS = [
    "..",
    "../..",
    "..%2F..%2Foutside",
    "%2E%2E",
    "%2e%2e%2foutside",
    "/etc/passwd",
    "%2Fetc%2Fpasswd",
    "a%00b",
    "areas%2F..%2F..%2Foutside",
    "areas/people/..%2F..%2F..%2Foutside",
    "areas/people/%2E%2E/x",
    "..%5C..%5Coutside",
    "areas/people/a%5Cb",
]


@pytest.mark.parametrize("payload", TRAVERSALS)
def test_path_like_parameters_stay_inside(client: TestClient, env: Env, payload: str) -> None:
    outside = env.root / "outside"
    sentinel = env.root.parent / "sentinel.txt"
    sentinel.write_text("keep")
    before = sorted(p.name for p in env.root.parent.iterdir())
    answers = [
        client.get(f"/entities/{payload}", headers=AUTH),
        client.get(f"/facts/{payload}", headers=AUTH),
        client.get(f"/facts/sarah-chen-001?entity={payload}", headers=AUTH),
        client.delete(f"/facts/{payload}", headers=AUTH),
        client.patch(f"/facts/{payload}", json={"category": "x"}, headers=AUTH),
        # a JSON body is not URL-decoded: what the payload stands for is sent as it is
        client.post("/facts", json={"entity": unquote(payload), "fact": "x", "create": True}, headers=AUTH),
        client.post("/facts", json={"entity": f"areas/{unquote(payload)}", "fact": "x", "create": True}, headers=AUTH),
    ]
    for r in answers:
        assert r.status_code in (400, 404, 405, 422), (payload, r.request.url, r.status_code, r.text)
    assert not outside.exists() and sentinel.read_text() == "keep"
    assert sorted(p.name for p in env.root.parent.iterdir()) == before


def test_host_cors_and_body_cap(client: TestClient) -> None:
    assert client.get("/health", headers={"Host": "attacker.example"}).status_code == 400
    assert client.get("/health", headers={"Host": "localhost:8765"}).status_code == 200
    assert client.get("/health", headers={"Host": "[::1]:8765"}).status_code == 200
    pre = {"Origin": "app://obsidian.md", "Access-Control-Request-Method": "POST"}
    r = client.options("/facts", headers=pre)
    assert r.headers.get("access-control-allow-origin") == "app://obsidian.md"
    r = client.options("/facts", headers={**pre, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    r = client.get("/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    big = json.dumps({"entity": SARAH, "fact": "x" * 100_000})
    r = client.post("/facts", content=big, headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 413


def test_openapi_document(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert {"/health", "/status", "/sync", "/events", "/entities", "/facts", "/facts/{fact_id}"} <= set(doc["paths"])
    recall = {p["name"] for p in doc["paths"]["/recall"]["get"]["parameters"]}
    assert recall == {"q", "query", "limit", "kind", "entity", "status", "since", "until", "recency", "explain"}
    assert {p["name"] for p in doc["paths"]["/history"]["get"]["parameters"]} == {"target", "since", "limit"}


def _cli_json(env: Env, *args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args, "--json", "--config", str(env.config_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_recall_answers_what_the_cli_prints(client: TestClient, env: Env) -> None:
    r = client.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen keeps bonsai trees"}, headers=AUTH)
    assert r.status_code == 201, r.text
    new_id = r.json()["fact"]["id"]
    r = client.get("/recall", params={"q": "bonsai trees", "kind": "fact", "status": "active"}, headers=AUTH)
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert hits[0]["id"] == new_id and hits[0]["entity"] == SARAH and "bonsai" in hits[0]["text"]
    assert hits[0]["vault_path"] == f"{SARAH_DIR}/facts/{new_id}.md"
    same = client.get("/recall", params={"query": "bonsai trees", "kind": "fact", "status": "active"}, headers=AUTH)
    assert same.json() == r.json()
    cli = _cli_json(env, "recall", "bonsai trees", "--kind", "fact", "--status", "active")
    assert cli == r.json()
    limited = client.get("/recall", params={"q": "sarah", "limit": 2, "entity": "sarah-chen"}, headers=AUTH).json()
    assert len(limited["hits"]) == 2 and all(h["entity"] == SARAH for h in limited["hits"])
    assert limited == _cli_json(env, "recall", "sarah", "--limit", "2", "--entity", "sarah-chen")
    none = client.get("/recall", params={"q": "bonsai", "until": "2000-01-01"}, headers=AUTH)
    assert none.status_code == 200 and none.json()["hits"] == []
    odd = client.get("/recall", params={"q": 'a\x00b "OR" * NEAR('}, headers=AUTH)
    assert odd.status_code == 200 and all(
        hit["kind"] in ("fact", "summary", "memory", "daily") for hit in odd.json()["hits"]
    )


def test_recall_explains_each_hit_only_when_asked(client: TestClient, env: Env) -> None:
    asked = {"q": "Sarah Acme", "kind": "fact", "limit": 3}
    r = client.get("/recall", params={**asked, "explain": "true"}, headers=AUTH)
    assert r.status_code == 200, r.text
    explained = r.json()["hits"]
    assert len(explained) == 3
    assert all(set(h["explain"]) <= {"bm25", "context", "entity", "period", "when"} for h in explained)
    for hit in explained[:2]:  # the query names Sarah: her facts come first, with the entity boost
        assert hit["entity"] == SARAH and hit["explain"]["entity"] == 0.7, hit
        assert 0 < hit["explain"]["bm25"] < hit["score"]
    assert r.json() == _cli_json(env, "recall", "Sarah Acme", "--kind", "fact", "--limit", "3", "--explain")
    plain = client.get("/recall", params=asked, headers=AUTH)
    assert plain.json()["hits"] == [{k: v for k, v in h.items() if k != "explain"} for h in explained]
    assert b"explain" not in plain.content
    assert client.get("/recall", params={**asked, "explain": "false"}, headers=AUTH).content == plain.content
    context = client.get("/context", params={"q": "Sarah Acme"}, headers=AUTH)
    assert context.json()["hits"] and b"explain" not in context.content


def test_history_answers_what_the_cli_prints(client: TestClient, env: Env) -> None:
    r = client.post("/facts/sarah-chen-003/supersede", json={"by": "sarah-chen-004"}, headers=AUTH)
    assert r.status_code == 200, r.text
    one = client.get("/history", params={"target": "sarah-chen-003"}, headers=AUTH)
    assert one.status_code == 200, one.text
    latest = one.json()["changes"][0]
    assert latest["side"] == "agent" and latest["what"] == "status: active -> superseded (by sarah-chen-004)"
    assert latest["paths"] == [f"{SARAH_DIR}/facts/sarah-chen-003.md"] and latest["commit"] == r.json()["commits"][-1]
    assert one.json() == _cli_json(env, "log", "sarah-chen-003")
    everything = client.get("/history", params={"limit": 1}, headers=AUTH).json()
    assert len(everything["changes"]) == 1 and everything["changes"][0]["commit"] == latest["commit"]
    assert everything == _cli_json(env, "log", "--limit", "1")
    entity = client.get("/history", params={"target": SARAH, "since": "2000-01-01"}, headers=AUTH).json()
    assert latest in entity["changes"]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/recall", "q"),
        ("/recall?q=", "q"),
        ("/recall?q=sarah&limit=0", "limit"),
        ("/recall?q=sarah&limit=many", "limit"),
        ("/recall?q=sarah&kind=facts", "kind"),
        ("/recall?q=sarah&status=old", "status"),
        ("/recall?q=sarah&since=2026-13-40", "since"),
        ("/recall?q=nothing-matches-this&until=soon", "until"),
        ("/recall?q=sarah&entity=nobody-at-all", "entity"),
        ("/recall?q=sarah&recency=maybe", "recency"),
        ("/recall?q=sarah&explain=maybe", "explain"),
        ("/history?target=../../etc", "target"),
        ("/history?target=a%00b", "target"),
        ("/history?target=:(glob)**", "target"),
        ("/history?since=yesterday%0A", "since"),
        ("/history?limit=0", "limit"),
    ],
)
def test_bad_recall_and_history_parameters_are_422_naming_the_field(
    client: TestClient, env: Env, path: str, field: str
) -> None:
    head = env.head()
    r = client.get(path, headers=AUTH)
    assert r.status_code == 422, r.text
    assert any(field in [str(x) for x in e["loc"]] for e in r.json()["detail"]), r.json()
    assert env.head() == head


def test_token_file_from_init(tmp_path: Path) -> None:
    from vaultsync import config as configmod
    from vaultsync.app.init import init_vault, load_token

    (tmp_path / "ws").mkdir()
    (tmp_path / "life").mkdir()
    result = init_vault(tmp_path / "ws", tmp_path / "life", tmp_path / "vault", tmp_path / "config.toml")
    assert result.token_path is not None and result.token_path.stat().st_mode & 0o777 == 0o600
    cfg = configmod.load(tmp_path / "config.toml")
    assert cfg.token_path == result.token_path and "[server]" in (tmp_path / "config.toml").read_text()
    token = load_token(cfg)
    assert len(token) >= 43 and token == result.token_path.read_text().strip()


def test_a_chunked_body_over_the_cap_is_413_and_one_under_it_is_read(client: TestClient, env: Env) -> None:
    before = env.items_path(SARAH).read_bytes()

    def pieces(text: str) -> object:
        data = text.encode()
        for start in range(0, len(data), 4096):
            yield data[start : start + 4096]

    big = json.dumps({"entity": SARAH, "fact": "x" * 100_000})
    r = client.post("/facts", content=pieces(big), headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 413, r.text
    assert "64" in r.text or "bytes" in r.json()["detail"]
    assert env.items_path(SARAH).read_bytes() == before
    small = json.dumps({"entity": SARAH, "fact": "Sarah Chen sent the chunked note"})
    r = client.post("/facts", content=pieces(small), headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert r.json()["fact"]["record"]["fact"] == "Sarah Chen sent the chunked note"


def test_remember_refuses_a_date_that_is_not_one_and_writes_the_files_own_keys_and_layout(
    client: TestClient, env: Env
) -> None:
    before = env.items_path(SARAH).read_bytes()
    r = client.post(
        "/facts", json={"entity": SARAH, "fact": "Sarah Chen flew out", "timestamp": "yesterday"}, headers=AUTH
    )
    assert r.status_code == 422, r.text
    problem = r.json()["detail"][0]
    assert problem["loc"] == ["timestamp"] and "YYYY-MM-DD" in problem["msg"] and "yesterday" in problem["msg"]
    r = client.patch("/facts/sarah-chen-001", json={"timestamp": "last week"}, headers=AUTH)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["timestamp"]
    assert env.items_path(SARAH).read_bytes() == before

    folder = env.life / "areas/people/bo"
    folder.mkdir(parents=True)
    lines = [
        '{"id": "bo-001", "fact": "Bo plays chess", "date": "2026-10-01", "status": "active"}',
        '{"id": "bo-002", "fact": "Bo moved to Lisbon", "date": "2026-11-02", "status": "active"}',
    ]
    (folder / "items.json").write_text("[\n  " + ",\n  ".join(lines) + "\n]\n", encoding="utf-8")
    r = client.post(
        "/facts", json={"entity": "areas/people/bo", "fact": "Bo learns Go", "timestamp": "2026-11-20"}, headers=AUTH
    )
    assert r.status_code == 201, r.text
    record = r.json()["fact"]["record"]
    assert record == {"id": "bo-003", "fact": "Bo learns Go", "date": "2026-11-20", "status": "active"}
    text = (folder / "items.json").read_text(encoding="utf-8")
    assert text.splitlines()[1:3] == [f"  {line}," for line in lines]
    assert (
        text.splitlines()[3] == '  {"id": "bo-003", "fact": "Bo learns Go", "date": "2026-11-20", "status": "active"}'
    )
    assert text.splitlines()[4:] == ["]"]
    r = client.patch("/facts/bo-001", json={"timestamp": "2026-10-02"}, params={"entity": "bo"}, headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json()["fact"]["record"] == {
        "id": "bo-001",
        "fact": "Bo plays chess",
        "date": "2026-10-02",
        "status": "active",
    }


def test_an_entity_is_named_the_same_way_on_every_route(client: TestClient, env: Env) -> None:
    whole = client.get(f"/entities/{SARAH}", headers=AUTH)
    assert whole.status_code == 200, whole.text
    for name in ("sarah-chen", "people/sarah-chen", SARAH_DIR):
        r = client.get(f"/entities/{name}", headers=AUTH)
        assert r.status_code == 200 and r.json() == whole.json(), (name, r.text)
    r = client.get("/facts/sarah-chen-001", params={"entity": "people/sarah-chen"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["entity"] == SARAH
    miss = client.get("/entities/sarah-chn", headers=AUTH)
    assert miss.status_code == 404 and f"did you mean {SARAH}?" in miss.json()["detail"]
    r = client.post("/facts", json={"entity": "sarah-chen", "fact": "Sarah Chen reads on trains"}, headers=AUTH)
    assert r.status_code == 201 and r.json()["fact"]["entity"] == SARAH
    new = client.post("/facts", json={"entity": "nadia", "fact": "Nadia joined", "create": True}, headers=AUTH)
    assert new.status_code == 422 and "whole folder" in new.json()["detail"][0]["msg"]

    (env.life / "resources/people/sarah-chen").mkdir(parents=True)
    (env.life / "resources/people/sarah-chen/summary.md").write_text("# Sarah Chen (the author)\n")
    both = client.get("/entities/sarah-chen", headers=AUTH)
    assert both.status_code == 409, both.text
    assert both.json()["detail"]["entities"] == [SARAH, "resources/people/sarah-chen"]
    r = client.get("/recall", params={"q": "Sarah", "entity": "sarah-chen"}, headers=AUTH)
    assert r.status_code == 422 and "resources/people/sarah-chen" in r.text
