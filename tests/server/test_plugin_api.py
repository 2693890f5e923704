"""The routes the vault plugin needs, against a real ``vaultsync serve``: open conflicts listed and resolved either
way (committed as the person), the inbox listed, accepted and rejected (412 on a stale ETag, 409 when not
proposed), and the latest review note."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from helpers.server import AUTH, running_server
from helpers.twoway import SARAH, SARAH_DIR, Env, props_of, set_prop

NOTE = f"{SARAH_DIR}/facts/sarah-chen-004.md"


@pytest.fixture
def server(env: Env) -> Iterator[str]:
    with running_server(env.config_path) as url:
        yield url


def _conflict(env: Env) -> str:
    """The person sets category habit, the agent routine: memory's value wins, the person's goes to a copy."""
    set_prop(env.vault / NOTE, "category", "habit")
    fact = "sarah-chen-004"
    env.agent_edit(SARAH, lambda facts: next(f for f in facts if f["id"] == fact).update(category="routine"))
    report = env.sync()
    [conflict] = report.conflicts
    return conflict.copy_path


def _listed(server: str) -> list[dict[str, object]]:
    r = httpx.get(f"{server}/conflicts", headers=AUTH, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["conflicts"]


def test_conflict_listed_beside_its_note_then_kept_mine(server: str, env: Env) -> None:
    copy = _conflict(env)
    [listed] = _listed(server)
    assert listed["copy"] == copy and listed["note"] == NOTE and listed["note_exists"] is True
    assert listed["unit"] == f"fact:{SARAH}#sarah-chen-004" and "category" in str(listed["detail"])

    r = httpx.post(f"{server}/conflicts/resolve", json={"copy": copy, "keep": "mine"}, headers=AUTH, timeout=300)

    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kept"] == "mine" and body["open_conflicts"] == [] and body["sync"]["exit_code"] == 0
    assert not (env.vault / copy).exists()
    assert props_of(env.vault / NOTE)["category"] == "habit"
    assert env.fact(SARAH, "sarah-chen-004")["category"] == "habit"
    assert _listed(server) == []
    assert env.git("status", "--porcelain") == ""
    person = env.git("log", "--format=%an %s", "-3")
    assert "conflict resolved" in person and "vaultsync agent: vault -> memory" not in person


def test_conflict_kept_the_agents(server: str, env: Env) -> None:
    copy = _conflict(env)
    note_before = (env.vault / NOTE).read_bytes()

    r = httpx.post(f"{server}/conflicts/resolve", json={"copy": copy, "keep": "agent"}, headers=AUTH, timeout=300)

    assert r.status_code == 200, r.text
    assert not (env.vault / copy).exists()
    assert (env.vault / NOTE).read_bytes() == note_before
    assert env.fact(SARAH, "sarah-chen-004")["category"] == "routine"
    assert httpx.get(f"{server}/status", headers=AUTH, timeout=60).json()["open_conflicts"] == []
    assert env.git("status", "--porcelain") == ""


def test_resolve_refuses_what_it_cannot_do(server: str, env: Env) -> None:
    copy = _conflict(env)
    unknown = httpx.post(f"{server}/conflicts/resolve", json={"copy": NOTE, "keep": "mine"}, headers=AUTH, timeout=60)
    assert unknown.status_code == 404 and "GET /conflicts" in unknown.json()["detail"]
    bad = httpx.post(f"{server}/conflicts/resolve", json={"copy": copy, "keep": "both"}, headers=AUTH, timeout=60)
    assert bad.status_code == 422
    assert (env.vault / copy).is_file() and len(_listed(server)) == 1


def test_inbox_accept_reject_stale_and_not_proposed(server: str, env: Env) -> None:
    def propose(text: str) -> dict[str, object]:
        body = {"entity": SARAH, "fact": text, "status": "proposed"}
        r = httpx.post(f"{server}/facts", json=body, headers=AUTH, timeout=300)
        assert r.status_code == 201, r.text
        return r.json()["fact"]

    first, second = propose("Sarah Chen plays chess on Sundays"), propose("Sarah Chen keeps bees")
    listed = httpx.get(f"{server}/inbox", headers=AUTH, timeout=60).json()["facts"]
    assert [f["record"]["fact"] for f in listed] == ["Sarah Chen plays chess on Sundays", "Sarah Chen keeps bees"]
    assert listed[0]["entity"] == SARAH and listed[0]["etag"] == first["etag"]

    fid = first["record"]["id"]
    set_prop(env.vault / f"{SARAH_DIR}/facts/{fid}.md", "category", "hobby")  # the person edits it meanwhile
    stale = httpx.post(f"{server}/inbox/{fid}/accept", headers={**AUTH, "If-Match": first["etag"]}, timeout=300)
    assert stale.status_code == 412
    assert env.fact(SARAH, fid)["status"] == "proposed"

    fresh = httpx.get(f"{server}/facts/{fid}", headers=AUTH, timeout=60).headers["etag"]
    accepted = httpx.post(f"{server}/inbox/{fid}/accept", headers={**AUTH, "If-Match": fresh}, timeout=300)
    assert accepted.status_code == 200, accepted.text
    assert env.fact(SARAH, fid)["status"] == "active"
    assert props_of(env.vault / f"{SARAH_DIR}/facts/{fid}.md")["status"] == "active"

    sid = second["record"]["id"]
    rejected = httpx.post(f"{server}/inbox/{sid}/reject", headers=AUTH, timeout=300)
    assert rejected.status_code == 200 and env.fact(SARAH, sid)["status"] == "rejected"
    assert httpx.get(f"{server}/inbox", headers=AUTH, timeout=60).json()["facts"] == []

    again = httpx.post(f"{server}/inbox/{sid}/accept", headers=AUTH, timeout=60)
    assert again.status_code == 409 and "not proposed" in again.json()["detail"]
    assert httpx.post(f"{server}/inbox/{sid}/maybe", headers=AUTH, timeout=60).status_code == 422
    assert env.fact(SARAH, sid)["status"] == "rejected"


def test_latest_review_note(server: str, env: Env) -> None:
    def latest() -> object:
        return httpx.get(f"{server}/review/latest", headers=AUTH, timeout=60).json()["note"]

    assert latest() is None
    folder = env.vault / env.cfg.review.folder
    folder.mkdir(exist_ok=True)
    for name in ("2026-W48.md", "2026-W50.md", "notes.md", "2026-W49.md"):
        (folder / name).write_text("# review\n", encoding="utf-8")
    assert latest() == f"{env.cfg.review.folder}/2026-W50.md"


def test_a_program_cannot_write_a_fact_while_its_conflict_is_open(server: str, env: Env) -> None:
    """While the person chooses between two versions of a fact, a plugin's write would decide for them: it is
    refused with what to do, nothing changes, and once the conflict is resolved the same write goes through."""
    copy = _conflict(env)
    items = env.life / SARAH / "items.json"
    before = items.read_bytes()
    headers = {**AUTH, "X-Vaultsync-Client": "openclaw"}
    ask = {"fact": "Sarah Chen now runs at dawn"}
    r = httpx.post(f"{server}/facts/sarah-chen-004/supersede", json=ask, headers=headers, timeout=300)
    assert r.status_code == 409, r.text
    assert "open conflict" in r.json()["detail"] and copy in r.json()["detail"] and "resolve" in r.json()["detail"]
    r = httpx.delete(f"{server}/facts/sarah-chen-004", headers=headers, timeout=300)
    assert r.status_code == 409 and items.read_bytes() == before, r.text

    r = httpx.post(f"{server}/conflicts/resolve", json={"copy": copy, "keep": "agent"}, headers=AUTH, timeout=300)
    assert r.status_code == 200, r.text
    r = httpx.post(f"{server}/facts/sarah-chen-004/supersede", json=ask, headers=headers, timeout=300)
    assert r.status_code == 200, r.text
    assert "Sarah Chen now runs at dawn" in items.read_text(encoding="utf-8")
