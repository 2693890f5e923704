"""Writes repeated over HTTP, against a real ``vaultsync serve`` on 127.0.0.1: without a key each repeat is
answered by the write rules (200 ``already``, 409 naming a successor, 404 for a fact never held); with an
``Idempotency-Key`` a repeat gets the first answer back, also after a restart, and never a second write."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid

import httpx
import pytest
from helpers.server import AUTH, running_server
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync.state.files import StateFiles
from vaultsync.system.lock import run_lock

KEY = "Idempotency-Key"


@pytest.fixture
def server(env: Env):  # type: ignore[no-untyped-def]
    with running_server(env.config_path) as url:
        yield url


def commits(env: Env) -> int:
    return int(env.git("rev-list", "--count", "HEAD").strip())


def claimed(env: Env, key: str) -> bool:
    path = StateFiles(env.cfg.state_dir).answers
    if not path.exists():
        return False
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone() is not None
    except sqlite3.OperationalError:  # the table is being made
        return False
    finally:
        db.close()


def keyed(key: str) -> dict[str, str]:
    return {**AUTH, KEY: key}


def test_remember_supersede_forget_three_times_each_change_the_memory_once(server: str, env: Env) -> None:
    start = commits(env)
    body = {"entity": SARAH, "fact": "Sarah Chen keeps bees on the roof"}
    made = [httpx.post(f"{server}/facts", json=body, headers=AUTH, timeout=300) for _ in range(3)]
    assert [r.status_code for r in made] == [201, 200, 200], [r.text for r in made]
    assert [r.json()["already"] for r in made] == [False, True, True]
    assert {r.json()["fact"]["id"] for r in made} == {"sarah-chen-007"}
    assert "location" in made[0].headers and "location" not in made[1].headers
    assert made[1].headers["etag"] == made[0].headers["etag"] and made[1].json()["commits"] == []

    change = {"fact": "Sarah Chen gave the bees away"}
    replaced = [
        httpx.post(f"{server}/facts/sarah-chen-007/supersede", json=change, headers=AUTH, timeout=300) for _ in range(3)
    ]
    assert [r.status_code for r in replaced] == [200, 200, 200], [r.text for r in replaced]
    assert [r.json()["already"] for r in replaced] == [False, True, True]
    assert {r.json()["fact"]["id"] for r in replaced} == {"sarah-chen-008"}

    gone = [httpx.delete(f"{server}/facts/sarah-chen-004", headers=AUTH, timeout=300) for _ in range(3)]
    assert [r.status_code for r in gone] == [200, 200, 200], [r.text for r in gone]
    assert [r.json()["already"] for r in gone] == [False, True, True]

    facts = env.facts(SARAH)
    assert [f["id"] for f in facts] == [f"sarah-chen-00{n}" for n in (1, 2, 3, 5, 6, 7, 8)]
    assert commits(env) == start + 3
    assert env.git("status", "--porcelain").strip() == ""


def test_another_successor_is_409_naming_the_first_and_a_fact_never_held_is_404(server: str, env: Env) -> None:
    before = env.items_path(SARAH).read_bytes()
    r = httpx.post(
        f"{server}/facts/sarah-chen-002/supersede", json={"fact": "The check-in is on Fridays"}, headers=AUTH
    )
    assert r.status_code == 409, r.text
    detail = r.json()["detail"]
    assert detail["successor"] == "sarah-chen-005" and detail["id"] == "sarah-chen-002" and detail["entity"] == SARAH
    assert "sarah-chen-005" in detail["msg"]
    r = httpx.post(f"{server}/facts/sarah-chen-002/supersede", json={"by": "sarah-chen-005"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["already"] is True and r.json()["fact"]["id"] == "sarah-chen-005"
    assert httpx.delete(f"{server}/facts/sarah-chen-099", headers=AUTH).status_code == 404
    assert env.items_path(SARAH).read_bytes() == before


def test_a_write_repeated_with_its_key_gets_the_first_answer_even_after_a_restart(env: Env) -> None:
    start = commits(env)
    key = str(uuid.uuid4())
    body = {"entity": SARAH, "fact": "Sarah Chen moved to the Berlin office", "category": "status"}
    with running_server(env.config_path) as url:
        first = httpx.post(f"{url}/facts", json=body, headers=keyed(key), timeout=300)
        assert first.status_code == 201, first.text
        again = httpx.post(f"{url}/facts", json=dict(reversed(body.items())), headers=keyed(key), timeout=300)
    with running_server(env.config_path) as url:
        later = httpx.post(f"{url}/facts", json=body, headers=keyed(f'"{key}"'), timeout=300)
    for repeat in (again, later):
        assert repeat.status_code == 201 and repeat.content == first.content
        assert repeat.headers["location"] == first.headers["location"]
        assert repeat.headers["etag"] == first.headers["etag"]
        assert repeat.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert first.json()["already"] is False  # the first answer, not "already"
    assert [f["fact"] for f in env.facts(SARAH)].count(body["fact"]) == 1
    assert commits(env) == start + 1
    assert StateFiles(env.cfg.state_dir).answers.is_file()


def test_a_daily_entry_sent_again_with_its_key_is_appended_once(server: str, env: Env) -> None:
    key = uuid.uuid4().hex
    body = {"text": "Talked with Sarah about the bees", "source": "openclaw"}
    sent = [httpx.post(f"{server}/daily", json=body, headers=keyed(key), timeout=300) for _ in range(3)]
    assert [r.status_code for r in sent] == [201, 201, 201] and len({r.content for r in sent}) == 1
    note = env.workspace / sent[0].json()["path"]
    assert note.read_text(encoding="utf-8").count("Talked with Sarah about the bees") == 1


def test_the_same_key_with_another_request_is_422_and_writes_nothing(server: str, env: Env) -> None:
    key = "retry-" + uuid.uuid4().hex
    r = httpx.delete(f"{server}/facts/sarah-chen-004", headers=keyed(key), timeout=300)
    assert r.status_code == 200 and r.json()["already"] is False
    again = httpx.delete(f"{server}/facts/sarah-chen-004", headers=keyed(key), timeout=300)
    assert again.status_code == 200 and again.json()["already"] is False  # the first answer, replayed
    before = env.items_path(SARAH).read_bytes()
    for method, path, body in [
        ("DELETE", "/facts/sarah-chen-003", None),
        ("POST", "/facts", {"entity": SARAH, "fact": "Sarah Chen likes tea"}),
    ]:
        r = httpx.request(method, f"{server}{path}", json=body, headers=keyed(key), timeout=300)
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["loc"] == ["header", KEY] and key in r.json()["detail"][0]["msg"]
    assert env.items_path(SARAH).read_bytes() == before


def test_a_repeat_while_the_first_waits_for_the_lock_is_409_then_the_first_answer(server: str, env: Env) -> None:
    key = uuid.uuid4().hex
    body = {"entity": SARAH, "fact": "Sarah Chen runs on Sundays"}
    answers: list[httpx.Response] = []
    with run_lock(StateFiles(env.cfg.state_dir).lock):
        first = threading.Thread(
            target=lambda: answers.append(httpx.post(f"{server}/facts", json=body, headers=keyed(key), timeout=300))
        )
        first.start()
        deadline = time.monotonic() + 60
        while not claimed(env, key) and time.monotonic() < deadline:  # the first request has its key
            time.sleep(0.02)
        waiting = httpx.post(f"{server}/facts", json=body, headers=keyed(key), timeout=300)
        assert waiting.status_code == 409, waiting.text
        assert waiting.headers["retry-after"] and "still being answered" in waiting.json()["detail"]
    first.join(300)
    assert answers and answers[0].status_code == 201, answers
    last = httpx.post(f"{server}/facts", json=body, headers=keyed(key), timeout=300)
    assert last.status_code == 201 and last.content == answers[0].content
    assert [f["fact"] for f in env.facts(SARAH)].count(body["fact"]) == 1


def test_a_key_never_opens_a_kept_answer_without_the_token_nor_a_bad_key_reaches_a_route(server: str, env: Env) -> None:
    key = uuid.uuid4().hex
    body = {"entity": SARAH, "fact": "Sarah Chen reads Dutch novels"}
    assert httpx.post(f"{server}/facts", json=body, headers=keyed(key), timeout=300).status_code == 201
    stranger = httpx.post(f"{server}/facts", json=body, headers={KEY: key, "Authorization": "Bearer wrong"})
    assert stranger.status_code == 401 and "sarah" not in stranger.text.lower()
    for bad in ("x" * 256, "two words", '"half'):
        r = httpx.post(f"{server}/facts", json={"entity": SARAH, "fact": "Never written"}, headers=keyed(bad))
        assert r.status_code == 422 and KEY in r.text, (bad, r.text)
    assert all(f["fact"] != "Never written" for f in env.facts(SARAH))


def test_a_state_folder_that_cannot_keep_answers_still_answers_the_write(server: str, env: Env) -> None:
    StateFiles(env.cfg.state_dir).answers.mkdir()  # not a database: sqlite cannot open it
    body = {"entity": SARAH, "fact": "Sarah Chen swims in the lake"}
    r = httpx.post(f"{server}/facts", json=body, headers=keyed(uuid.uuid4().hex), timeout=300)
    assert r.status_code == 201, r.text
    assert (env.vault / f"{SARAH_DIR}/facts/{r.json()['fact']['id']}.md").is_file()
