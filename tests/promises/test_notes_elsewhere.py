"""A note that still exists somewhere in the vault is never a deletion (docs/safety.md, section 5).

Daily notes in date sub-folders (``Daily/2026/01/2026-01-30.md``, what Obsidian's date format makes) are
followed both ways; other notes moved where a pass does not read are reported and both sides kept.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.inputs import Env, assert_exit, fact, make_env

from vaultsync.model import ExitCode


def synced(tmp_path: Path) -> Env:
    env = make_env(tmp_path)
    env.entity("areas/people/ana", [fact("a1", "Ana plays chess"), fact("a2", "Ana lives in Porto")], "# Ana\n")
    env.entity("areas/people/bo", [fact("b1", "Bo bakes bread")], "# Bo\n")
    for day in ("2026-01-30", "2026-01-31"):
        env.daily(f"{day}.md", f"# {day}\n\nWorked.\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    return env


def test_a_daily_note_in_a_date_sub_folder_is_followed_both_ways(tmp_path: Path) -> None:
    env = synced(tmp_path)
    memory = env.memory()
    dated = env.vault / "Daily/2026/01/2026-01-30.md"
    dated.parent.mkdir(parents=True)
    (env.vault / "Daily/2026-01-30.md").rename(dated)

    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.memory() == memory
    assert not (env.vault / "Daily/2026-01-30.md").exists()

    dated.write_text("# 2026-01-30\n\nWorked.\nCalled Ana.\n", encoding="utf-8")
    assert_exit(env.sync(), ExitCode.CLEAN)
    day = env.workspace / "memory/2026-01-30.md"
    assert day.read_text(encoding="utf-8") == "# 2026-01-30\n\nWorked.\nCalled Ana.\n"

    day.write_text("# 2026-01-30\n\nWorked.\nCalled Ana.\nSlept early.\n", encoding="utf-8")
    env.daily("2026-02-01.md", "# 2026-02-01\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert dated.read_text(encoding="utf-8") == "# 2026-01-30\n\nWorked.\nCalled Ana.\nSlept early.\n"
    assert not (env.vault / "Daily/2026-01-30.md").exists()
    assert (env.vault / "Daily/2026-02-01.md").read_text(encoding="utf-8") == "# 2026-02-01\n"
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.git("status", "--porcelain") == ""
    commits = env.git("rev-list", "--count", "HEAD")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.git("rev-list", "--count", "HEAD") == commits


def test_two_notes_for_one_day_are_reported_and_both_kept(tmp_path: Path) -> None:
    env = synced(tmp_path)
    dated = env.vault / "Daily/2026/01/2026-01-31.md"
    dated.parent.mkdir(parents=True)
    dated.write_text("# 2026-01-31\n\nAnother version.\n", encoding="utf-8")
    memory, vault = env.memory(), env.vault_files()

    report = env.sync()

    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert any("two notes stand for the daily note 2026-01-31.md" in p.line() for p in report.problems)
    assert env.memory() == memory and env.vault_files() == vault


def _moved(env: Env, how: str) -> str:
    """Move a note (or folder) where a pass does not read; returns the note that went missing."""
    ana = env.vault / "2 Areas/people/ana"
    if how == "facts/old":
        (ana / "facts/old").mkdir()
        (ana / "facts/a1.md").rename(ana / "facts/old/a1.md")
        return "2 Areas/people/ana/facts/a1.md"
    if how == "Archive":
        (env.vault / "Archive").mkdir()
        ana.rename(env.vault / "Archive/ana")
        return "2 Areas/people/ana/ana.md"
    if how == "icloud":
        note = ana / "facts/a1.md"
        note.rename(ana / "facts/.a1.md.icloud")
        return "2 Areas/people/ana/facts/a1.md"
    dated = env.vault / "Old notes/2026-01-30.md"
    dated.parent.mkdir()
    (env.vault / "Daily/2026-01-30.md").rename(dated)
    return "Daily/2026-01-30.md"


@pytest.mark.parametrize("how", ["facts/old", "Archive", "icloud", "daily"])
def test_a_note_moved_where_a_pass_does_not_read_is_no_deletion(tmp_path: Path, how: str) -> None:
    env = synced(tmp_path)
    memory = env.memory()
    missing = _moved(env, how)
    vault = env.vault_files()

    for _ in range(2):
        report = env.sync()
        assert_exit(report, ExitCode.SKIPPED_INPUT)
        assert env.memory() == memory, "the agent's copy is kept"
        assert env.vault_files() == vault, "the moved note is not recreated nor touched"
        lines = [p.line() for p in report.problems]
        assert any(missing in line and "both sides left as they are" in line for line in lines), lines

    # Deleting the moved copy is then an ordinary deletion.
    if how == "Archive":
        shutil.rmtree(env.vault / "Archive/ana")
    elif how != "icloud":
        next(p for p in env.vault.rglob("*.md") if "old" in p.parts or "Old notes" in p.parts).unlink()
    else:
        (env.vault / "2 Areas/people/ana/facts/.a1.md.icloud").unlink()
    report = env.sync(confirm_deletes=True)
    assert report.exit_code in (ExitCode.CLEAN, ExitCode.SKIPPED_INPUT)
    assert not any("both sides left as they are" in p.line() for p in report.problems)
    assert env.memory() != memory
