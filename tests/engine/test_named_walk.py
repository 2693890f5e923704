"""A pass told which memory file changed (``PassOptions.changed_memory``, what a write through the API sets):
it stats that file instead of walking the memory tree, ends exactly where a pass with the whole walk ends, and
leaves every change it did not look at to the next plain pass, which finds it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers.settled import commits, settled, shown
from helpers.twoway import (
    ACME,
    ACME_DIR,
    ATLAS,
    ATLAS_DIR,
    LIWEI,
    LIWEI_DIR,
    MIGUEL,
    MIGUEL_DIR,
    SARAH,
    SARAH_DIR,
    Env,
    base_rows,
    isolate_git,
    set_prop,
)

from vaultsync.app import memory
from vaultsync.state.stat_walk import walk_memory, walk_named

SARAH_ITEMS = f"life/{SARAH}/items.json"


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    return settled(synced_template, tmp_path / "setup")


def _texts(env: Env, vault_dir: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((env.vault / vault_dir / "facts").glob("*.md")))


def _first_note(env: Env, vault_dir: str) -> Path:
    return sorted((env.vault / vault_dir / "facts").glob("*.md"))[0]


def test_a_remember_leaves_what_it_did_not_look_at_to_the_next_sync(env: Env) -> None:
    # Before the write: the agent edits Miguel's facts (the write names only Sarah's file), the person edits
    # a note of Li Wei's (git status sees every note, so the write's own pass carries it).
    env.agent_edit(MIGUEL, lambda facts: facts[0].update(fact="Miguel Ortiz moved to the Lisbon office"))
    set_prop(env.fact_note(LIWEI_DIR, "li-wei-001"), "category", "supplier")

    written = memory.remember(env.cfg, SARAH, "Sarah Chen keeps bonsai trees")

    new_id = written.fact.id if written.fact else ""
    assert written.report.scoped and written.report.exit_code == 0, written.report.to_json()
    assert "Sarah Chen keeps bonsai trees" in env.fact_note(SARAH_DIR, new_id).read_text(encoding="utf-8")
    assert env.fact(LIWEI, "li-wei-001")["category"] == "supplier"
    assert "Lisbon" not in _texts(env, MIGUEL_DIR), "the write's pass walked the memory tree after all"
    assert not env.git("status", "--porcelain").strip()

    # After the write: the agent edits Acme's facts, the person edits a note of Project Atlas.
    env.agent_edit(ACME, lambda facts: facts[0].update(fact="Acme Corp moved its headquarters to Porto"))
    atlas_note = _first_note(env, ATLAS_DIR)
    set_prop(atlas_note, "category", "timeline-checked")

    report = env.sync()

    assert report.exit_code == 0 and not report.quick, report.to_json()
    assert "Miguel Ortiz moved to the Lisbon office" in _texts(env, MIGUEL_DIR)
    assert "Acme Corp moved its headquarters to Porto" in _texts(env, ACME_DIR)
    assert [f for f in env.facts(ATLAS) if f.get("category") == "timeline-checked"]
    assert "Sarah Chen keeps bonsai trees" in _texts(env, SARAH_DIR)
    assert not env.git("status", "--porcelain").strip()
    again = env.sync()
    assert again.quick or not again.actions, again.actions


def test_the_named_file_alone_ends_as_the_whole_walk_does(
    synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    named, walked = settled(synced_template, tmp_path / "named"), settled(synced_template, tmp_path / "walked")
    heads = {}
    for env in (named, walked):
        heads[env.root] = env.head()
        env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-007", "fact": "Sarah Chen keeps bonsai"}))
        set_prop(env.fact_note(LIWEI_DIR, "li-wei-001"), "category", "supplier")

    with_knob = named.sync(changed_memory=frozenset({SARAH_ITEMS}))
    without = walked.sync()

    assert with_knob.scoped and without.scoped
    assert with_knob.changes and shown(with_knob, named) == shown(without, walked)
    assert named.snapshot() == walked.snapshot(), "the two passes left other files"
    assert base_rows(named) == base_rows(walked), "the two passes recorded another base"
    assert commits(named, heads[named.root]) == commits(walked, heads[walked.root])
    assert named.git("rev-parse", "HEAD^{tree}") == walked.git("rev-parse", "HEAD^{tree}")
    # Each recorded a snapshot that is true for every file: the next pass finds nothing to do.
    for env in (named, walked):
        after = env.sync()
        assert after.quick or not after.actions, after.actions


def test_a_pass_without_a_usable_snapshot_walks_everything(env: Env) -> None:
    (env.cfg.state_dir / "snapshot.json").unlink()
    env.agent_edit(MIGUEL, lambda facts: facts[0].update(fact="Miguel Ortiz moved to the Lisbon office"))
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-007", "fact": "Sarah Chen keeps bonsai"}))

    report = env.sync(changed_memory=frozenset({SARAH_ITEMS}))

    assert not report.scoped and not report.quick
    assert "Miguel Ortiz moved to the Lisbon office" in _texts(env, MIGUEL_DIR)
    assert "Sarah Chen keeps bonsai" in _texts(env, SARAH_DIR)
    assert env.sync().quick


def test_the_walk_of_named_files(tmp_path: Path) -> None:
    workspace, life = tmp_path / "workspace", tmp_path / "life"
    (workspace / "memory").mkdir(parents=True)
    (life / "areas/people/sarah").mkdir(parents=True)
    (life / "areas/people/sarah/items.json").write_text("[]\n")
    (life / "areas/people/.hidden").mkdir()
    (life / "areas/people/.hidden/items.json").write_text("[]\n")
    (life / "areas/people/kim").mkdir()
    (life / "areas/people/link").symlink_to(life / "areas/people/kim")
    (workspace / "MEMORY.md").write_text("# memory\n")
    hour_ago = time.time() - 3600  # old enough for the walk to trust their stats
    for path in (workspace / "MEMORY.md", life / "areas/people/sarah/items.json"):
        os.utime(path, (hour_ago, hour_ago))
    whole = walk_memory(workspace, life)
    carried = {"life/areas/people/gone/items.json": [1, 2, 3, 4], "life/areas/people/kept/items.json": [5, 6, 7, 8]}

    walk = walk_named(workspace, life, ["life/areas/people/sarah/items.json", "workspace/MEMORY.md"], carried)

    assert walk is not None and walk.named == {"life/areas/people/sarah/items.json", "workspace/MEMORY.md"}
    for key in walk.named:
        assert walk.entries[key] == whole.entries[key] and isinstance(walk.entries[key], list)
    assert walk.entries["life/areas/people/kept/items.json"] == [5, 6, 7, 8]
    gone = walk_named(workspace, life, ["life/areas/people/gone/items.json"], carried)
    assert gone is not None and "life/areas/people/gone/items.json" not in gone.entries
    never = walk_named(workspace, life, ["life/areas/people/nobody/items.json"], carried)
    assert never is not None and set(never.entries) == set(carried)
    # Keys no walk lists in that place: the caller must walk everything.
    for key in (
        "life/areas/people/sarah",  # a folder
        "life/areas/people/.hidden/items.json",
        "life/areas/people/link/items.json",  # below a link
        "life/../outside.json",
        "workspace/notes.md",
        "elsewhere/items.json",
        "life//items.json",
    ):
        assert walk_named(workspace, life, [key], carried) is None, key
