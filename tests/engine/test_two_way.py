"""The two-way sync, one hand edit at a time, each against a real memory tree, vault and git repository.

Every test starts from vault-example after one clean first pass (built once, copied per test). The person
edits notes the way Obsidian writes them; the agent edits its files the way an agent does (``json.dumps`` with
indent 2, appending to markdown). Where it makes sense a test runs again with a concurrent agent edit, and both
edits must survive the pass.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.twoway import (
    ACME,
    ACME_DIR,
    AGENT_NAME,
    ATLAS,
    ATLAS_DIR,
    LIWEI,
    LIWEI_DIR,
    MIGUEL,
    MIGUEL_DIR,
    SARAH,
    SARAH_DIR,
    STAMP,
    Env,
    assert_diff_only_touches,
    body_of,
    changed_lines,
    dump_items,
    obsidian_reserialise,
    props_of,
    replace_text,
    set_body,
    set_prop,
)

from vaultsync.model import ExitCode


def assert_clean(report: Any) -> None:
    assert not report.stopped, report.stopped
    assert report.conflicts == [] and report.open_conflicts == [], report.to_json()
    assert report.exit_code == 0, report.to_json()


def assert_quiet(env: Env) -> None:
    """A pass with no edits on either side writes nothing and commits nothing (invariant 1)."""
    head = env.head()
    before = env.snapshot()
    report = env.sync()
    assert_clean(report)
    assert report.files_written == 0, report.actions
    assert report.commits == []
    assert env.head() == head
    assert env.snapshot() == before
    assert env.git("status", "--porcelain") == "", "a change in the vault was left out of git"


# -- agent edits used alongside the person's --------------------------------------------------------------
def agent_sets(rel: str, fact_id: str, **values: Any) -> Any:
    def edit(env: Env) -> None:
        def change(facts: list[dict[str, Any]]) -> None:
            next(f for f in facts if f.get("id") == fact_id).update(values)

        env.agent_edit(rel, change)

    edit.expect = (rel, fact_id, values)  # type: ignore[attr-defined]
    return edit


AGENT_OTHER_FACT = agent_sets(SARAH, "sarah-chen-006", source="email from Sarah, 2026-11-24")
AGENT_SAME_FACT_OTHER_FIELD = agent_sets(SARAH, "sarah-chen-004", source="call on 2026-10-21", accessCount=3)


def check_agent_edit(env: Env, agent: Any) -> None:
    if agent is None:
        return
    rel, fact_id, values = agent.expect
    fact = env.fact(rel, fact_id)
    for key, value in values.items():
        assert fact[key] == value
    note_props = props_of(env.fact_note(SARAH_DIR, fact_id))
    for key, value in values.items():
        assert note_props[key] == value, f"the agent's {key} did not reach the vault note"


AGENT_VARIANTS = [
    pytest.param(None, id="alone"),
    pytest.param(AGENT_OTHER_FACT, id="agent-edits-other-fact"),
    pytest.param(AGENT_SAME_FACT_OTHER_FIELD, id="agent-edits-same-fact-other-field"),
]


# -- fact notes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("agent", AGENT_VARIANTS)
def test_edit_fact_text(env: Env, agent: Any) -> None:
    new_text = "Sarah Chen prefers a written agenda two working days before any meeting, as [[li-wei|Li Wei]] does"
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), new_text + "\n")
    if agent:
        agent(env)
    before = env.items_path(SARAH).read_bytes()

    report = env.sync()

    assert_clean(report)
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == new_text
    assert_diff_only_touches(before, env.items_path(SARAH).read_bytes(), [new_text])
    assert body_of(env.fact_note(SARAH_DIR, "sarah-chen-004")) == new_text + "\n"
    check_agent_edit(env, agent)
    assert_quiet(env)


@pytest.mark.parametrize("agent", AGENT_VARIANTS)
def test_edit_fact_property(env: Env, agent: Any) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    set_prop(note, "category", "habit")
    if agent:
        agent(env)
    before = env.items_path(SARAH).read_bytes()
    others = [f for f in env.facts(SARAH) if f["id"] != "sarah-chen-004"]

    report = env.sync()

    assert_clean(report)
    fact = env.fact(SARAH, "sarah-chen-004")
    assert fact["category"] == "habit"
    assert fact["fact"] == "Sarah Chen prefers a written agenda the day before any meeting"
    assert [f for f in env.facts(SARAH) if f["id"] != "sarah-chen-004"] == others
    assert_diff_only_touches(before, env.items_path(SARAH).read_bytes(), ["habit"])
    assert props_of(note)["category"] == "habit"
    check_agent_edit(env, agent)
    assert_quiet(env)


SUPERSEDE_CASES = [
    pytest.param(SARAH, SARAH_DIR, "sarah-chen-001", '"[[sarah-chen-004]]"', "supersededBy", id="link"),
    pytest.param(SARAH, SARAH_DIR, "sarah-chen-001", "sarah-chen-004", "supersededBy", id="bare-id"),
    # acme-corp's facts have no ids: their notes are named by vaultsync, and the person types such a name.
    pytest.param(ACME, ACME_DIR, "After the Q4 reorg", "Acme Corp pays invoices", "superseded_by", id="acme"),
]


@pytest.mark.parametrize(("rel", "vault_dir", "which", "written", "key"), SUPERSEDE_CASES)
@pytest.mark.parametrize("agent", [None, "agent-edits-other-fact"])
def test_supersede_fact(
    env: Env, rel: str, vault_dir: str, which: str, written: str, key: str, agent: str | None
) -> None:
    if rel == ACME:
        note = env.fact_note_by_text(vault_dir, which)
        written = env.fact_note_by_text(vault_dir, written).stem
        find = lambda: env.fact_by_text(rel, which)  # noqa: E731
    else:
        note = env.fact_note(vault_dir, which)
        find = lambda: env.fact(rel, which)  # noqa: E731
    bare = written.strip('"[]')
    set_prop(note, "status", "superseded")
    set_prop(note, "supersededBy", written)
    if agent:

        def change(facts: list[dict[str, Any]]) -> None:
            facts[-1]["source"] = "re-checked with Nora"

        env.agent_edit(rel, change)
    before = env.items_path(rel).read_bytes()
    before_fact = find()

    report = env.sync()

    assert_clean(report)
    fact = find()
    assert fact["status"] == "superseded"
    assert fact[key] == bare
    other = "supersededBy" if key == "superseded_by" else "superseded_by"
    assert other not in fact, "the superseding id went under a key this file does not use"
    assert {k: v for k, v in fact.items() if k not in ("status", key)} == {
        k: v for k, v in before_fact.items() if k not in ("status", key)
    }
    assert_diff_only_touches(before, env.items_path(rel).read_bytes(), ["superseded", bare])
    assert props_of(note)["status"] == "superseded"
    if rel == SARAH:
        assert props_of(note)["supersededBy"] == "[[sarah-chen-004]]"
        entity = props_of(env.note(f"{SARAH_DIR}/sarah-chen.md"))
        assert (entity["facts_active"], entity["facts_superseded"]) == (4, 2)
    if agent:
        assert env.facts(rel)[-1]["source"] == "re-checked with Nora"
    assert_quiet(env)


FACT_TEMPLATE = """\
---
status: active
category: {category}
timestamp: {day}
source: manual
---

{text}
"""

NEW_FACT_CASES = [
    pytest.param(SARAH, SARAH_DIR, "template", None, id="sarah-template"),
    pytest.param(SARAH, SARAH_DIR, "template", "agent-adds-fact", id="sarah-template-agent-adds"),
    pytest.param(SARAH, SARAH_DIR, "bare", None, id="sarah-no-frontmatter"),
    pytest.param(ACME, ACME_DIR, "template", None, id="acme-template"),
    pytest.param(ACME, ACME_DIR, "bare", "agent-adds-fact", id="acme-no-frontmatter-agent-adds"),
]


@pytest.mark.parametrize(("rel", "vault_dir", "form", "agent"), NEW_FACT_CASES)
def test_create_fact_note_without_id(env: Env, rel: str, vault_dir: str, form: str, agent: str | None) -> None:
    slug = rel.rsplit("/", 1)[-1]
    text = "Sarah Chen drinks oolong tea at the Thursday check-in"
    ts_key = "date" if rel == ACME else "timestamp"
    today = date(2026, 12, 3)
    new_note = env.vault / vault_dir / "facts" / "Untitled.md"
    if form == "template":
        new_note.write_text(FACT_TEMPLATE.format(category="preference", day="2026-12-02", text=text), encoding="utf-8")
        expected = {"status": "active", "category": "preference", ts_key: "2026-12-02", "source": "manual"}
    else:
        new_note.write_text(text + "\n", encoding="utf-8")
        expected = {"status": "active", ts_key: today.isoformat(), "source": "manual"}
    agent_fact = {"fact": "Agent-side fact added during the same pass", "category": "context", "status": "active"}
    if agent:
        if rel == SARAH:
            agent_fact["id"] = "sarah-chen-007"
        env.agent_edit(rel, lambda facts: facts.append(dict(agent_fact)))
    count = len(env.facts(rel))

    report = env.sync(today=today)

    assert_clean(report)
    facts = env.facts(rel)
    assert len(facts) == count + 1
    # the entity's own scheme: after sarah-chen-006 (and the agent's 007), or the first of an id-less file
    minted = {SARAH: "sarah-chen-008" if agent else "sarah-chen-007", ACME: f"{slug}-001"}[rel]
    new = [f for f in facts if f.get("id") == minted]
    assert new == [{"id": minted, "fact": text, **expected}]
    assert "timestamp" not in new[0] or ts_key == "timestamp"
    if agent:
        assert [f for f in facts if f["fact"] == agent_fact["fact"]] == [agent_fact]
    assert not new_note.exists(), "the note was not renamed to its id"
    renamed = env.fact_note(vault_dir, minted)
    assert props_of(renamed)["id"] == minted
    assert body_of(renamed).strip() == text
    assert_quiet(env)


def test_minted_ids_count_up_and_are_never_reused(env: Env) -> None:
    facts_dir = env.vault / SARAH_DIR / "facts"
    (facts_dir / "Untitled.md").write_text("First fact typed by Nora\n", encoding="utf-8")
    (facts_dir / "Untitled 1.md").write_text("Second fact typed by Nora\n", encoding="utf-8")
    assert_clean(env.sync())
    minted = {f["id"]: f["fact"] for f in env.facts(SARAH) if f["fact"].endswith("typed by Nora")}
    assert set(minted) == {"sarah-chen-007", "sarah-chen-008"}
    for fact_id, text in minted.items():
        assert body_of(env.fact_note(SARAH_DIR, fact_id)).strip() == text

    (facts_dir / "sarah-chen-008.md").unlink()
    assert_clean(env.sync())
    assert "sarah-chen-008" not in {f["id"] for f in env.facts(SARAH)}

    (facts_dir / "Untitled.md").write_text("Third fact typed by Nora\n", encoding="utf-8")
    assert_clean(env.sync())
    third = env.fact_by_text(SARAH, "Third fact")
    assert third["id"] == "sarah-chen-009", "an id that once existed was minted again"
    assert env.fact_note(SARAH_DIR, "sarah-chen-009").exists()


@pytest.mark.parametrize("agent", [None, AGENT_OTHER_FACT])
def test_delete_fact_note(env: Env, agent: Any) -> None:
    env.fact_note(SARAH_DIR, "sarah-chen-003").unlink()
    if agent:
        agent(env)
    doc = env.items_doc(SARAH)
    expected = [f for f in doc if f["id"] != "sarah-chen-003"]

    report = env.sync()

    assert_clean(report)
    assert env.facts(SARAH) == expected
    assert env.items_path(SARAH).read_bytes() == dump_items(expected)
    assert not env.fact_note(SARAH_DIR, "sarah-chen-003").exists()
    check_agent_edit(env, agent)
    assert_quiet(env)


def test_delete_entity_folder(env: Env) -> None:
    items = env.items_path(LIWEI).read_bytes()
    summary = (env.life / LIWEI / "summary.md").read_bytes()
    shutil.rmtree(env.vault / LIWEI_DIR)

    report = env.sync()
    # Six units of one entity are under the default share (25%) of the vault: the guard lets it through.
    assert not report.stopped, report.stopped
    assert_clean(report)
    assert not env.items_path(LIWEI).exists()
    assert not (env.life / LIWEI / "summary.md").exists()
    trash = env.cfg.state_dir / "trash" / STAMP / "life" / LIWEI
    assert (trash / "items.json").read_bytes() == items
    assert (trash / "summary.md").read_bytes() == summary
    assert not (env.vault / LIWEI_DIR).exists() or not any((env.vault / LIWEI_DIR).rglob("*.md"))
    assert_quiet(env)


@pytest.mark.parametrize("how", ["every-note", "whole-para-folder"])
def test_deletion_guard_stops_mass_delete(env: Env, how: str) -> None:
    """Every note of ``2 Areas`` deleted is held by the shrink guard (exit 7; once a stop, the same bound); the
    whole folder gone is a missing folder, which stops the pass (exit 4). Either holds on the next pass, until
    the person accepts (``accept``) or confirms (``--yes``)."""
    items = env.items_path(SARAH).read_bytes()
    if how == "every-note":
        # 23 of the vault's 47 units: over both the share (25%) and the count (5).
        for note in (env.vault / "2 Areas").rglob("*.md"):
            note.unlink()
    else:
        shutil.rmtree(env.vault / "2 Areas")
    head = env.head()
    before = env.snapshot()

    report = env.sync()

    code = ExitCode.HELD if how == "every-note" else ExitCode.SAFETY_STOP
    if how == "every-note":
        assert not report.stopped and "deleted 23 of 47 units at once" in report.held[0].rule, report.to_json()
    else:
        assert "is missing" in report.stopped
    assert report.exit_code == code
    assert report.commits == [] and report.files_written == 0
    assert env.snapshot() == before, "a stopped pass wrote something"
    assert env.head() == head
    again = env.sync()
    assert again.exit_code == code, "the stop did not hold on the next pass"

    confirmed = env.sync(confirm_deletes=True) if how != "every-note" else env.sync(accept=frozenset({"all"}))
    assert not confirmed.stopped
    assert confirmed.exit_code == 0, confirmed.to_json()
    for rel in (SARAH, MIGUEL, LIWEI, ACME):
        assert not env.items_path(rel).exists()
    assert (env.cfg.state_dir / "trash" / STAMP / "life" / SARAH / "items.json").read_bytes() == items
    assert env.items_path(ATLAS).exists(), "an entity outside the deleted folder went too"


@pytest.mark.parametrize("agent", [None, "agent-edits-fact"])
def test_move_entity_between_para_folders(env: Env, agent: str | None) -> None:
    old_files = {p.name: p.read_bytes() for p in (env.life / MIGUEL).iterdir()}
    new_text = "Miguel Ortiz shipped firmware v0.9 for the Project Atlas pilot units on 2026-12-04"
    if agent:

        def change(facts: list[dict[str, Any]]) -> None:
            next(f for f in facts if f["id"] == "miguel-ortiz-003")["fact"] = new_text

        env.agent_edit(MIGUEL, change)
        old_files["items.json"] = env.items_path(MIGUEL).read_bytes()
    new_dir = "4 Archives/people/miguel-ortiz"
    (env.vault / new_dir).parent.mkdir(parents=True)
    shutil.move(env.vault / MIGUEL_DIR, env.vault / new_dir)

    report = env.sync()

    assert_clean(report)
    moved = env.life / "archives/people/miguel-ortiz"
    assert not (env.life / MIGUEL).exists(), "the old memory folder is still there"
    assert {p.name: p.read_bytes() for p in moved.iterdir()} == old_files
    assert not (env.vault / MIGUEL_DIR).exists()
    assert body_of(env.vault / new_dir / "miguel-ortiz.md").startswith(old_files["summary.md"].decode())
    if agent:
        assert body_of(env.vault / new_dir / "facts" / "miguel-ortiz-003.md") == new_text + "\n"
    assert_quiet(env)


def test_moved_entity_note_views_its_new_facts_folder(env: Env) -> None:
    new_dir = "4 Archives/people/miguel-ortiz"
    (env.vault / new_dir).parent.mkdir(parents=True)
    shutil.move(env.vault / MIGUEL_DIR, env.vault / new_dir)

    assert_clean(env.sync())

    entity_note = (env.vault / new_dir / "miguel-ortiz.md").read_text(encoding="utf-8")
    assert f'file.inFolder("{new_dir}/facts")' in entity_note
    assert f'file.inFolder("{MIGUEL_DIR}/facts")' not in entity_note


@pytest.mark.parametrize("agent", [None, "with-a-fact-note", "agent-creates-other-entity"])
def test_create_entity_note(env: Env, agent: str | None) -> None:
    body = "# James\n\nJames lives next door and waters the plants when Nora travels.\n"
    note = env.vault / "2 Areas/people/james/james.md"
    note.parent.mkdir(parents=True)
    note.write_text(body, encoding="utf-8")
    if agent == "with-a-fact-note":
        (note.parent / "facts").mkdir()
        fact_note = note.parent / "facts" / "Untitled.md"
        fact_note.write_text(FACT_TEMPLATE.format(category="context", day="2026-12-01", text="Has a key"), "utf-8")
    maria = "# Maria\n\nMaria runs the tool library on Alder Street.\n"
    if agent == "agent-creates-other-entity":
        (env.life / "areas/people/maria").mkdir()
        (env.life / "areas/people/maria/summary.md").write_text(maria, encoding="utf-8")

    report = env.sync()

    assert_clean(report)
    assert (env.life / "areas/people/james/summary.md").read_bytes() == body.encode()
    assert body_of(note).startswith(body), "the person's text did not stay the note's body"
    assert props_of(note)["kind"] == "people"
    if agent == "with-a-fact-note":
        assert env.facts("areas/people/james") == [
            {
                "id": "james-001",
                "fact": "Has a key",
                "status": "active",
                "category": "context",
                "timestamp": "2026-12-01",
                "source": "manual",
            }
        ]
        assert not fact_note.exists() and env.fact_note("2 Areas/people/james", "james-001").exists()
    if agent == "agent-creates-other-entity":
        assert body_of(env.vault / "2 Areas/people/maria/maria.md").startswith(maria)
        assert (env.life / "areas/people/maria/summary.md").read_bytes() == maria.encode()
    assert_quiet(env)


# -- entity notes and workspace files ------------------------------------------------------------------------
@pytest.mark.parametrize("agent", [None, "agent-appends-to-summary", "agent-supersedes-fact"])
def test_edit_entity_note_body(env: Env, agent: str | None) -> None:
    summary_path = env.life / SARAH / "summary.md"
    summary = summary_path.read_text(encoding="utf-8")
    old_line, new_line = "She is organised and direct:", "She is organised, calm and direct:"
    replace_text(env.note(f"{SARAH_DIR}/sarah-chen.md"), old_line, new_line)
    expected = summary.replace(old_line, new_line)
    if agent == "agent-appends-to-summary":
        added = "- Drinks oolong at the check-in, like Nora\n"
        summary_path.write_text(summary + added, encoding="utf-8")
        expected += added
    elif agent == "agent-supersedes-fact":

        def change(facts: list[dict[str, Any]]) -> None:
            facts[3].update(status="superseded", supersededBy="sarah-chen-006")

        env.agent_edit(SARAH, change)

    report = env.sync()

    assert_clean(report)
    assert summary_path.read_text(encoding="utf-8") == expected
    assert body_of(env.note(f"{SARAH_DIR}/sarah-chen.md")).startswith(expected)
    if agent == "agent-supersedes-fact":
        assert props_of(env.note(f"{SARAH_DIR}/sarah-chen.md"))["facts_superseded"] == 2
        assert env.fact(SARAH, "sarah-chen-004")["supersededBy"] == "sarah-chen-006"
    assert_quiet(env)


WORKSPACE_FILES = [
    pytest.param(
        "Daily/2026-11-30.md",
        "memory/2026-11-30.md",
        "- 09:20 Asked Miguel Ortiz about the two silent pilot units",
        "- 09:20 Asked Miguel Ortiz (firmware) about the two silent pilot units",
        "- 18:10 Evening check: nothing new\n",
        id="daily",
    ),
    pytest.param(
        "3 Resources/agent/MEMORY.md",
        "MEMORY.md",
        "- Drinks tea, not coffee",
        "- Drinks tea, never coffee",
        "\n## Garden [P2] [2026-12-01]\n- Tomatoes go in after the last frost\n",
        id="MEMORY",
    ),
    pytest.param(
        "3 Resources/agent/HEARTBEAT.md",
        "HEARTBEAT.md",
        "- [ ] Book Shenzhen flights once the visa is approved",
        "- [x] Book Shenzhen flights once the visa is approved",
        "- Flight prices for PDX to SZX (watching)\n",
        id="HEARTBEAT",
    ),
]


@pytest.mark.parametrize(("note_rel", "mem_rel", "old", "new", "append"), WORKSPACE_FILES)
@pytest.mark.parametrize("agent", [None, "agent-appends"])
def test_edit_workspace_file(
    env: Env, note_rel: str, mem_rel: str, old: str, new: str, append: str, agent: str | None
) -> None:
    mem = env.mem_file(mem_rel)
    original = mem.read_text(encoding="utf-8")
    replace_text(env.note(note_rel), old, new)
    expected = original.replace(old, new)
    if agent:
        mem.write_text(original + append, encoding="utf-8")
        expected += append

    report = env.sync()

    assert_clean(report)
    assert mem.read_text(encoding="utf-8") == expected
    assert env.note(note_rel).read_text(encoding="utf-8") == expected
    assert_quiet(env)


def test_concurrent_agent_and_person_edits_all_survive(env: Env) -> None:
    # The person, in Obsidian:
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants the agenda two days ahead\n")
    set_prop(env.fact_note(MIGUEL_DIR, "miguel-ortiz-004"), "category", "contact")
    (env.vault / ATLAS_DIR / "facts" / "Untitled.md").write_text("Pilot readout room is 4B\n", encoding="utf-8")
    replace_text(env.note("Daily/2026-12-01.md"), "two emails from Acme Corp", "two emails from Acme Corp (Sarah)")

    # The agent, meanwhile:
    def sarah(facts: list[dict[str, Any]]) -> None:
        next(f for f in facts if f["id"] == "sarah-chen-006").update(status="superseded", supersededBy="sarah-chen-007")
        facts.append(
            {
                "id": "sarah-chen-007",
                "fact": "Sarah Chen moved the leadership readout to 2026-12-11",
                "category": "milestone",
                "timestamp": "2026-12-01",
                "source": "email",
                "status": "active",
                "supersededBy": None,
            }
        )

    env.agent_edit(SARAH, sarah)

    def atlas(facts: list[dict[str, Any]]) -> None:
        facts[0]["fact"] = facts[0]["fact"] + " (contract extended to 2027)"

    env.agent_edit(ATLAS, atlas)
    daily = env.mem_file("memory/2026-12-01.md")
    agent_line = "- 17:40 Li Wei sent the DHL tracking number\n"
    daily.write_text(daily.read_text(encoding="utf-8") + agent_line, encoding="utf-8")
    # A rewrite of the kind a day brings (a summary cut to one line would be held by the shrink guard instead).
    li_summary = (
        (env.life / LIWEI / "summary.md")
        .read_text(encoding="utf-8")
        .replace("He is hosting the factory visit", "He sent the DHL tracking number and is hosting the factory visit")
    )
    (env.life / LIWEI / "summary.md").write_text(li_summary, encoding="utf-8")

    report = env.sync()

    assert_clean(report)
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == "Sarah Chen wants the agenda two days ahead"
    assert env.fact(MIGUEL, "miguel-ortiz-004")["category"] == "contact"
    assert env.fact(ATLAS, "atlas-007")["fact"] == "Pilot readout room is 4B"
    assert env.fact(SARAH, "sarah-chen-006")["status"] == "superseded"
    assert env.fact(SARAH, "sarah-chen-007")["timestamp"] == "2026-12-01"
    assert env.fact(ATLAS, "atlas-001")["fact"].endswith("(contract extended to 2027)")
    text = daily.read_text(encoding="utf-8")
    assert "two emails from Acme Corp (Sarah)" in text and text.endswith(agent_line)
    assert env.note("Daily/2026-12-01.md").read_text(encoding="utf-8") == text
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-006"))["supersededBy"] == "[[sarah-chen-007]]"
    assert (
        body_of(env.fact_note(SARAH_DIR, "sarah-chen-007")) == "Sarah Chen moved the leadership readout to 2026-12-11\n"
    )
    assert body_of(env.fact_note(ATLAS_DIR, "atlas-001")).endswith("(contract extended to 2027)\n")
    assert body_of(env.note(f"{LIWEI_DIR}/li-wei.md")).startswith(li_summary)
    assert (env.life / LIWEI / "summary.md").read_text(encoding="utf-8") == li_summary
    assert_quiet(env)


# -- conflicts ---------------------------------------------------------------------------------------------
def _conflict_fact_field(env: Env) -> tuple[str, Any]:
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-004"), "category", "habit")
    agent_sets(SARAH, "sarah-chen-004", category="routine")(env)
    return f"{SARAH_DIR}/facts/sarah-chen-004.md", lambda: env.fact(SARAH, "sarah-chen-004")["category"] == "routine"


def _conflict_fact_text(env: Env) -> tuple[str, Any]:
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants the agenda a week ahead\n")
    agent_sets(SARAH, "sarah-chen-004", fact="Sarah Chen wants the agenda by Monday")(env)
    return (
        f"{SARAH_DIR}/facts/sarah-chen-004.md",
        lambda: env.fact(SARAH, "sarah-chen-004")["fact"] == "Sarah Chen wants the agenda by Monday",
    )


def _conflict_daily(env: Env) -> tuple[str, Any]:
    line = "- 15:00 Nora drafted the November invoice for Acme Corp (Project Atlas design work, 62 hours)"
    replace_text(env.note("Daily/2026-11-30.md"), line, line.replace("62 hours", "64 hours"))
    mem = env.mem_file("memory/2026-11-30.md")
    mem.write_text(mem.read_text(encoding="utf-8").replace("62 hours", "60 hours"), encoding="utf-8")
    return "Daily/2026-11-30.md", lambda: "60 hours" in mem.read_text(encoding="utf-8")


def _conflict_summary(env: Env) -> tuple[str, Any]:
    replace_text(env.note(f"{SARAH_DIR}/sarah-chen.md"), "Thursdays 10:30 (was", "Thursdays 11:00 (was")
    summary = env.life / SARAH / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8").replace("Thursdays 10:30 (was", "Fridays 10:30 (was"))
    return f"{SARAH_DIR}/sarah-chen.md", lambda: "Fridays 10:30 (was" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("make", [_conflict_fact_field, _conflict_fact_text, _conflict_daily, _conflict_summary])
def test_conflict_keeps_memory_value_and_a_copy(env: Env, make: Any) -> None:
    note_rel, memory_won = make(env)
    persons_version = env.note(note_rel).read_bytes()
    count = len(env.facts(SARAH))

    report = env.sync()

    copy_rel = note_rel.removesuffix(".md") + f".vaultsync-conflict-{STAMP}.md"
    assert [c.copy_path for c in report.conflicts] == [copy_rel]
    assert report.open_conflicts == [copy_rel]
    assert report.exit_code == 1
    assert env.note(copy_rel).read_bytes() == persons_version
    assert memory_won()
    note = env.note(note_rel).read_text(encoding="utf-8")
    assert "<<<<<<<" not in note and ">>>>>>>" not in note
    assert env.git("status", "--porcelain") == "", "the conflict pass left changes out of git"
    assert env.git("log", "-1", "--format=%H", "--", copy_rel).strip(), "the conflict copy is not in git"
    # Both trees hold the memory side's value: a further pass has nothing to carry either way.
    later = env.sync(now=lambda: datetime(2026, 12, 1, 10, 0, 0))
    assert later.conflicts == []
    assert later.open_conflicts == [copy_rel]
    assert later.exit_code == 1, "an open conflict copy must keep the exit code at 1"
    assert later.files_written == 0
    assert len(env.facts(SARAH)) == count, "the conflict copy was taken for a new fact"

    env.note(copy_rel).unlink()
    resolved = env.sync(now=lambda: datetime(2026, 12, 1, 10, 30, 0))
    assert_clean(resolved)
    assert memory_won()
    assert_quiet(env)


def test_resolving_a_conflict_is_committed(env: Env) -> None:
    note_rel, _ = _conflict_fact_field(env)
    copy_rel = note_rel.removesuffix(".md") + f".vaultsync-conflict-{STAMP}.md"
    assert env.sync().exit_code == 1
    env.note(copy_rel).unlink()

    assert_clean(env.sync(now=lambda: datetime(2026, 12, 1, 10, 30, 0)))

    assert env.git("status", "--porcelain") == "", "the resolution (the copy's deletion) was left out of git"
    assert_quiet(env)


def test_conflict_on_a_fact_field_is_named_and_the_vault_shows_memorys_value(env: Env) -> None:
    _conflict_fact_field(env)

    report = env.sync()

    [conflict] = report.conflicts
    assert conflict.key == f"fact:{SARAH}#sarah-chen-004"
    assert "category" in conflict.detail
    assert "people/sarah-chen" in conflict.scope
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-004"))["category"] == "routine"
    assert props_of(env.note(conflict.copy_path))["category"] == "habit"


@pytest.mark.parametrize("who_deletes", ["person-deletes-note", "agent-deletes-fact", "person-deletes-entity"])
def test_delete_on_one_side_edit_on_the_other_keeps_the_edit(env: Env, who_deletes: str) -> None:
    if who_deletes == "person-deletes-note":
        env.fact_note(SARAH_DIR, "sarah-chen-003").unlink()
        text = "Sarah Chen leads Project Atlas; Miguel Ortiz and a new hire handle the firmware"
        agent_sets(SARAH, "sarah-chen-003", fact=text)(env)
        rel, vault_dir, fact_id = SARAH, SARAH_DIR, "sarah-chen-003"
    elif who_deletes == "agent-deletes-fact":
        text = "Sarah Chen leads Project Atlas (Nora's correction: and the enclosure reviews)"
        set_body(env.fact_note(SARAH_DIR, "sarah-chen-003"), text + "\n")
        env.agent_edit(SARAH, lambda facts: facts.pop(2))
        rel, vault_dir, fact_id = SARAH, SARAH_DIR, "sarah-chen-003"
    else:
        shutil.rmtree(env.vault / LIWEI_DIR)
        text = "Li Wei prefers WeChat voice messages to email"
        agent_sets(LIWEI, "li-wei-002", fact=text)(env)
        rel, vault_dir, fact_id = LIWEI, LIWEI_DIR, "li-wei-002"

    ids = [f["id"] for f in env.facts(SARAH)] if rel == SARAH else [fact_id]

    report = env.sync()

    assert_clean(report)
    assert sorted(f["id"] for f in env.facts(rel)) == sorted(set(ids) | {fact_id})
    kept = env.fact(rel, fact_id)
    assert kept["fact"] == text
    assert kept["category"] in ("relationship", "preference") and kept["status"] == "active"
    assert body_of(env.fact_note(vault_dir, fact_id)) == text + "\n"


# -- no base: both sides created the same unit -------------------------------------------------------------
@pytest.mark.parametrize("person_typed", [True, False], ids=["person-typed-a-line", "template-only"])
def test_daily_note_created_on_both_sides_is_merged(env: Env, person_typed: bool) -> None:
    day = date(2026, 12, 2)
    mem = env.mem_file("memory/2026-12-02.md")
    agent_text = "# 2026-12-02\n\n- 08:40 Morning check: inbox quiet\n- 09:00 Sample batch in customs\n"
    mem.write_text(agent_text, encoding="utf-8")
    person_text = "# 2026-12-02\n\n" + ("- Call the framing shop about the readout posters\n" if person_typed else "")
    note = env.note("Daily/2026-12-02.md")
    note.write_text(person_text, encoding="utf-8")

    report = env.sync(today=day)

    assert_clean(report)
    merged = mem.read_text(encoding="utf-8")
    assert note.read_text(encoding="utf-8") == merged
    lines = merged.splitlines()
    assert lines.count("# 2026-12-02") == 1
    for source in (agent_text, person_text):
        it = iter(lines)
        assert all(line in it for line in source.splitlines()), f"{source!r} is not kept in order in {merged!r}"
    if not person_typed:
        assert merged == agent_text
    assert_quiet(env)


def test_identical_content_on_both_sides_is_adopted_silently(env: Env) -> None:
    text = "# 2026-12-02\n\n- 08:40 Morning check: inbox quiet\n"
    mem = env.mem_file("memory/2026-12-02.md")
    mem.write_text(text, encoding="utf-8")
    note = env.note("Daily/2026-12-02.md")
    note.write_text(text, encoding="utf-8")
    mtimes = (mem.stat().st_mtime_ns, note.stat().st_mtime_ns)

    report = env.sync(today=date(2026, 12, 2))

    assert_clean(report)
    assert report.files_written == 0
    assert (mem.stat().st_mtime_ns, note.stat().st_mtime_ns) == mtimes
    assert mem.read_text(encoding="utf-8") == note.read_text(encoding="utf-8") == text
    assert not list((env.vault / "Daily").glob("*conflict*"))
    assert_quiet(env)


def test_identical_content_on_both_sides_ends_up_in_git(env: Env) -> None:
    text = "# 2026-12-02\n\n- 08:40 Morning check: inbox quiet\n"
    env.mem_file("memory/2026-12-02.md").write_text(text, encoding="utf-8")
    env.note("Daily/2026-12-02.md").write_text(text, encoding="utf-8")

    env.sync(today=date(2026, 12, 2))

    assert env.git("status", "--porcelain", "--", "Daily/2026-12-02.md") == ""
    assert env.git("log", "--format=%H", "--", "Daily/2026-12-02.md").strip()


# -- Obsidian rewriting frontmatter -------------------------------------------------------------------------
RESERIALISE_CASES = [
    pytest.param(SARAH, SARAH_DIR, "sarah-chen-004", {"unquote": ("source",)}, id="unquoted-yes-and-reordered"),
    pytest.param(ATLAS, ATLAS_DIR, "atlas-002", {}, id="flow-lists"),
    pytest.param(MIGUEL, MIGUEL_DIR, "miguel-ortiz-001", {"single_quote": ("entity",)}, id="flow-lists-single-quotes"),
]


@pytest.mark.parametrize("full", [0, 100, 2], ids=["scoped-pass", "full-pass", "batched-pass"])
@pytest.mark.parametrize(("rel", "vault_dir", "fact_id", "style"), RESERIALISE_CASES)
def test_obsidian_reserialising_frontmatter_is_not_an_edit(
    env: Env, rel: str, vault_dir: str, fact_id: str, style: dict[str, tuple[str, ...]], full: int
) -> None:
    """Nothing is written back and the memory is untouched, but the note as Obsidian saved it is committed as
    the person's: no pass would ever write it back, so it would otherwise stay uncommitted for good."""
    note = env.fact_note(vault_dir, fact_id)
    if "unquote" in style:
        # A value that YAML 1.1 would read as a boolean: it is written quoted, and Obsidian drops the quotes.
        agent_sets(rel, fact_id, source="yes")(env)
        env.sync()
        assert 'source: "yes"' in note.read_text(encoding="utf-8")
    before_note = note.read_text(encoding="utf-8")
    obsidian_reserialise(note, **style)
    assert note.read_text(encoding="utf-8") != before_note
    assert props_of(note) == props_of_text(before_note)
    items = env.items_path(rel)
    items_bytes, items_mtime = items.read_bytes(), items.stat().st_mtime_ns
    head = env.head()
    if full:
        (env.cfg.state_dir / "snapshot.json").unlink()  # no snapshot: the pass reads everything, `full` at a time

    report = env.sync(full_batch=full) if full else env.sync()

    assert_clean(report)
    assert report.files_written == 0, report.actions
    assert (items.read_bytes(), items.stat().st_mtime_ns) == (items_bytes, items_mtime)
    assert report.changes == []
    shown = note.relative_to(env.vault).as_posix()
    assert env.commits_since(head) == report.commits and len(report.commits) == 1
    author, subject, paths = env.commit_info(report.commits[0])
    assert author != AGENT_NAME and paths == {shown}
    assert subject == f"vault -> memory: {rel.split('/', 1)[1] if rel.startswith('areas/') else rel} re-saved"
    assert env.git("show", f"HEAD:{shown}") == note.read_text(encoding="utf-8")
    assert env.git("status", "--porcelain", "--", shown) == ""
    again = env.sync()
    assert again.commits == [] and again.files_written == 0


def props_of_text(text: str) -> dict[str, Any]:
    from vaultsync.text.yamlcore import parse_properties, split_note

    fm, _ = split_note(text)
    assert fm is not None
    return parse_properties(fm)


# -- git authors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "identity",
    [
        "config",
        "git-global",
        "git-repo",
        "fallback",
    ],
)
def test_person_commit_then_agent_commit(env: Env, tmp_path: Path, identity: str) -> None:
    if identity == "config":
        env.reconfigure(person_name="Nora Config", person_email="nora@config.example")
        person = "Nora Config"
    elif identity == "git-global":
        (tmp_path / "git-env" / "gitconfig-global").write_text(
            "[user]\n\tname = Nora Global\n\temail = nora@global.example\n", encoding="utf-8"
        )
        (tmp_path / "git-env" / "home" / ".gitconfig").write_text(
            "[user]\n\tname = Decoy Home\n\temail = decoy@home.example\n", encoding="utf-8"
        )
        person = "Nora Global"
    elif identity == "git-repo":
        env.git("config", "user.name", "Nora Repo")
        env.git("config", "user.email", "nora@repo.example")
        person = "Nora Repo"
    else:
        person = "vault person"
    old_head = env.head()
    old_history = set(env.git("rev-list", "HEAD").split())
    person_note = f"{SARAH_DIR}/facts/sarah-chen-004.md"
    set_prop(env.vault / person_note, "category", "habit")
    AGENT_OTHER_FACT(env)

    report = env.sync()

    assert_clean(report)
    new = env.commits_since(old_head)
    assert new == report.commits and len(new) == 2
    person_author, person_subject, person_paths = env.commit_info(new[0])
    agent_author, agent_subject, agent_paths = env.commit_info(new[1])
    assert person_author == person
    assert person_paths == {person_note}
    assert person_subject.startswith("vault -> memory") and "people/sarah-chen" in person_subject
    assert agent_author == AGENT_NAME
    assert f"{SARAH_DIR}/facts/sarah-chen-006.md" in agent_paths and person_note not in agent_paths
    assert agent_subject.startswith("memory -> vault") and "people/sarah-chen" in agent_subject
    assert env.git("log", f"--author={person}", "--format=%H").split() == [new[0]]
    agent_commits = env.git("log", f"--author={AGENT_NAME}", "--format=%H").split()
    assert new[1] in agent_commits and new[0] not in agent_commits
    assert (
        subprocess.run(["git", "merge-base", "--is-ancestor", old_head, "HEAD"], cwd=env.vault, check=False).returncode
        == 0
    ), "history was rewritten"
    assert old_history <= set(env.git("rev-list", "HEAD").split())
    assert env.git("status", "--porcelain", "--", person_note, f"{SARAH_DIR}/facts/sarah-chen-006.md") == ""


def test_agent_name_from_config(env: Env) -> None:
    env.reconfigure(agent_name="Nora's agent", agent_email="agent@nora.example")
    old_head = env.head()
    AGENT_OTHER_FACT(env)

    report = env.sync()

    assert_clean(report)
    assert [env.commit_info(c)[0] for c in env.commits_since(old_head)] == ["Nora's agent"]
    assert not env.git("log", f"{old_head}..HEAD", "--author=vault person", "--format=%H").strip()


def test_only_the_edited_lines_of_items_json_change_across_both_directions(env: Env) -> None:
    """A person's edit and the agent's edit in one pass: the file differs from the agent's only by one line."""
    AGENT_OTHER_FACT(env)
    agent_bytes = env.items_path(SARAH).read_bytes()
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-002"), "category", "calendar")

    env.sync()

    gone, added = changed_lines(agent_bytes, env.items_path(SARAH).read_bytes())
    assert gone == ['    "category": "schedule",']
    assert added == ['    "category": "calendar",']


def test_renaming_a_kind_folder_moves_every_entity_in_it(env: Env) -> None:
    """Obsidian renames ``people`` to ``contacts``: every entity in it moved, none deleted and created again.

    Agents that number each entity's facts (``f001``, ``f002``) give every entity the same fact note names: the
    folder name must decide, or each moved entity would match every other and count as ambiguous.
    """
    for slug in ("ada-quinn", "bo-larsen", "cy-moreau"):
        folder = env.life / "areas/people" / slug
        folder.mkdir(parents=True)
        facts = [
            {"id": f"f00{n}", "fact": f"{slug} fact {n}", "category": "context", "timestamp": "2026-11-30"}
            for n in (1, 2)
        ]
        (folder / "items.json").write_bytes(dump_items(facts))
    assert_clean(env.sync())
    before = {
        p.relative_to(env.life / "areas/people").as_posix(): p.read_bytes()
        for p in (env.life / "areas/people").rglob("*")
        if p.is_file()
    }
    people = sorted(p.name for p in (env.vault / "2 Areas/people").iterdir() if p.is_dir())
    shutil.move(env.vault / "2 Areas/people", env.vault / "2 Areas/contacts")

    report = env.sync()

    assert_clean(report)
    assert not (env.life / "areas/people").exists() or not any((env.life / "areas/people").iterdir())
    after = {
        p.relative_to(env.life / "areas/contacts").as_posix(): p.read_bytes()
        for p in (env.life / "areas/contacts").rglob("*")
        if p.is_file()
    }
    assert after == before, "the memory folders did not move as they were"
    moved = sorted((c.scope, c.what) for c in report.changes if c.side == "vault")
    assert [scope for scope, _ in moved] == [f"contacts/{slug}" for slug in people], moved
    assert {what for _, what in moved} == {f"moved from areas/people/{slug}" for slug in people}, moved
    assert_quiet(env)
