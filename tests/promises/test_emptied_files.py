"""An agent emptying one of its files is a state like any other: it syncs, and what it writes later follows.

Agents clear HEARTBEAT.md (``: > HEARTBEAT.md``) and rewrite daily notes by truncate-then-write; a pass can
land in between. An empty *note* the base does not hold empty is still left alone (Obsidian's new note, a read
mid-save). Real passes over a copy of vault-example, real git.
"""

from __future__ import annotations

from datetime import date

import pytest
from helpers.twoway import Env

HEARTBEAT_NOTE = "3 Resources/agent/HEARTBEAT.md"


@pytest.mark.parametrize(
    ("mem_rel", "note_rel"),
    [("HEARTBEAT.md", HEARTBEAT_NOTE), ("memory/2026-12-01.md", "Daily/2026-12-01.md")],
    ids=["heartbeat-cleared", "daily-truncated-then-written"],
)
def test_an_emptied_memory_file_syncs_and_later_writes_follow(env: Env, mem_rel: str, note_rel: str) -> None:
    mem, note = env.mem_file(mem_rel), env.note(note_rel)
    assert note.read_bytes() == mem.read_bytes() != b""
    mem.write_bytes(b"")

    report = env.sync()

    assert report.exit_code == 0 and report.problems == [], report.to_json()
    assert note.read_bytes() == b""
    assert env.git("status", "--porcelain") == ""

    quiet = env.sync()
    assert quiet.problems == [] and quiet.files_written == 0, quiet.to_json()

    mem.write_text("- 18:00 agent: all quiet\n", encoding="utf-8")
    report = env.sync()
    assert report.exit_code == 0 and report.problems == [], report.to_json()
    assert note.read_text(encoding="utf-8") == "- 18:00 agent: all quiet\n"


def test_the_person_writing_into_a_note_synced_empty_reaches_the_agent(env: Env) -> None:
    mem, note = env.mem_file("HEARTBEAT.md"), env.note(HEARTBEAT_NOTE)
    mem.write_bytes(b"")
    assert env.sync().exit_code == 0
    note.write_text("- Nora: check the printer", encoding="utf-8")

    assert env.sync().exit_code == 0

    assert mem.read_text(encoding="utf-8") == "- Nora: check the printer"


def test_an_empty_note_over_synced_content_is_still_left_alone(env: Env) -> None:
    mem, note = env.mem_file("memory/2026-12-01.md"), env.note("Daily/2026-12-01.md")
    before = mem.read_bytes()
    note.write_bytes(b"")

    report = env.sync(today=date(2026, 12, 1))

    assert [p.path for p in report.problems] == ["Daily/2026-12-01.md"]
    assert "is empty" in report.problems[0].message
    assert mem.read_bytes() == before
    assert note.read_bytes() == b""
