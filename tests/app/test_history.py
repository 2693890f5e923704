"""`vaultsync log`: the story of a fact or entity from the vault's real git history, in words."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.twoway import ATLAS, ATLAS_DIR, SARAH, SARAH_DIR, Env, body_of, set_body, set_prop

from vaultsync import cli
from vaultsync.app.history import history
from vaultsync.errors import Ambiguous, NotFound


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
    env.git("-c", "user.name=Nora", "-c", "user.email=nora@laptop", "commit", "-qm", "archive atlas")
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
    assert set(first) == {"when", "who", "side", "what", "commit", "paths", "agent", "session"}
    assert first["side"] == "person" and first["what"].startswith("vault -> memory: people/sarah-chen")
    assert cli.main(["log", "sarah-chen-002", "--json", "--config", str(env.config_path)]) == 0
    whats = [c["what"] for c in json.loads(capsys.readouterr().out)["changes"]]
    assert whats[0].startswith("category: ") and whats[0].endswith("-> work")
    assert cli.main(["log", "sarah-chen-002", "--config", str(env.config_path)]) == 0
    assert "category" in capsys.readouterr().out
    with pytest.raises(NotFound, match="nothing named 'no-such-thing'"):
        history(env.cfg, "no-such-thing")


def test_every_name_of_an_entity_and_a_clear_miss(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    newest = history(env.cfg, SARAH).changes[0].commit
    for name in ("sarah-chen", "people/sarah-chen", f"{SARAH_DIR}", f"{SARAH_DIR}/sarah-chen.md", "Sarah-Chen"):
        assert history(env.cfg, name).changes[0].commit == newest, name
    assert cli.main(["log", "nosuchthing", "--config", str(env.config_path)]) == 2
    assert "nothing named 'nosuchthing'" in capsys.readouterr().err
    assert cli.main(["log", "sarah-chn", "--config", str(env.config_path)]) == 2
    assert f"did you mean {SARAH}?" in capsys.readouterr().err


def test_a_fact_id_two_entities_use_asks_which(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "f001", "fact": "Sarah Chen owns a kayak"}))
    env.agent_edit(ATLAS, lambda facts: facts.append({"id": "f001", "fact": "Atlas ships in March"}))
    assert env.sync().exit_code == 0

    with pytest.raises(Ambiguous) as asked:
        history(env.cfg, "f001")
    assert asked.value.entities == [f"{SARAH}/f001", f"{ATLAS}/f001"]
    assert cli.main(["log", "f001", "--config", str(env.config_path)]) == 2
    said = capsys.readouterr().err
    assert f"{SARAH}/f001" in said and f"{ATLAS}/f001" in said
    picked = history(env.cfg, "people/sarah-chen/f001").changes
    assert [c.what for c in picked] == ["created"] and picked[0].paths == [f"{SARAH_DIR}/facts/f001.md"]


def test_an_entity_archived_and_renamed_keeps_its_story(env: Env) -> None:
    set_prop(env.fact_note(ATLAS_DIR, "atlas-005"), "category", "firmware")
    assert env.sync().exit_code == 0
    (env.vault / "4 Archives").mkdir(exist_ok=True)
    shutil.move(env.vault / ATLAS_DIR, env.vault / "4 Archives/atlas")
    assert env.sync().exit_code == 0
    assert (env.life / "archives/atlas/items.json").is_file()

    changes = history(env.cfg, "atlas").changes
    whats = [c.what for c in changes]
    assert any(w.startswith("category: ") and w.endswith("-> firmware") for w in whats)
    assert "moved from 1 Projects to 4 Archives" in whats
    assert whats[-1] == "created" and changes[-1].paths[0].startswith(f"{ATLAS_DIR}/")
    assert history(env.cfg, "archives/atlas").changes == changes
