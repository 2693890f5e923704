"""What a person sees in Obsidian: templates that parse, names taken from real headings, views that count only
facts, dates typed so the date picker keeps what a value holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from helpers import REPO
from helpers.e2e import make_env
from helpers.twoway import SARAH, SARAH_DIR, TODAY, Env, props_of, set_prop

from vaultsync.model import ExitCode
from vaultsync.text.yamlcore import parse_properties, split_note

TEMPLATES = REPO / "templates"
CONFLICT_MARK = ".vaultsync-conflict-"


def _excludes_conflict_copies(filters: Any) -> bool:
    """Whether a Bases filter tree holds a `not` group leaving out names carrying the conflict mark."""
    if isinstance(filters, dict):
        for op, items in filters.items():
            if op == "not" and any(f'file.name.contains("{CONFLICT_MARK}")' in str(i) for i in items):
                return True
            if _excludes_conflict_copies(items):
                return True
    if isinstance(filters, list):
        return any(_excludes_conflict_copies(f) for f in filters)
    return False


def _view_block(note: str) -> Any:
    block = note.split("```base\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


# -- the Fact template -----------------------------------------------------------------------------------------
def test_fact_template_properties_parse_as_yaml_obsidian_reads() -> None:
    fm, _ = split_note((TEMPLATES / "Fact.md").read_text(encoding="utf-8"))
    assert fm is not None
    props = parse_properties(fm)
    assert props["timestamp"] == "{{date:YYYY-MM-DD}}"
    assert props["status"] == "active" and props["source"] == "manual"


def test_a_note_from_the_fact_template_becomes_a_fact(env: Env) -> None:
    """Inserted (the variable replaced) or copied as it is (the variable left), the note is a new fact."""
    template = (TEMPLATES / "Fact.md").read_text(encoding="utf-8")
    facts = env.vault / SARAH_DIR / "facts"
    (facts / "Untitled.md").write_text(
        template.replace("{{date:YYYY-MM-DD}}", "2026-11-30") + "Sarah Chen prefers morning calls\n", encoding="utf-8"
    )
    (facts / "Untitled 1.md").write_text(template + "Sarah Chen reads the minutes on Fridays\n", encoding="utf-8")
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    inserted = env.fact_by_text(SARAH, "Sarah Chen prefers morning calls")
    assert inserted["timestamp"] == "2026-11-30" and inserted["source"] == "manual"
    copied = env.fact_by_text(SARAH, "Sarah Chen reads the minutes")
    assert copied["timestamp"] == TODAY.isoformat()
    assert not (facts / "Untitled.md").exists() and not (facts / "Untitled 1.md").exists()


# -- headings ----------------------------------------------------------------------------------------------------
def test_a_heading_inside_a_code_block_does_not_name_the_entity(env: Env) -> None:
    tool = env.life / "resources" / "tools" / "builder"
    tool.mkdir(parents=True)
    (tool / "summary.md").write_text("The build box.\n\n```sh\n# Setup\nmake all\n```\n", encoding="utf-8")
    (tool / "items.json").write_text("[]\n", encoding="utf-8")
    hidden = env.life / "resources" / "tools" / "notebook"
    hidden.mkdir(parents=True)
    (hidden / "summary.md").write_text("%%\n# Draft\n%%\n# Lab Notebook\n", encoding="utf-8")
    env.agent_edit(
        SARAH,
        lambda facts: facts.append(
            {"id": "sarah-chen-050", "fact": "Sarah Chen finished the Setup of the Lab Notebook", "status": "active"}
        ),
    )
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    builder = props_of(env.vault / "3 Resources/tools/builder/builder.md")
    assert "aliases" not in builder, builder
    assert props_of(env.vault / "3 Resources/tools/notebook/notebook.md")["aliases"] == ["Lab Notebook"]
    mentions = props_of(env.fact_note(SARAH_DIR, "sarah-chen-050"))["mentions"]
    assert mentions == ["[[notebook|Lab Notebook]]"]


# -- conflict copies ---------------------------------------------------------------------------------------------
def test_conflict_copies_are_left_out_of_the_dashboard_and_the_entity_view(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-001")
    set_prop(note, "category", "work")
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="career"))
    report = env.sync()
    assert report.exit_code == ExitCode.CONFLICTS
    copy = Path(report.conflicts[0].copy_path)
    assert copy.parent.name == "facts" and CONFLICT_MARK in copy.name
    assert props_of(env.vault / copy)["status"] == "active"  # so only the name can keep it out of the views

    dashboard = yaml.safe_load((env.vault / "Memory.base").read_text(encoding="utf-8"))
    assert _excludes_conflict_copies(dashboard["filters"])
    view = _view_block((env.vault / SARAH_DIR / "sarah-chen.md").read_text(encoding="utf-8"))
    assert _excludes_conflict_copies(view["filters"])


# -- dates with times --------------------------------------------------------------------------------------------
def test_timestamps_are_typed_datetime_and_updated_is_a_day(env: Env) -> None:
    types = json.loads((env.vault / ".obsidian/types.json").read_text(encoding="utf-8"))["types"]
    assert types["timestamp"] == "datetime" and types["updated"] == "date"
    env.agent_edit(SARAH, lambda facts: facts[0].update(timestamp="2026-11-30T14:30:00Z"))
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))["timestamp"] == "2026-11-30T14:30:00Z"
    entity = (env.vault / SARAH_DIR / "sarah-chen.md").read_text(encoding="utf-8")
    assert "\nupdated: 2026-11-30\n" in entity


# -- source -> daily note ----------------------------------------------------------------------------------------
def test_a_source_naming_a_day_links_the_fact_to_that_daily_note(env: Env) -> None:
    """Derived and vault-only: the daily note lists the facts it gave as backlinks; items.json is not touched."""
    before = env.items_path(SARAH).read_bytes()
    assert env.fact(SARAH, "sarah-chen-002")["source"] == "memory/2026-10-06.md"
    note = props_of(env.fact_note(SARAH_DIR, "sarah-chen-002"))
    assert note["daily"] == "2026-10-06" and note["source"] == "memory/2026-10-06.md"  # no such daily note: text
    assert "daily" not in props_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))  # source: conversation

    env.agent_edit(SARAH, lambda facts: facts[0].update(source="2026-11-30"))
    after_agent = env.items_path(SARAH).read_bytes()
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))["daily"] == "[[Daily/2026-11-30|2026-11-30]]"
    assert env.items_path(SARAH).read_bytes() == after_agent != before
    again = env.sync()
    assert again.files_written == 0 and again.commits == []


# -- adopting an existing vault --------------------------------------------------------------------------------
def test_init_merges_its_property_types_into_the_persons_and_names_settings_to_fix(tmp_path: Path) -> None:
    """An existing vault keeps its own settings: the types the notes need are added (a clashing one set, and
    said), and settings that would hide vaultsync's notes or templates are each named with the fix."""
    e = make_env(tmp_path / "sandbox")
    obsidian = e.vault / ".obsidian"
    obsidian.mkdir(parents=True)
    (obsidian / "types.json").write_text(json.dumps({"types": {"mood": "text", "related": "text"}}), "utf-8")
    daily = b'{"folder": "Journal/", "format": "YYYY-MM-DD"}\n'
    (obsidian / "daily-notes.json").write_bytes(daily)
    (obsidian / "templates.json").write_text('{"folder": "Meta/Templates"}', "utf-8")
    (obsidian / "core-plugins.json").write_text(json.dumps({"daily-notes": True, "bases": False}), "utf-8")

    result = e.init()

    types = json.loads((obsidian / "types.json").read_text("utf-8"))["types"]
    assert types["mood"] == "text", "the person's own entry is kept"
    assert types["related"] == "multitext" and types["timestamp"] == "datetime" and types["updated"] == "date"
    assert result.updated == [".obsidian/types.json"] and ".obsidian/types.json" not in result.created
    assert (obsidian / "daily-notes.json").read_bytes() == daily, "a setting file is never rewritten"
    said = "\n".join(result.warnings)
    assert "'related' was typed 'text'; set to 'multitext'" in said
    assert "Daily notes go to 'Journal'" in said and "New file location to 'Daily'" in said
    assert "template folder is 'Meta/Templates'" in said and "Template folder location to 'Templates'" in said
    assert "Bases (Memory.base" in said and "Settings > Core plugins" in said
    assert "Templates (new facts" not in said, "a plugin not listed as off is Obsidian's default"
    assert len(result.warnings) == 4

    again = e.init()  # everything in place: nothing more to add, and only what is still to fix is said
    assert again.updated == [] and ".obsidian/types.json" in again.kept
    assert "'related' was typed" not in "\n".join(again.warnings)


def test_init_on_a_vault_with_obsidians_defaults_says_nothing(tmp_path: Path) -> None:
    e = make_env(tmp_path / "sandbox")
    obsidian = e.vault / ".obsidian"
    obsidian.mkdir(parents=True)
    (obsidian / "core-plugins.json").write_text(json.dumps(["daily-notes", "templates", "bases"]), "utf-8")
    (obsidian / "types.json").write_text(json.dumps({"types": {}}), "utf-8")
    result = e.init()
    assert result.warnings == [] and result.updated == [".obsidian/types.json"]
    assert ".obsidian/daily-notes.json" in result.created
