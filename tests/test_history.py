"""`vaultsync log`: the story of a fact or entity from the vault's real git history, in words."""

from __future__ import annotations

import json

import pytest
from helpers_twoway import ATLAS_DIR, SARAH, SARAH_DIR, Env, body_of, set_body, set_prop

from vaultsync import cli
from vaultsync.app.history import history


def test_a_fact_story_says_who_did_what(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-001")
    set_prop(note, "status", "superseded")
    set_prop(note, "supersededBy", '"[[sarah-chen-006]]"')
    assert env.sync().exit_code == 0
    set_body(note, body_of(note).rstrip("\n") + " (confirmed)\n")
    assert env.sync().exit_code == 0

    changes = history(env.cfg, "sarah-chen-001").changes
    assert [c.what for c in changes] == [
        "fact text edited",
        "status: active -> superseded (by sarah-chen-006)",
        "created",
    ]
    assert [c.side for c in changes] == ["person", "person", "agent"]
    assert changes[-1].who == env.cfg.git.agent_name
    assert all(c.paths == [f"{SARAH_DIR}/facts/sarah-chen-001.md"] for c in changes)
    assert changes[0].commit == env.head() and changes[1].commit in env.git("log", "--format=%H")


def test_agent_edit_and_entity_story(env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-050", "fact": "Sarah moved to Lisbon"}))
    assert env.sync().exit_code == 0

    changes = history(env.cfg, "people/sarah-chen").changes
    newest = [c for c in changes if c.commit == changes[0].commit]
    assert any(c.what == "created" and c.paths == [f"{SARAH_DIR}/facts/sarah-chen-050.md"] for c in newest)
    assert {c.side for c in newest} == {"agent"}
    assert history(env.cfg, "sarah-chen").changes[0].commit == changes[0].commit


def test_a_move_between_para_folders_is_followed(env: Env) -> None:
    env.git("mv", ATLAS_DIR, "4 Archives/project-atlas")
    env.git("commit", "-qm", "archive atlas")
    assert env.sync().exit_code == 0

    changes = history(env.cfg, "project-atlas").changes
    moved = [c for c in changes if c.what == "moved from 1 Projects to 4 Archives"]
    assert moved and "4 Archives/project-atlas/facts/atlas-005.md" in moved[0].paths
    assert changes[-1].what == "created"
    fact = [c.what for c in history(env.cfg, "atlas-005").changes]
    assert fact[0] == "moved from 1 Projects to 4 Archives" and fact[-1] == "created"


def test_changelog_and_json(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-002"), "category", "work")
    assert env.sync().exit_code == 0

    assert cli.main(["log", "--json", "--config", str(env.config_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["changes"][0]
    assert set(first) == {"when", "who", "side", "what", "commit", "paths"}
    assert first["side"] == "person" and first["what"].startswith("vault -> memory: people/sarah-chen")
    assert cli.main(["log", "sarah-chen-002", "--json", "--config", str(env.config_path)]) == 0
    whats = [c["what"] for c in json.loads(capsys.readouterr().out)["changes"]]
    assert whats[0].startswith("category: ") and whats[0].endswith("-> work")
    assert cli.main(["log", "sarah-chen-002", "--config", str(env.config_path)]) == 0
    assert "category" in capsys.readouterr().out
    assert history(env.cfg, "no-such-thing").changes == []
