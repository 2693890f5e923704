"""A full pass over a large memory reads and writes a batch of entities at a time and ends exactly as a pass
reading everything at once: the same files on both sides, the same base, the same commits, the same report.

Each test makes its edits to vault-example synced and settled, then copies the setup twice; the copies' snapshots
belong to another configuration, so both run a full pass: one with ``full_batch=0`` (everything at once), one
in batches of one or two entities. vault-example holds nine entities, so every pass here is many batches.
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers.settled import EDITS, SCOPED, WIDENED, Edit, apply_edits, commits, rounds_settings, settled
from helpers.twoway import LIWEI_DIR, NOW, SARAH_DIR, Env, base_rows, clone, isolate_git, replace_text
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.engine import batches as batch_reads
from vaultsync.engine import second_walk
from vaultsync.engine.batches import cut_batches
from vaultsync.memory.tree import MemoryListing, list_memory
from vaultsync.model import ExitCode, Report
from vaultsync.state.base import BaseStore
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import VaultListing, list_fact_notes, list_vault

EVERY_EDIT = {**SCOPED, **WIDENED}


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    return settled(synced_template, tmp_path / "setup")


def shown(report: Report, env: Env) -> dict[str, Any]:
    """The report, its lists in one order: a batched pass finds the same things batch by batch."""
    data = report.to_json()
    for key in ("commits", "quick", "scoped"):
        data.pop(key)
    for key in ("actions", "changes", "problems", "conflicts"):
        data[key] = sorted(data[key], key=json.dumps)
    return json.loads(json.dumps(data).replace(str(env.root), "ROOT"))


def both(env: Env, tmp_path: Path, batch: int, **options: Any) -> tuple[Env, Report]:
    """Run a full pass over two copies of ``env``, one in batches of ``batch`` entities; both must end the same."""
    n = len(list(tmp_path.glob("whole-*")))
    head = env.head()
    whole, batched = clone(env.root, tmp_path / f"whole-{n}"), clone(env.root, tmp_path / f"batched-{n}")
    expected = whole.sync(full_batch=0, **options)
    seen: list[tuple[int, int]] = []
    report = batched.sync(full_batch=batch, progress=lambda done, total: seen.append((done, total)), **options)
    for result in (expected, report):
        assert not result.scoped and not result.quick, "the copies must run a full pass"
    assert batched.snapshot() == whole.snapshot(), "the batches left other files than a whole pass"
    assert base_rows(batched) == base_rows(whole), "the batches recorded another base"
    assert commits(batched, head) == commits(whole, head)
    assert shown(report, batched) == shown(expected, whole)
    if seen:
        assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress went backwards"
        assert seen[-1][0] == seen[-1][1], "progress did not reach its total"
    return batched, report


@pytest.mark.parametrize("edit", EVERY_EDIT.values(), ids=EVERY_EDIT.keys())
def test_an_edit_ends_as_in_a_whole_pass(env: Env, tmp_path: Path, edit: Edit) -> None:
    edit(env)
    batched, report = both(env, tmp_path, batch=1)
    assert report.changes, "the edit was not carried"
    assert batched.sync().quick, "the batched pass did not settle"


def test_nothing_changed_writes_nothing_and_settles(env: Env, tmp_path: Path) -> None:
    batched, report = both(env, tmp_path, batch=2)
    assert not report.actions and not report.changes and report.exit_code == 0
    assert batched.sync().quick


def test_a_mention_across_batches_is_linked(env: Env, tmp_path: Path) -> None:
    """A fact naming entities read in other batches links them as a whole pass does."""
    EVERY_EDIT["agent adds a fact naming others"](env)
    batched, _ = both(env, tmp_path, batch=1)
    text = batched.fact_note(SARAH_DIR, "sarah-chen-099").read_text(encoding="utf-8")
    for link in ("[[miguel-ortiz|Miguel Ortiz]]", "[[li-wei|", "[[acme-corp|Acme Corp]]"):
        assert link in text, f"{link} missing from the new fact's mentions:\n{text}"


def test_a_conflict_is_kept_and_resolved_across_batches(env: Env, tmp_path: Path) -> None:
    EVERY_EDIT["both edit one fact"](env)
    batched, report = both(env, tmp_path, batch=1)
    assert len(report.conflicts) == 1 and report.open_conflicts == [report.conflicts[0].copy_path]
    (batched.vault / report.conflicts[0].copy_path).unlink()
    again, resolved = both(batched, tmp_path, batch=1)
    assert resolved.open_conflicts == [] and "conflict resolved" in again.git("log", "-2", "--format=%s")


def test_a_dry_run_in_batches_shows_the_whole_plan_and_writes_nothing(env: Env, tmp_path: Path) -> None:
    EVERY_EDIT["both edit one fact"](env)
    EVERY_EDIT["agent adds a fact naming others"](env)
    EVERY_EDIT["person archives a project"](env)
    batched, report = both(env, tmp_path, batch=1, dry_run=True)
    assert report.dry_run and report.files_written == 0 and len(report.conflicts) == 1
    assert any("move" in a for a in report.actions) and len(report.actions) > 3, report.actions
    assert batched.snapshot() == env.snapshot(), "a dry run wrote a file"
    assert batched.git("status", "--porcelain").strip(), "a dry run committed the person's edits"


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_a_kind_folder_renamed_moves_each_entity_in_the_batch_of_its_pair(env: Env, tmp_path: Path, batch: int) -> None:
    """Renaming ``people`` moves every entity in it; each move is read with its pair, a few pairs a batch, and
    the pass ends as a whole one: the memory folders moved, nothing deleted, nothing created."""
    shutil.move(env.vault / "2 Areas/people", env.vault / "2 Areas/contacts")
    people = sorted(p.name for p in (env.vault / "2 Areas/contacts").iterdir())
    batches = list(cut_batches(*_listings(env), batch, partial(list_fact_notes, env.vault, _layout(env))))
    paired = [b for b in batches if b.moves]
    assert sorted(new for b in paired for _, new in b.moves) == [f"areas/contacts/{p}" for p in people]
    assert all(b.size <= max(2, batch) for b in paired), [b.rels for b in paired]
    batched, report = both(env, tmp_path, batch=batch)
    assert {c.what for c in report.changes if c.side == "vault"} == {f"moved from areas/people/{p}" for p in people}, (
        report.changes
    )
    assert sorted(p.name for p in (batched.life / "areas/contacts").iterdir()) == people
    assert batched.sync().quick, "the batched pass did not settle"


def _layout(env: Env) -> VaultLayout:
    return VaultLayout(env.cfg.layout)


def _listings(env: Env) -> tuple[MemoryListing, VaultListing, list[str]]:
    """What a batched pass lists before it reads: both trees and the base's keys."""
    store = BaseStore(env.cfg.state_dir / "base.sqlite", read_only=True)
    keys = store.keys()
    store.close()
    layout = _layout(env)
    return list_memory(env.workspace, env.life, layout.reserved_life_dirs()), list_vault(env.vault, layout), keys


def test_the_deletion_guard_counts_every_batch(env: Env, tmp_path: Path) -> None:
    """No batch alone deletes enough to hold; all of them together do, and the pass gives way to a whole one,
    which holds the deletions (the shrink guard, once the mass-delete stop) and commits none of them."""
    for folder in sorted((env.vault / "2 Areas/people").iterdir()):
        shutil.rmtree(folder)
    batched, report = both(env, tmp_path, batch=1)
    assert report.exit_code == ExitCode.HELD and not report.stopped, report.to_json()
    assert {h.path for h in report.held} >= {"2 Areas/people/sarah-chen", "2 Areas/people/li-wei"}
    assert (batched.life / "areas/people/sarah-chen/items.json").exists()
    assert batched.git("status", "--porcelain").strip(), "the person's deletions were committed"


def test_a_missing_top_folder_stops_before_any_batch_is_written(env: Env, tmp_path: Path) -> None:
    shutil.rmtree(env.workspace / "memory")
    batched, report = both(env, tmp_path, batch=1)
    assert report.exit_code == 4 and "memory folder" in report.stopped
    assert len(list((batched.vault / "Daily").iterdir())) > 1


def test_a_batch_changed_between_the_two_walks_ends_the_pass_there(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What was written is committed, nothing later is written, no snapshot is recorded, and the next pass
    (a full one) ends as a whole pass would have."""
    copy = clone(env.root, tmp_path / "copy")
    settle = second_walk.settle_conflicts

    def edit_between_the_walks(*args: Any) -> Any:
        replace_text(copy.fact_note(SARAH_DIR, "sarah-chen-002"), "on Tuesdays", "on Wednesdays")
        return settle(*args)

    person_edits = copy.fact_note(LIWEI_DIR, "li-wei-001")
    replace_text(person_edits, "的客户经理", "的客户总监")
    replace_text(copy.fact_note(SARAH_DIR, "sarah-chen-001"), "manager at Acme Corp", "director at Acme Corp")
    monkeypatch.setattr(second_walk, "settle_conflicts", edit_between_the_walks)
    report = copy.sync(full_batch=1)
    assert [p.message for p in report.problems if "files changed while this pass ran" in p.message]
    # li-wei's batch comes before sarah-chen's: written and committed; sarah-chen's stopped the pass
    assert "的客户总监" in (copy.life / "areas/people/li-wei/items.json").read_text(encoding="utf-8")
    assert "director" not in (copy.life / "areas/people/sarah-chen/items.json").read_text(encoding="utf-8")
    status = copy.git("status", "--porcelain", "--untracked-files=no").strip()
    changed_note = copy.fact_note(SARAH_DIR, "sarah-chen-002").relative_to(copy.vault)
    assert status == f'M "{changed_note}"', "what the pass wrote was not committed"
    monkeypatch.undo()
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    after = copy.sync(full_batch=1)
    assert not after.quick and not after.scoped, "a pass that did not finish recorded a snapshot"
    items = (copy.life / "areas/people/sarah-chen/items.json").read_text(encoding="utf-8")
    assert "director at Acme Corp" in items and "on Wednesdays" in items
    assert copy.sync().quick


def test_batches_with_nothing_to_write_are_read_once(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planned in the first walk against the names the last pass left, a batch with nothing to write is not read
    again; once a name changes, every batch is."""
    reads: list[list[str]] = []
    scan = batch_reads.scan_vault_scope

    def counted(root: Path, layout: Any, rels: list[str], files: list[str]) -> Any:
        reads.append(rels)
        return scan(root, layout, rels, files)

    monkeypatch.setattr(batch_reads, "scan_vault_scope", counted)
    EVERY_EDIT["person edits a fact"](env)
    both(env, tmp_path, batch=1)
    entity_batches = [r for r in reads if r]
    first = len({tuple(r) for r in entity_batches})  # the first walk reads each batch once
    assert first > 5 and entity_batches[first:] == [["areas/people/sarah-chen"]], entity_batches
    reads.clear()
    EVERY_EDIT["agent renames an entity"](env)
    both(env, tmp_path, batch=1)
    assert len([r for r in reads if r]) == 2 * first, "a renamed entity changes other batches' links: all read again"


@rounds_settings("VAULTSYNC_BATCHED_EXAMPLES", 4)
@given(
    rounds=st.lists(st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=4), min_size=1, max_size=3),
    batch=st.integers(min_value=1, max_value=4),
)
def test_rounds_of_mixed_edits_end_as_whole_passes_would(
    rounds: list[list[str]],
    batch: int,
    synced_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tmp = tmp_path_factory.mktemp("rounds")
    isolate_git(monkeypatch.setenv, tmp / "git-env")
    env = settled(synced_template, tmp / "setup")
    for n, names in enumerate(rounds):
        apply_edits(env, names)
        options = {"confirm_deletes": True, "now": lambda n=n: NOW.replace(minute=n)}
        both(env, tmp, batch, **options)
        env.sync(**options)  # the rounds go on from the edited setup, synced


def test_daily_notes_deleted_across_batches_are_held_as_by_a_whole_pass(env: Env, tmp_path: Path) -> None:
    """Files come ten times a batch's size at a time: with batches of one, twelve daily notes span two file
    batches, and deleting three in each (six in all, more than ``max_daily_deletes``) is held."""
    for day in range(1, 13):
        (env.workspace / "memory" / f"2026-10-{day:02d}.md").write_text(f"# 2026-10-{day:02d}\n\n- a day\n")
    assert env.sync().exit_code == ExitCode.CLEAN
    names = sorted((env.workspace / "memory").glob("2026-*.md"))
    for note in names[:3] + names[-3:]:
        note.unlink()
    batched, report = both(env, tmp_path, batch=1)
    assert report.exit_code == ExitCode.HELD, report.to_json()
    assert sorted(h.path for h in report.held) == sorted(f"Daily/{n.name}" for n in names[:3] + names[-3:])
    assert all((batched.vault / "Daily" / n.name).is_file() for n in names)
