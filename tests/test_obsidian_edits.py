"""What Obsidian itself does to entity folders and fact notes: renames, copies, property-editor lists, new notes.

Each test edits the vault the way Obsidian's file explorer or property editor leaves it, then checks that
nothing the agent or the person wrote is emptied, doubled or turned into something items.json cannot hold.
"""

from __future__ import annotations

import pytest
from helpers_twoway import ATLAS, ATLAS_DIR, Env


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
