"""A changed folder setting is never read as the agent's files being deleted (docs/safety.md, section 3).

The base knows the layout it was synced with; a pass under another layout that finds synced notes still where
the old one put them stops before any write (exit 4) and says what changed and how to move the notes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers.inputs import Env, assert_exit, fact, make_env

from vaultsync.model import ExitCode


def synced(tmp_path: Path) -> Env:
    env = make_env(tmp_path)
    env.entity("areas/people/ana", [fact("a1", "Ana plays chess")], "# Ana\n")
    env.write(env.workspace / "MEMORY.md", "## Rules [P0]\n\nBe kind.\n")
    env.write(env.workspace / "HEARTBEAT.md", "- check mail\n")
    for day in ("2026-01-30", "2026-01-31"):
        env.daily(f"{day}.md", f"# {day}\n\nWorked.\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    return env


@pytest.mark.parametrize(
    ("setting", "value", "old_place"),
    [("agent", "bot", "3 Resources/agent/"), ("daily", ".", "Daily/"), ("daily", "Journal", "Daily/")],
)
def test_a_changed_folder_setting_stops_before_any_write(
    tmp_path: Path, setting: str, value: str, old_place: str
) -> None:
    env = synced(tmp_path)
    (env.vault / "Journal").mkdir()
    (env.vault / "Journal" / "Ideas.md").write_text("my own note\n", encoding="utf-8")
    memory, vault, head = env.memory(), env.vault_files(), env.git("rev-parse", "HEAD")
    env.cfg = replace(env.cfg, layout=replace(env.cfg.layout, **{setting: value}))

    for report in (env.sync(dry_run=True), env.sync(), env.sync(confirm_deletes=True)):
        assert_exit(report, ExitCode.SAFETY_STOP)
        assert report.stopped is not None
        assert f"[vault] {setting}" in report.stopped and repr(value) in report.stopped
        assert old_place in report.stopped, report.stopped
        assert env.memory() == memory and env.vault_files() == vault
        assert env.git("rev-parse", "HEAD") == head


def test_moving_the_notes_to_the_new_folder_lets_the_pass_go_on(tmp_path: Path) -> None:
    env = synced(tmp_path)
    memory = env.memory()
    env.cfg = replace(env.cfg, layout=replace(env.cfg.layout, agent="bot"))
    assert_exit(env.sync(), ExitCode.SAFETY_STOP)

    (env.vault / "3 Resources/agent").rename(env.vault / "3 Resources/bot")
    env.write(env.vault / "3 Resources/bot/HEARTBEAT.md", "- check mail\n- call Ana\n")

    assert_exit(env.sync(), ExitCode.CLEAN)
    assert (env.workspace / "HEARTBEAT.md").read_text(encoding="utf-8") == "- check mail\n- call Ana\n"
    assert env.memory() == {**memory, "workspace/HEARTBEAT.md": b"- check mail\n- call Ana\n"}
    assert_exit(env.sync(), ExitCode.CLEAN)


def test_daily_notes_moved_to_the_vault_root_follow_the_new_setting(tmp_path: Path) -> None:
    env = synced(tmp_path)
    memory = env.memory()
    env.cfg = replace(env.cfg, layout=replace(env.cfg.layout, daily="."))
    for note in sorted((env.vault / "Daily").iterdir()):
        note.rename(env.vault / note.name)
    env.write(env.vault / "2026-01-31.md", "# 2026-01-31\n\nWorked.\nRested.\n")

    report = env.sync()

    assert_exit(report, ExitCode.CLEAN)
    assert env.memory() == {**memory, "workspace/memory/2026-01-31.md": b"# 2026-01-31\n\nWorked.\nRested.\n"}
    env.daily("2026-02-01.md", "# 2026-02-01\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert (env.vault / "2026-02-01.md").read_text(encoding="utf-8") == "# 2026-02-01\n"
