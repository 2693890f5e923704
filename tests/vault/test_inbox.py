"""The fact inbox: a fact an agent proposes (``status: proposed``) waits in the Inbox view of Memory.base, out of
the active facts, until the person sets it to ``active`` (or ``rejected``) in Obsidian and a pass carries that
back to items.json.
"""

from __future__ import annotations

import yaml
from helpers.twoway import SARAH, SARAH_DIR, Env


def test_a_proposed_fact_waits_in_the_inbox_until_accepted(env: Env) -> None:
    env.agent_edit(
        SARAH,
        lambda facts: facts.append(
            {"id": "sarah-chen-099", "fact": "Sarah Chen moved to Lisbon", "category": "location"}
            | {"timestamp": "2026-11-30", "source": "extract", "status": "proposed"}
        ),
    )
    env.sync()
    note = env.vault / SARAH_DIR / "facts/sarah-chen-099.md"
    assert "status: proposed" in note.read_text()
    entity = (env.vault / SARAH_DIR / "sarah-chen.md").read_text()
    active_before = yaml.safe_load(entity.split("---")[1])["facts_active"]
    base = yaml.safe_load((env.vault / "Memory.base").read_text())
    views = {v["name"]: v for v in base["views"]}
    assert views["Inbox"]["filters"] == {"and": ['status == "proposed"']}
    assert views["Active facts"]["filters"] == {"and": ['status == "active"']}
    assert 'status != "rejected"' in views["By category"]["filters"]["and"]
    note.write_text(note.read_text().replace("status: proposed", "status: active"))  # the person accepts it
    env.sync()
    assert env.fact(SARAH, "sarah-chen-099")["status"] == "active"
    entity = (env.vault / SARAH_DIR / "sarah-chen.md").read_text()
    assert yaml.safe_load(entity.split("---")[1])["facts_active"] == active_before + 1


def test_a_rejected_fact_is_kept(env: Env) -> None:
    env.agent_edit(
        SARAH,
        lambda facts: facts.append({"id": "sarah-chen-098", "fact": "Sarah Chen owns a boat", "status": "proposed"}),
    )
    env.sync()
    note = env.vault / SARAH_DIR / "facts/sarah-chen-098.md"
    note.write_text(note.read_text().replace("status: proposed", "status: rejected"))
    env.sync()
    assert env.fact(SARAH, "sarah-chen-098") == {
        "id": "sarah-chen-098",
        "fact": "Sarah Chen owns a boat",
        "status": "rejected",
    }
