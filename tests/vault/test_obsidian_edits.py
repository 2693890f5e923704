"""What Obsidian itself does to entity folders and fact notes: renames, copies, property-editor lists, new notes.

Each test edits the vault the way Obsidian's file explorer or property editor leaves it, then checks that
nothing the agent or the person wrote is emptied, doubled or turned into something items.json cannot hold.
"""

from __future__ import annotations

import shutil

import pytest
from helpers import REPO
from helpers.twoway import ATLAS, ATLAS_DIR, SARAH, SARAH_DIR, Env, join, props_of, replace_text, set_body, split

TEMPLATES = REPO / "templates"


@pytest.mark.parametrize("batch", [0, 1])
def test_renaming_an_entity_folder_carries_its_summary_and_facts(env: Env, batch: int) -> None:
    summary = (env.life / ATLAS / "summary.md").read_bytes()
    facts = env.facts(ATLAS)
    old = env.vault / ATLAS_DIR
    old.rename(old.parent / "atlas")  # Obsidian's explorer: the note inside keeps its name

    report = env.sync(full_batch=batch)

    assert report.exit_code == 0, report.to_json()
    moved = env.life / "projects/atlas"
    assert not (env.life / ATLAS).exists()
    assert (moved / "summary.md").read_bytes() == summary
    assert env.facts("projects/atlas") == facts
    note = env.vault / "1 Projects/atlas/atlas.md"
    assert note.is_file() and not (env.vault / "1 Projects/atlas/project-atlas.md").exists()
    assert 'file.inFolder("1 Projects/atlas/facts")' in note.read_text(encoding="utf-8")
    again = env.sync(full_batch=batch)
    assert again.files_written == 0 and again.exit_code == 0, again.to_json()


def test_renaming_an_entity_folder_whose_note_lost_its_view_empties_nothing(env: Env) -> None:
    """The view deleted from the note, and the folder renamed: the note's properties still say it is the
    entity's note, so the summary moves with the folder and the view comes back."""
    summary = (env.life / ATLAS / "summary.md").read_bytes()
    note = env.vault / ATLAS_DIR / "project-atlas.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text[: text.index("%% vaultsync: live view")].rstrip("\n") + "\n", encoding="utf-8")
    old = env.vault / ATLAS_DIR
    old.rename(old.parent / "atlas")

    report = env.sync()

    assert report.exit_code == 0, report.to_json()
    assert (env.life / "projects/atlas/summary.md").read_bytes() == summary
    assert "entity deleted" not in [c.what for c in report.changes]
    assert 'file.inFolder("1 Projects/atlas/facts")' in (env.vault / "1 Projects/atlas/atlas.md").read_text()


def test_renaming_a_fact_note_keeps_superseded_by_an_id(env: Env) -> None:
    """Obsidian renames the note and rewrites every link to it: the successor link names the note, not the id."""
    facts = env.vault / SARAH_DIR / "facts"
    (facts / "sarah-chen-005.md").rename(facts / "Thursday check-in.md")
    replace_text(facts / "sarah-chen-002.md", "[[sarah-chen-005]]", "[[Thursday check-in]]")

    report = env.sync()

    assert report.exit_code == 0, report.to_json()
    assert env.fact(SARAH, "sarah-chen-002")["supersededBy"] == "sarah-chen-005"
    assert (facts / "sarah-chen-005.md").is_file() and not (facts / "Thursday check-in.md").exists()
    assert props_of(facts / "sarah-chen-002.md")["supersededBy"] == "[[sarah-chen-005]]"
    assert env.sync().files_written == 0


def test_make_a_copy_of_a_fact_note_adds_a_fact_with_the_copys_text(env: Env) -> None:
    """Obsidian's "Make a copy" keeps the id; the person then types the new fact over the copied text."""
    facts = env.vault / SARAH_DIR / "facts"
    before = len(env.facts(SARAH))
    copy = facts / "sarah-chen-005 1.md"
    shutil.copyfile(facts / "sarah-chen-005.md", copy)
    untouched = env.sync()
    assert len(env.facts(SARAH)) == before and copy.is_file()  # a copy not yet edited is a duplicate: it waits
    assert any("copy" in p.message and p.path.endswith("sarah-chen-005 1.md") for p in untouched.problems)
    set_body(copy, "Sarah Chen moved the design review to Fridays at 14:00\n")

    report = env.sync()

    assert report.exit_code == 0, report.to_json()
    assert len(env.facts(SARAH)) == before + 1
    new = env.fact_by_text(SARAH, "Sarah Chen moved the design review")
    assert new["id"] not in ("sarah-chen-005",) and new["category"] == "schedule"
    assert env.fact(SARAH, "sarah-chen-005")["fact"].startswith("Since the Acme Corp Q4 reorg")
    assert not copy.exists() and (facts / f"{new['id']}.md").is_file()
    assert env.sync().files_written == 0


@pytest.mark.parametrize(("listed", "kept"), [(["[[sarah-chen-005]]"], "sarah-chen-005"), ([], None)])
def test_a_list_valued_superseded_by_is_never_written_as_a_list(env: Env, listed: list[str], kept: object) -> None:
    """Obsidian's property editor turns a text property into a list when its type is changed."""
    note = env.fact_note(SARAH_DIR, "sarah-chen-002")
    lines, body = split(note)
    lines = [ln for ln in lines if not ln.startswith("supersededBy:")]
    lines.append("supersededBy:" + "".join(f'\n  - "{v}"' for v in listed) + (" []" if not listed else ""))
    note.write_text(join(lines, body), encoding="utf-8")

    report = env.sync()

    record = env.fact(SARAH, "sarah-chen-002")
    assert not isinstance(record.get("supersededBy"), list), record
    assert record["supersededBy"] == (kept or "sarah-chen-005")
    if not listed:
        assert any("supersededBy" in p.message for p in report.problems if p.path.endswith("sarah-chen-002.md"))


def test_a_new_fact_note_without_text_waits_for_its_text(env: Env) -> None:
    """Obsidian creates the note from the Fact template; the person has not typed the fact yet."""
    facts = env.vault / SARAH_DIR / "facts"
    before = env.facts(SARAH)
    template = (TEMPLATES / "Fact.md").read_text(encoding="utf-8").replace("{{date:YYYY-MM-DD}}", "2026-11-30")
    new = facts / "Untitled.md"
    new.write_text(template, encoding="utf-8")

    report = env.sync()

    assert env.facts(SARAH) == before and new.read_text(encoding="utf-8") == template
    assert any(p.path.endswith("Untitled.md") for p in report.problems)
    new.write_text(template + "Sarah Chen prefers morning calls\n", encoding="utf-8")
    env.sync()
    assert env.fact_by_text(SARAH, "Sarah Chen prefers morning calls")["timestamp"] == "2026-11-30"
    assert not new.exists()


def test_a_fact_note_in_an_entity_whose_name_leaves_no_room_for_its_id_waits(env: Env) -> None:
    """The id a pass gives the person's note (``<slug>-001``) would pass the 120-byte name rule and be skipped by
    every later pass: the note waits, with the limit and the fix, until the folder has a shorter name."""
    long = "深圳市前海微众银行股份有限公司上海分公司数据科学与人工智能研究院区块链部技术组"  # 117 bytes
    facts = env.vault / "2 Areas/companies" / long / "facts"
    facts.mkdir(parents=True)
    (facts.parent / f"{long}.md").write_text(f"# {long}\n\nA bank's research lab.\n", encoding="utf-8")
    note = facts / "Untitled.md"
    text = "---\ncategory: context\n---\nThe lab works on payment ledgers\n"
    note.write_text(text, encoding="utf-8")

    report = env.sync()

    assert note.read_text(encoding="utf-8") == text
    said = [p.message for p in report.problems if p.path.endswith("Untitled.md")]
    assert said and "120 bytes" in said[0] and "shorter slug" in said[0], report.problems
    held = env.life / "areas/companies" / long / "items.json"
    assert not held.exists() or "payment ledgers" not in held.read_text(encoding="utf-8")
    assert env.sync().exit_code == report.exit_code
