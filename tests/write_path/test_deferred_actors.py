"""Each change carries its own actor, whichever pass commits it: an API write whose commit git could not make
(a stale ``.git/index.lock``, a detached HEAD) is committed later as ``vaultsync api (<name>)`` with its trailers,
not as the agent; and the agent's own edits a write's pass finds are committed as the agent, before the write's
own commit, never inside it.

Real files, real git; the HTTP API through its ASGI app.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from helpers.server import AUTH, TOKEN
from helpers.twoway import AGENT_NAME, MIGUEL, MIGUEL_DIR, SARAH, SARAH_DIR, Env

from vaultsync.app import memory
from vaultsync.app.capture import append_daily
from vaultsync.app.edits import edit_facts
from vaultsync.model import client
from vaultsync.server.http import create_app
from vaultsync.state.files import StateFiles

WRITER = {**AUTH, "X-Vaultsync-Client": "openclaw", "X-Vaultsync-Agent": "main", "X-Vaultsync-Session": "s-42"}
API = "vaultsync api (openclaw)"


def _api(env: Env) -> TestClient:
    return TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")


def _stale_lock(env: Env) -> Path:
    lock = env.vault / ".git" / "index.lock"
    lock.write_bytes(b"left by a crashed obsidian-git\n")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    return lock


def _commits(env: Env, since: str) -> list[tuple[str, str, set[str]]]:
    return [env.commit_info(sha) for sha in env.commits_since(since)]


def _trailers(env: Env, rev: str) -> str:
    return env.git("log", "-1", "--format=%(trailers:only,unfold)", rev).strip()


@pytest.mark.usefixtures("short_lock_wait")
def test_a_write_git_could_not_commit_is_committed_later_as_its_client(env: Env) -> None:
    start = env.head()
    lock = _stale_lock(env)

    made = _api(env).post("/facts", json={"entity": SARAH, "fact": "Sarah Chen swims on Fridays"}, headers=WRITER)

    assert made.status_code == 201, made.text
    assert made.json()["commits"] == [] and env.head() == start
    note = f"{SARAH_DIR}/facts/{made.json()['fact']['id']}.md"
    assert (env.vault / note).is_file()

    lock.unlink()  # the person, having checked that no git runs
    report = env.sync()

    assert report.commits, report.to_json()
    ((author, _, paths),) = _commits(env, start)
    assert author == API and note in paths
    assert _trailers(env, "HEAD") == "Agent: main\nSession: s-42"
    assert not StateFiles(env.cfg.state_dir).actors.exists(), "the record outlived the commit"


@pytest.mark.usefixtures("short_lock_wait")
def test_a_daily_entry_git_could_not_commit_keeps_its_client_too(env: Env) -> None:
    start = env.head()
    lock = _stale_lock(env)

    captured = append_daily(env.cfg, "Planned the offsite", source="openclaw", actor=client("openclaw", "work"))

    assert captured.report.commits == []
    lock.unlink()
    env.sync()
    ((author, _, paths),) = _commits(env, start)
    assert author == API and any(p.startswith("Daily/") for p in paths)
    assert _trailers(env, "HEAD") == "Agent: work"


def test_a_write_made_while_head_was_detached_is_committed_later_as_its_client(env: Env) -> None:
    start = env.head()
    branch = env.git("symbolic-ref", "--short", "HEAD").strip()
    env.git("checkout", "-q", "--detach")

    made = _api(env).post("/facts", json={"entity": SARAH, "fact": "Sarah Chen swims on Fridays"}, headers=WRITER)

    assert made.status_code == 201, made.text
    assert made.json()["commits"] == [] and "detached HEAD" in made.json()["sync"]["summary"]
    env.git("checkout", "-q", branch)
    env.sync()
    commits = _commits(env, start)
    assert [author for author, _, _ in commits] == [API], commits
    assert f"{SARAH_DIR}/facts/{made.json()['fact']['id']}.md" in commits[0][2]


def test_the_agents_pending_edits_are_its_own_commit_before_an_api_write(env: Env) -> None:
    """The agent edited Miguel's facts and MEMORY.md since the last pass; the snapshot that would let the write's
    pass look only at Sarah is gone (as after a killed pass), so that pass carries everything it finds."""
    start = env.head()
    env.agent_edit(MIGUEL, lambda facts: facts[0].update(category="hobby"))
    memory_md = env.mem_file("MEMORY.md")
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n## Notes\n\n- the agent's own line\n")
    StateFiles(env.cfg.state_dir).snapshot.unlink()

    written = memory.remember(env.cfg, SARAH, "Sarah Chen swims on Fridays", actor=client("openclaw", "main"))

    assert written.fact is not None
    commits = _commits(env, start)
    assert [author for author, _, _ in commits] == [AGENT_NAME, API], commits
    agent_paths, api_paths = commits[0][2], commits[1][2]
    assert any(p.startswith(f"{MIGUEL_DIR}/") for p in agent_paths)
    assert any(p.endswith("/MEMORY.md") for p in agent_paths)
    assert api_paths and all(p.startswith(f"{SARAH_DIR}/") for p in api_paths), api_paths
    assert f"{SARAH_DIR}/facts/{written.fact.id}.md" in api_paths
    assert "people/sarah-chen" not in commits[0][1] and "people/miguel-ortiz" not in commits[1][1]


@pytest.mark.usefixtures("short_lock_wait")
def test_two_deferred_writes_of_two_agents_and_the_agents_own_edit_get_three_commits(env: Env) -> None:
    start = env.head()
    lock = _stale_lock(env)
    memory.remember(env.cfg, SARAH, "Sarah Chen swims on Fridays", actor=client("openclaw", "main", "s-1"))
    memory.remember(env.cfg, MIGUEL, "Miguel Ortiz plays chess", actor=client("openclaw", "work", "s-2"))
    daily = env.mem_file("memory/2026-12-01.md")
    daily.write_text(daily.read_text(encoding="utf-8") + "\n- the agent's own line\n", encoding="utf-8")
    record = json.loads(StateFiles(env.cfg.state_dir).actors.read_text(encoding="utf-8"))
    assert {a["agent"] for a in record.values()} == {"main", "work"}

    lock.unlink()
    env.sync()

    commits = _commits(env, start)
    assert sorted(author for author, _, _ in commits) == sorted([AGENT_NAME, API, API]), commits
    assert commits[0][0] == AGENT_NAME and all(p.startswith("Daily/") for p in commits[0][2])
    shas = env.commits_since(start)
    by_agent = {_trailers(env, sha): paths for sha, (_, _, paths) in zip(shas, commits, strict=True)}
    assert all(p.startswith(f"{SARAH_DIR}/") for p in by_agent["Agent: main\nSession: s-1"])
    assert all(p.startswith(f"{MIGUEL_DIR}/") for p in by_agent["Agent: work\nSession: s-2"])


@pytest.mark.usefixtures("short_lock_wait")
def test_a_persons_review_fix_git_could_not_commit_is_committed_later_as_the_person(env: Env) -> None:
    start = env.head()
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="hobby"))  # the agent's, between passes
    first = env.facts(SARAH)[0]["id"]
    assert first != "sarah-chen-004"
    lock = _stale_lock(env)

    done = edit_facts(env.cfg, {SARAH: {"sarah-chen-004": {"category": "career"}}}, "review: a fix")

    assert done.written and done.sync is not None and done.sync.commits == []
    lock.unlink()
    env.sync()
    commits = _commits(env, start)
    assert [author for author, _, _ in commits] == [AGENT_NAME, "vault person"], commits
    assert commits[1][1].startswith("review: a fix"), commits[1][1]
    assert commits[1][2] == {f"{SARAH_DIR}/facts/sarah-chen-004.md"}
    assert f"{SARAH_DIR}/facts/{first}.md" in commits[0][2]


def test_the_agents_edit_of_another_fact_of_the_same_entity_stays_the_agents(env: Env) -> None:
    start = env.head()
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="hobby"))
    first = env.facts(SARAH)[0]["id"]

    made = _api(env).post("/facts", json={"entity": SARAH, "fact": "Sarah Chen swims on Fridays"}, headers=WRITER)

    assert made.status_code == 201, made.text
    commits = _commits(env, start)
    assert [author for author, _, _ in commits] == [AGENT_NAME, API], commits
    assert f"{SARAH_DIR}/facts/{first}.md" in commits[0][2]
    assert f"{SARAH_DIR}/facts/{first}.md" not in commits[1][2]
    assert f"{SARAH_DIR}/facts/{made.json()['fact']['id']}.md" in commits[1][2]
    assert _trailers(env, "HEAD") == "Agent: main\nSession: s-42"


def test_the_agents_own_lines_in_todays_note_are_its_commit_before_a_captured_turn(env: Env) -> None:
    start = env.head()
    daily = env.mem_file("memory/2026-12-01.md")
    daily.write_text(daily.read_text(encoding="utf-8") + "\n- the agent's own line\n", encoding="utf-8")
    ours = daily.read_bytes()

    captured = append_daily(
        env.cfg,
        "Planned the offsite",
        source="openclaw",
        actor=client("openclaw", "main"),
        now=datetime(2026, 12, 1, 10, 5),
    )

    commits = [(sha, *env.commit_info(sha)) for sha in env.commits_since(start)]
    assert [author for _, author, _, _ in commits] == [AGENT_NAME, API], commits
    note = "Daily/2026-12-01.md"
    assert env.git("show", f"{commits[0][0]}:{note}").encode() == ours, "the agent's commit is not its own text"
    after = env.git("show", f"{commits[1][0]}:{note}")
    assert after.endswith("Planned the offsite\n") and captured.report.commits == [c[0] for c in commits]


def test_a_captured_turn_with_nothing_pending_is_one_commit(env: Env) -> None:
    start = env.head()
    append_daily(
        env.cfg, "Planned the offsite", source="openclaw", actor=client("openclaw"), now=datetime(2026, 12, 1, 10, 5)
    )
    assert [env.commit_info(sha)[0] for sha in env.commits_since(start)] == [API]
