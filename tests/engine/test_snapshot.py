"""The quick check: a pass after a settled one reads nothing when nothing changed, and misses no change.

Each test starts from a copy of vault-example synced, synced again once every file is aged (that pass records
the snapshot with every file old enough to be trusted by its stat), then changes one thing on one side and
checks that the pass is a full one and carries the change, or that it is quick and writes nothing. The edits
that matter most are the ones a stat cache can miss: same size, same mtime.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.settled import age_everything
from helpers.twoway import LIWEI_DIR, SARAH, SARAH_DIR, Env, body_of, clone, isolate_git, set_prop

from vaultsync.engine.quick import Places
from vaultsync.git.index import blob_id
from vaultsync.state.stat_walk import RACY_NS, aged_stat, walk_memory


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env = clone(synced_template, tmp_path / "setup")
    age_everything(env)
    assert not env.sync().quick, "the pass after aging must rescan: stats changed"
    return env


def same_size_same_mtime(path: Path, old: bytes, new: bytes) -> None:
    assert len(old) == len(new) and old != new
    st = path.stat()
    path.write_bytes(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_pass_with_nothing_to_do_is_quick_and_writes_nothing(env: Env) -> None:
    head = env.head()
    before = env.snapshot()
    report = env.sync()
    assert report.quick and report.exit_code == 0
    assert (report.actions, report.changes, report.commits) == ([], [], [])
    assert env.snapshot() == before and env.head() == head


def test_a_fact_note_edit_keeping_size_and_mtime_is_seen(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-001")
    old = note.read_bytes()
    new = old.replace(b"Acme Corp", b"Acme Inc.")
    same_size_same_mtime(note, old, new)

    report = env.sync()

    assert not report.quick
    assert "Acme Inc." in env.fact(SARAH, "sarah-chen-001")["fact"]


def test_an_items_json_edit_keeping_size_and_mtime_is_seen(env: Env) -> None:
    items = env.items_path(SARAH)
    old = items.read_bytes()
    new = old.replace(b"Acme Corp", b"Acme Inc.", 1)
    same_size_same_mtime(items, old, new)

    report = env.sync()

    assert not report.quick
    assert "Acme Inc." in body_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))


@pytest.mark.parametrize(
    "change",
    ["new fact note", "deleted fact note", "new daily note", "new memory daily note", "deleted summary", "new entity"],
)
def test_each_kind_of_change_makes_a_full_pass_that_carries_it(env: Env, change: str) -> None:
    facts = env.vault / SARAH_DIR / "facts"
    if change == "new fact note":
        (facts / "Untitled.md").write_text("---\nstatus: active\n---\nSarah Chen plays the cello\n", encoding="utf-8")
    elif change == "deleted fact note":
        (facts / "sarah-chen-002.md").unlink()
    elif change == "new daily note":
        (env.vault / "Daily" / "2026-12-02.md").write_text("- typed in Obsidian\n", encoding="utf-8")
    elif change == "new memory daily note":
        (env.workspace / "memory" / "2026-12-02.md").write_text("- written by the agent\n", encoding="utf-8")
    elif change == "deleted summary":
        (env.life / SARAH / "summary.md").unlink()
    else:
        folder = env.life / "areas" / "people" / "ada-park"
        folder.mkdir()
        (folder / "items.json").write_text('[{"id": "ada-park-001", "fact": "Ada Park runs the lab"}]\n')

    report = env.sync()

    assert not report.quick and report.exit_code == 0, report.to_json()
    assert report.changes, f"{change}: the full pass found nothing to carry"
    age_everything(env)
    assert not env.sync().quick, "aging changed every stat"
    assert env.sync().quick, f"{change}: the passes after the change did not settle"


def test_a_note_in_a_folder_git_ignores_is_still_seen(env: Env) -> None:
    (env.vault / ".gitignore").write_text(
        (env.vault / ".gitignore").read_text(encoding="utf-8") + "2 Areas/people/sarah-chen/facts/\n",
        encoding="utf-8",
    )
    env.sync()
    (env.vault / SARAH_DIR / "facts" / "Untitled.md").write_text("Sarah Chen plays the cello\n", encoding="utf-8")

    report = env.sync()

    assert not report.quick
    assert any("cello" in f["fact"] for f in env.facts(SARAH)), report.to_json()


def test_a_change_outside_the_synced_places_keeps_the_pass_quick(env: Env) -> None:
    (env.vault / "Inbox.md").write_text("my own note\n", encoding="utf-8")
    (env.vault / ".obsidian" / "app.json").write_text("{}\n", encoding="utf-8")
    (env.vault / "2 Areas" / "people" / "sarah-chen" / "photo.png").write_bytes(b"\x89PNG")
    assert env.sync().quick


@pytest.mark.parametrize("how", ["config", "base", "snapshot", "version", "problems"])
def test_anything_the_snapshot_cannot_vouch_for_means_a_full_pass(env: Env, how: str) -> None:
    state = env.cfg.state_dir
    if how == "config":
        env.reconfigure(agent_name="another agent")
    elif how == "base":
        shutil.copy2(state / "base.sqlite", state / "copy")
        os.replace(state / "copy", state / "base.sqlite")
    elif how == "snapshot":
        (state / "snapshot.json").write_text("{not json", encoding="utf-8")
    else:
        saved = json.loads((state / "snapshot.json").read_text(encoding="utf-8"))
        if how == "version":
            saved["key"] = "made by another version"
        else:
            saved["problems"] = [["MEMORY.md", "a problem", "of no known severity"]]
        (state / "snapshot.json").write_text(json.dumps(saved), encoding="utf-8")

    assert not env.sync().quick


def test_a_memory_file_written_within_the_racy_window_is_not_trusted(env: Env) -> None:
    """A file modified in the same clock tick as the walk could change again without its stat moving."""
    summary = env.life / SARAH / "summary.md"
    summary.write_bytes(summary.read_bytes())  # same bytes, fresh mtime
    walk = walk_memory(env.workspace, env.life)
    assert walk.entries[f"life/{SARAH}/summary.md"] is None
    assert walk.entries[f"life/{SARAH}/items.json"] is not None
    assert not env.sync().quick


def test_a_note_the_pass_just_wrote_then_edited_keeping_size_and_mtime_is_seen(env: Env) -> None:
    """git compares stat times in whole seconds: a note written in the second the snapshot was taken and edited
    again in that second is hashed by the quick check (a suspect) rather than trusted to its stat."""
    env.agent_edit(SARAH, lambda facts: facts[0].update(fact=facts[0]["fact"].replace("Acme Corp", "Acme Ltd.")))
    assert not env.sync().quick
    note = env.fact_note(SARAH_DIR, "sarah-chen-001")
    old = note.read_bytes()
    assert b"Acme Ltd." in old
    same_size_same_mtime(note, old, old.replace(b"Acme Ltd.", b"Acme Inc."))
    saved = json.loads((env.cfg.state_dir / "snapshot.json").read_text(encoding="utf-8"))
    recorded = saved["suspects"].get(f"{SARAH_DIR}/facts/sarah-chen-001.md")
    assert recorded is None or recorded == blob_id(old)

    assert not env.sync().quick
    assert "Acme Inc." in env.fact(SARAH, "sarah-chen-001")["fact"]


def test_the_places_a_pass_reads(env: Env) -> None:
    places = Places(env.cfg)
    assert places.read_by_a_pass("2 Areas/people/sarah-chen/facts/sarah-chen-001.md")
    assert places.read_by_a_pass("2 Areas/people/new/")
    assert places.read_by_a_pass("Daily/2026-12-02.md")
    assert places.read_by_a_pass("Daily/")
    assert not places.read_by_a_pass("Daily/archive/2020-01-01.md")
    assert not places.read_by_a_pass("2 Areas/people/sarah-chen/photo.png")
    assert not places.read_by_a_pass("2 Areas/.hidden/x.md")
    assert not places.read_by_a_pass("Inbox.md")
    assert not places.read_by_a_pass(".vaultsync/")


def test_a_memory_file_too_fresh_for_its_stat_is_recorded_by_content(env: Env) -> None:
    """The agent wrote items.json just before the pass: the snapshot keeps a hash of what the scan read."""
    items = env.items_path(SARAH)
    items.write_bytes(items.read_bytes())
    env.sync()
    saved = json.loads((env.cfg.state_dir / "snapshot.json").read_text(encoding="utf-8"))
    assert saved["memory"][f"life/{SARAH}/items.json"][0] == "sha1"
    assert env.sync().quick, "a fresh file recorded by its content must not force full passes"
    old = items.read_bytes()
    same_size_same_mtime(items, old, old.replace(b"Acme Corp", b"Acme Inc.", 1))

    assert not env.sync().quick
    assert "Acme Inc." in body_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))


def test_a_memory_file_too_fresh_at_the_walk_but_not_at_the_end_is_recorded_by_its_stat(env: Env) -> None:
    """A tree copied just before a long pass: once the pass ends, its files are old enough for their stat."""
    items = env.items_path(SARAH)
    items.write_bytes(items.read_bytes())
    set_prop(env.fact_note(LIWEI_DIR, "li-wei-001"), "status", "superseded")  # something to apply
    waits: list[int] = []

    def slow_progress(done: int, total: int) -> None:
        if not waits:
            waits.append(done)
            time.sleep(RACY_NS / 1e9 + 0.2)

    assert env.sync(progress=slow_progress).changes and waits
    saved = json.loads((env.cfg.state_dir / "snapshot.json").read_text(encoding="utf-8"))
    st = items.stat()
    assert saved["memory"][f"life/{SARAH}/items.json"] == [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    assert aged_stat(items, b"other bytes") is None, "a stat is only kept for the bytes the pass read"
    assert env.sync().quick
    old = items.read_bytes()
    same_size_same_mtime(items, old, old.replace(b"Acme Corp", b"Acme Inc.", 1))

    assert not env.sync().quick
    assert "Acme Inc." in body_of(env.fact_note(SARAH_DIR, "sarah-chen-001"))
