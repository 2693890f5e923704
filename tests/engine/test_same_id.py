"""The agent and the person create a fact with the same id between two passes: both facts are kept.

The agent's keeps its id (other records and the agent itself may already refer to it); the person's note gets
an id of its own and is renamed to it, as a new note from the Fact template would be.
"""

from __future__ import annotations

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env

AGENTS = "Sarah Chen flies to Shenzhen on 2026-12-09"
PERSONS = "Sarah Chen prefers tea to coffee"


@pytest.mark.parametrize(("named", "with_id"), [("sarah-chen-007", True), ("sarah-chen-007", False), ("Tea", True)])
def test_the_same_new_id_on_both_sides_keeps_both_facts(env: Env, named: str, with_id: bool) -> None:
    facts = env.vault / SARAH_DIR / "facts"
    props = ("id: sarah-chen-007\n" if with_id else "") + "category: preference\n"
    (facts / f"{named}.md").write_text(f"---\n{props}---\n{PERSONS}\n", encoding="utf-8")
    agents = {"id": "sarah-chen-007", "fact": AGENTS, "category": "schedule", "timestamp": "2026-12-01"}
    env.agent_edit(SARAH, lambda fs: fs.append({**agents, "source": "memory/2026-12-01.md", "status": "active"}))

    report = env.sync()

    assert report.exit_code == 0 and not report.conflicts, report.to_json()
    agent = env.fact(SARAH, "sarah-chen-007")
    assert agent["fact"] == AGENTS and agent["category"] == "schedule"
    person = env.fact_by_text(SARAH, PERSONS)
    assert person["id"] != "sarah-chen-007" and person["category"] == "preference"
    assert env.fact_note(SARAH_DIR, "sarah-chen-007").read_text(encoding="utf-8").rstrip().endswith(AGENTS)
    assert env.fact_note(SARAH_DIR, person["id"]).read_text(encoding="utf-8").rstrip().endswith(PERSONS)
    assert not list(facts.glob("*conflict*")) and not (facts / "Tea.md").exists()
    again = env.sync()
    assert again.files_written == 0 and again.exit_code == 0, again.to_json()
