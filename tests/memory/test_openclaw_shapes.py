"""OpenClaw 2026.9's memory files, from ``tests/fixtures/openclaw-2026.9/``: where each lands in the vault, which
ones the person may edit, and OpenClaw's machine markers kept byte for byte through edits on both sides, the
janitor's archiving and a pass that has nothing to do."""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from helpers import REPO
from helpers.inputs import Env, assert_exit, assert_quiet_second_pass, first_pass_clean, make_env
from helpers.twoway import isolate_git

from vaultsync.app.janitor import janitor
from vaultsync.app.review import regenerate
from vaultsync.core.review_note import BEGIN
from vaultsync.model import ExitCode

FIXTURE = REPO / "tests" / "fixtures" / "openclaw-2026.9"
TODAY = date(2026, 12, 8)
AGENT = "3 Resources/agent"
# Every memory file of the fixture and the vault note that mirrors it, byte for byte.
MAPPING = {
    "MEMORY.md": f"{AGENT}/MEMORY.md",
    "HEARTBEAT.md": f"{AGENT}/HEARTBEAT.md",
    "USER.md": f"{AGENT}/USER.md",
    "users/prof-5e1c2a/USER.md": f"{AGENT}/users/prof-5e1c2a/USER.md",
    "DREAMS.md": f"{AGENT}/DREAMS.md",
    "memory/2026-11-30.md": "Daily/2026-11-30.md",
    "memory/2026-12-01.md": "Daily/2026-12-01.md",
    "memory/2026-12-01-1430.md": "Daily/2026-12-01-1430.md",
    "memory/2026-12-01-vendor-pitch.md": "Daily/2026-12-01-vendor-pitch.md",
    "memory/dreaming/deep/2026-12-01.md": f"{AGENT}/memory/dreaming/deep/2026-12-01.md",
    "memory/imports/claude-code/atlas-firmware/MEMORY.md": f"{AGENT}/imports/claude-code/atlas-firmware/MEMORY.md",
    "memory/imports/hermes/USER.md": f"{AGENT}/imports/hermes/USER.md",
    "memory/imports/codex/memory_summary.md": f"{AGENT}/imports/codex/memory_summary.md",
}
# OpenClaw's machine markers: a comment on a line of its own (lineage, promotion, a dreaming or human block's
# fence) or at the end of an entry (trigger, importance, project).
MARKER = re.compile(r"<!-- ?(?:openclaw[:-]|trigger:|importance:|project:|observed:)[^>]*-->")


def markers(text: str) -> list[str]:
    """Each line carrying a marker, whole: a marker must stay on its own line, with that line's text."""
    return [line for line in text.splitlines() if MARKER.search(line)]


@pytest.fixture
def oc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """The 2026.9 workspace under a fresh vault, after a clean first pass."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env = make_env(tmp_path)
    shutil.copytree(FIXTURE / "workspace", env.workspace, dirs_exist_ok=True)
    shutil.copytree(FIXTURE / "life", env.life, dirs_exist_ok=True)
    vault = first_pass_clean(env)
    assert {rel: vault[note] for rel, note in MAPPING.items()} == {
        rel: (env.workspace / rel).read_bytes() for rel in MAPPING
    }
    return env


def sync(env: Env) -> None:
    assert_exit(env.sync(today=TODAY), ExitCode.CLEAN)


def test_every_shape_has_its_place_and_nothing_else_is_made(oc: Env) -> None:
    mirrored = {k for k in oc.vault_files() if k.startswith((f"{AGENT}/", "Daily/", "4 Archives/"))}
    assert mirrored == set(MAPPING.values())
    # The memory-wiki human block is summary text, shown in the entity note exactly as summary.md holds it.
    summary = (FIXTURE / "life/areas/people/nora-lind/summary.md").read_text()
    assert oc.note("2 Areas/people/nora-lind/nora-lind.md").split("---\n", 2)[2].startswith(summary)
    assert_quiet_second_pass(oc)


def test_round_trip_keeps_every_marker_on_its_line(oc: Env) -> None:
    user_md, session = oc.workspace / "USER.md", oc.workspace / "memory/2026-12-01-1430.md"
    user_note, session_note = oc.vault / MAPPING["USER.md"], oc.vault / MAPPING["memory/2026-12-01-1430.md"]
    # The person, in Obsidian: a new preference at the end of USER.md, a line at the end of the session note.
    person_entry = "\n<!-- observed: 2026-12-02 | status: active -->\n\n- Always send agendas as a bulleted list.\n"
    user_note.write_text(user_note.read_text() + person_entry)
    session_note.write_text(session_note.read_text() + "\nNora: ask Kestrel about the colour sample.\n")
    # The agent, meanwhile: supersedes the schedule directive in place (its status line) and replies in the
    # session note, above what the person appended.
    agent_user = user_md.read_text().replace(
        "<!-- observed: 2026-09-14 | status: active -->", "<!-- observed: 2026-09-14 | status: superseded -->"
    )
    user_md.write_text(agent_user)
    session.write_text(session.read_text().replace("in writing.\n", "in writing.\nuser: Send it.\n"))
    sync(oc)

    merged_user = agent_user + person_entry
    assert user_md.read_text() == merged_user == user_note.read_text()
    merged_session = (FIXTURE / "workspace/memory/2026-12-01-1430.md").read_text().replace(
        "in writing.\n", "in writing.\nuser: Send it.\n"
    ) + "\nNora: ask Kestrel about the colour sample.\n"
    assert session.read_text() == merged_session == session_note.read_text()

    # The janitor archives the expired section holding a promoted entry: its marker lines go with it, as they were.
    memory_before = (oc.workspace / "MEMORY.md").read_text()
    done = janitor(oc.cfg, today=TODAY)
    assert [s.title for s in done.sections] == ["Vendor shortlist"], done.to_json()
    archive = (oc.workspace / "memory/archive/MEMORY-2026-12.md").read_text()
    moved = memory_before[memory_before.index("## Vendor shortlist") : memory_before.index("## Consolidated")]
    assert moved in archive
    assert "<!-- openclaw-memory-promotion:1759312800000:4be0c2a19d7e -->\n- Shortlisted Kestrel" in moved
    memory_after = (oc.workspace / "MEMORY.md").read_text()
    assert memory_after == memory_before.replace(moved, "")
    assert sorted(markers(memory_after) + markers(moved)) == sorted(markers(memory_before))
    assert len(markers(memory_before)) == 6
    assert (oc.vault / AGENT / "MEMORY.md").read_text() == memory_after
    assert (oc.vault / "4 Archives/agent/MEMORY-2026-12.md").read_text() == archive

    # Every other file is still exactly as the fixture wrote it, on both sides.
    untouched = set(MAPPING) - {"USER.md", "memory/2026-12-01-1430.md", "MEMORY.md"}
    for rel in untouched:
        assert (
            (oc.workspace / rel).read_bytes()
            == (FIXTURE / "workspace" / rel).read_bytes()
            == (oc.vault / MAPPING[rel]).read_bytes()
        ), rel
    assert_quiet_second_pass(oc)


def test_dreams_md_is_the_agents_alone(oc: Env) -> None:
    dreams, note = oc.workspace / "DREAMS.md", oc.vault / MAPPING["DREAMS.md"]
    original = dreams.read_bytes()
    edited = original.replace(b"Porto is still open.", b"Porto is confirmed.")
    note.write_bytes(edited)
    report = oc.sync(today=TODAY)
    assert_exit(report, ExitCode.CONFLICTS)
    assert dreams.read_bytes() == original == note.read_bytes()
    [copy] = [c.copy_path for c in report.conflicts]
    assert copy.startswith(f"{AGENT}/DREAMS.vaultsync-conflict-")
    assert (oc.vault / copy).read_bytes() == edited
    # Deleting the note does not delete the diary: it comes back.
    (oc.vault / copy).unlink()
    note.unlink()
    sync(oc)
    assert dreams.read_bytes() == original == note.read_bytes()
    # The agent's own rewrite reaches the note.
    dreams.write_bytes(original + b"\n## Light Sleep\n- Nothing new.\n")
    sync(oc)
    assert note.read_bytes() == dreams.read_bytes()
    assert_quiet_second_pass(oc)


def test_a_person_may_start_a_users_file_but_not_a_session_note(oc: Env) -> None:
    mine = oc.vault / AGENT / "users/prof-9a0b/USER.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# USER.md\n\n<!-- observed: 2026-12-03 | status: active -->\n\n- Prefer voice notes.\n")
    own = oc.vault / "Daily/2026-12-03-planning.md"
    own.write_text("# My planning notes\n")
    sync(oc)
    assert (oc.workspace / "users/prof-9a0b/USER.md").read_bytes() == mine.read_bytes()
    assert not (oc.workspace / "memory/2026-12-03-planning.md").exists()
    assert own.read_text() == "# My planning notes\n"


def test_a_session_note_kept_in_a_date_folder_is_followed_there(oc: Env) -> None:
    """Obsidian's date format ``YYYY/MM/YYYY-MM-DD`` files daily notes by month; a session note moved beside its
    daily note there is the same note, read and written where it is."""
    month = oc.vault / "Daily/2026/12"
    month.mkdir(parents=True)
    for name in ("2026-12-01.md", "2026-12-01-1430.md"):
        (oc.vault / "Daily" / name).rename(month / name)
    sync(oc)
    session = oc.workspace / "memory/2026-12-01-1430.md"
    session.write_text(session.read_text() + "assistant: Sent.\n")
    sync(oc)
    assert (month / "2026-12-01-1430.md").read_bytes() == session.read_bytes()
    assert not (oc.vault / "Daily/2026-12-01-1430.md").exists()
    assert session.exists() and (oc.workspace / "memory/2026-12-01.md").exists()


def test_the_review_keeps_a_memory_wiki_human_block(oc: Env, tmp_path: Path) -> None:
    summary = oc.life / "areas/people/nora-lind/summary.md"
    human = (
        "<!-- openclaw:human:start -->\nNora prefers a call over a long email thread.\n<!-- openclaw:human:end -->\n"
    )
    assert human in summary.read_text()
    regenerate(oc.cfg, ["areas/people/nora-lind"], TODAY)
    assert human in summary.read_text() and BEGIN in summary.read_text()
    assert human in oc.note("2 Areas/people/nora-lind/nora-lind.md")
    # A summariser that rewrites the whole summary and forgets the block is refused, and the summary kept.
    script = tmp_path / "summarise.py"
    script.write_text("import json, sys\nd = json.load(sys.stdin)\nprint('# Nora Lind\\n\\nDesigns enclosures.')\n")
    oc.cfg = replace(oc.cfg, review=replace(oc.cfg.review, command=f"{sys.executable} {script}"))
    before = summary.read_bytes()
    result = regenerate(oc.cfg, ["areas/people/nora-lind"], TODAY)
    assert summary.read_bytes() == before
    [problem] = result.problems
    assert "drops 1 of OpenClaw's marked lines or blocks (the first: <!-- openclaw:human:start -->)" in problem.message
    # One that keeps it verbatim is taken.
    script.write_text(
        "import json, sys\nd = json.load(sys.stdin)\ns = d['summary']\n"
        "kept = s[s.index('## Notes') : s.index('<!-- vaultsync')].strip()\n"
        "print('# Nora Lind\\n\\nDesigns enclosures.\\n\\n' + kept)\n"
    )
    assert not regenerate(oc.cfg, ["areas/people/nora-lind"], TODAY).problems
    assert summary.read_text().startswith("# Nora Lind\n\nDesigns enclosures.\n") and human in summary.read_text()


def test_the_janitor_archives_a_days_session_notes_with_it(oc: Env) -> None:
    oc.cfg = replace(oc.cfg, janitor=replace(oc.cfg.janitor, keep_daily_days=3))
    days = ("2026-11-30.md", "2026-12-01.md", "2026-12-01-1430.md", "2026-12-01-vendor-pitch.md")
    before = {name: (oc.workspace / "memory" / name).read_bytes() for name in days}
    done = janitor(oc.cfg, today=TODAY)
    assert sorted(done.daily) == sorted((f"memory/{n}", f"memory/archive/daily/{n}") for n in days)
    for name in days:
        assert not (oc.workspace / "memory" / name).exists() and not (oc.vault / "Daily" / name).exists()
        assert (oc.workspace / "memory/archive/daily" / name).read_bytes() == before[name]
        assert (oc.vault / "4 Archives/agent/daily" / name).read_bytes() == before[name]
    assert_quiet_second_pass(oc)


def test_new_and_deleted_session_notes_and_users_files_follow_on_quick_passes(oc: Env) -> None:
    """The agent's next session note, a new person's USER.md and an import reach the vault on the passes a timer
    runs (the quick check, then a pass over what changed); a session note the person deletes goes from memory."""
    session = oc.workspace / "memory/2026-12-08-0915.md"
    session.write_text("# Session: 2026-12-08 09:15:00 Europe/Lisbon\n\n- **Session Key**: agent:main:main\n")
    user = oc.workspace / "users/prof-77aa/USER.md"
    user.parent.mkdir(parents=True)
    user.write_text("# USER.md\n\n<!-- observed: 2026-12-08 | status: active -->\n\n- Prefer mornings.\n")
    imported = oc.workspace / "memory/imports/claude-code/atlas-firmware/notes.md"
    imported.write_text("# notes\n\n- Flash with the v2 environment.\n")
    sync(oc)
    assert (oc.vault / "Daily/2026-12-08-0915.md").read_bytes() == session.read_bytes()
    assert (oc.vault / AGENT / "users/prof-77aa/USER.md").read_bytes() == user.read_bytes()
    assert (oc.vault / AGENT / "imports/claude-code/atlas-firmware/notes.md").read_bytes() == imported.read_bytes()
    user.write_text(user.read_text() + "- Never call on Fridays.\n")
    sync(oc)
    assert (oc.vault / AGENT / "users/prof-77aa/USER.md").read_bytes() == user.read_bytes()
    (oc.vault / "Daily/2026-12-01-vendor-pitch.md").unlink()
    sync(oc)
    assert not (oc.workspace / "memory/2026-12-01-vendor-pitch.md").exists()
    assert_quiet_second_pass(oc)


def test_a_user_md_over_what_openclaw_loads_is_warned_about_and_synced(oc: Env) -> None:
    mine = oc.workspace / "users/prof-5e1c2a/USER.md"
    entry = "\n<!-- observed: 2026-12-08 | status: active -->\n\n- Prefer the long version of every answer.\n"
    mine.write_text(mine.read_text() + entry * 60)
    report = oc.sync(today=TODAY)
    chars = len(mine.read_text())
    assert chars > 4000
    [warning] = [p for p in report.problems if p.path == str(mine)]
    assert warning.message == (
        f"{chars} characters, over the 4,000 OpenClaw loads of a USER.md (a person's own is then left out whole); "
        "supersede or drop older directives"
    )
    assert (oc.vault / MAPPING["users/prof-5e1c2a/USER.md"]).read_bytes() == mine.read_bytes()
    assert not [p for p in report.problems if p.path == str(oc.workspace / "USER.md")]


def test_a_vault_synced_before_these_places_keeps_its_notes_where_they_are(oc: Env) -> None:
    """vaultsync put session notes and imports in ``3 Resources/agent/memory/`` before they had places of their
    own: such a note is still the memory file's, followed there, never taken for deleted."""
    legacy = {
        "memory/2026-12-01-1430.md": f"{AGENT}/memory/2026-12-01-1430.md",
        "memory/imports/hermes/USER.md": f"{AGENT}/memory/imports/hermes/USER.md",
    }
    for rel, old in legacy.items():
        (oc.vault / old).parent.mkdir(parents=True, exist_ok=True)
        (oc.vault / MAPPING[rel]).rename(oc.vault / old)
    oc.git("add", "-A")
    oc.git("commit", "-qm", "as an earlier vaultsync left them")
    assert_quiet_second_pass(oc)
    for rel, old in legacy.items():
        mem = oc.workspace / rel
        mem.write_text(mem.read_text() + "- one more line from the agent\n")
        sync(oc)
        assert (oc.vault / old).read_bytes() == mem.read_bytes() and not (oc.vault / MAPPING[rel]).exists()
        (oc.vault / old).write_text((oc.vault / old).read_text() + "- and one from the person\n")
        sync(oc)
        assert mem.read_bytes() == (oc.vault / old).read_bytes()
    # Both places holding a note: neither is read, and the memory file stays as it is, until one is deleted.
    session = oc.workspace / "memory/2026-12-01-1430.md"
    before = session.read_bytes()
    (oc.vault / MAPPING["memory/2026-12-01-1430.md"]).write_bytes(before + b"- typed into a second copy\n")
    report = oc.sync(today=TODAY)
    assert report.exit_code is ExitCode.SKIPPED_INPUT
    assert any("two notes stand for the session note 2026-12-01-1430.md" in p.message for p in report.problems)
    assert session.read_bytes() == before
    (oc.vault / legacy["memory/2026-12-01-1430.md"]).unlink()
    sync(oc)
    assert session.read_bytes() == before + b"- typed into a second copy\n"


def test_an_import_in_both_its_places_is_left_alone_until_one_goes(oc: Env) -> None:
    mem = oc.workspace / "memory/imports/codex/memory_summary.md"
    before = mem.read_bytes()
    old = oc.vault / AGENT / "memory/imports/codex/memory_summary.md"
    old.parent.mkdir(parents=True)
    old.write_bytes(before + b"- an older copy's line\n")
    report = oc.sync(today=TODAY)
    assert report.exit_code is ExitCode.SKIPPED_INPUT
    assert any("two notes stand for memory/imports/codex/memory_summary.md" in p.message for p in report.problems)
    assert mem.read_bytes() == before
    (oc.vault / MAPPING["memory/imports/codex/memory_summary.md"]).unlink()
    sync(oc)
    assert mem.read_bytes() == old.read_bytes() == before + b"- an older copy's line\n"
