"""The scoped pass: after a settled pass, a change reads only the entities and files it touches, and ends exactly
where a full pass would.

Each test starts from vault-example synced and settled (every file aged, so the snapshot trusts stats), makes
one or more edits, then copies the whole setup, state folder included. The copy's snapshot belongs to another
configuration (its paths differ), so the copy runs a full pass. Both results are compared byte for byte: every
file of both sides, the base, the commits' authors, subjects and files, and the report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.settled import (
    EDITS,
    SCOPED,
    WIDENED,
    Edit,
    age_everything,
    agent_adds_fact,
    agent_breaks_items,
    agent_makes_entity,
    agent_mends_items,
    apply_edits,
    both_edit_one_fact,
    commits,
    nothing_synced,
    person_archives_project,
    person_edits_fact,
    person_empties_fact_note,
    rounds_settings,
    settled,
    shown,
)
from helpers.twoway import (
    ATLAS,
    MIGUEL,
    NOW,
    SARAH,
    SARAH_DIR,
    Env,
    base_rows,
    clone,
    isolate_git,
)
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.model import Report


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    return settled(synced_template, tmp_path / "setup")


def run_both(env: Env, tmp_path: Path, **options: Any) -> tuple[Report, Report]:
    """Sync ``env`` (scoped when it can be) and a copy of it (in full); both must end the same."""
    head = env.head()
    ref = clone(env.root, tmp_path / f"ref-{len(list(tmp_path.glob('ref-*')))}")
    report = env.sync(**options)
    full = ref.sync(**options)
    assert not full.scoped and not full.quick, "the copy must run a full pass"
    assert env.snapshot() == ref.snapshot(), "the scoped pass left other files than a full pass"
    assert base_rows(env) == base_rows(ref), "the scoped pass recorded another base"
    assert commits(env, head) == commits(ref, head)
    assert shown(report, env) == shown(full, ref)
    return report, ref


@pytest.mark.parametrize("edit", SCOPED.values(), ids=SCOPED.keys())
def test_a_small_change_is_scoped_and_ends_as_a_full_pass_would(env: Env, tmp_path: Path, edit: Edit) -> None:
    edit(env)
    report, _ = run_both(env, tmp_path)
    assert report.scoped, "the pass read everything"
    assert report.changes, "the edit was not carried"
    after = env.sync()
    assert after.quick or not after.actions, f"the scoped pass did not settle: {after.actions}"


def test_a_scoped_pass_does_without_the_batched_pass(env: Env) -> None:
    """The hourly pass after an agent's small write loads only what it runs: not the modules of a pass in
    batches or of a first import, which cost a cold start a tenth of a second at 50k facts."""
    agent_adds_fact("Sarah Chen booked the lab for Friday")(env)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from vaultsync import config\n"
        "from vaultsync.app.sync import sync\n"
        f"report = sync(config.load(Path({str(env.config_path)!r})))\n"
        "print(report.scoped, sorted(m for m in sys.modules if m.split('.')[-1] in "
        "('batched', 'batches', 'second_walk', 'first_import')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.splitlines()[-1:] == ["True []"], run.stdout + run.stderr


@pytest.mark.parametrize("edit", WIDENED.values(), ids=WIDENED.keys())
def test_a_change_to_names_or_the_set_of_entities_runs_in_full(env: Env, tmp_path: Path, edit: Edit) -> None:
    edit(env)
    report, _ = run_both(env, tmp_path, confirm_deletes=True)
    assert not report.scoped and not report.quick
    assert report.changes


def test_an_entity_created_or_renamed_is_linked_from_the_facts_naming_it(env: Env, tmp_path: Path) -> None:
    agent_adds_fact("Sarah Chen hired Nora Lind to design the enclosure")(env)
    env.sync()
    note = env.fact_note(SARAH_DIR, "sarah-chen-099")
    assert "[[nora-lind" not in note.read_text(encoding="utf-8")

    agent_makes_entity(env)
    created, _ = run_both(env, tmp_path)
    assert created.scoped
    assert "[[nora-lind|Nora Lind]]" in note.read_text(encoding="utf-8")

    summary = env.life / "areas/people/nora-lind/summary.md"
    summary.write_text("# Nora Lindqvist\n\nDesigns enclosures.\n", encoding="utf-8")
    renamed, _ = run_both(env, tmp_path)
    assert renamed.scoped, "the entity naming the old name was not read with the renamed one"
    assert "[[nora-lind" not in note.read_text(encoding="utf-8")
    assert env.sync().quick


def test_a_new_entity_folder_beside_one_differing_only_in_case_runs_in_full(env: Env, tmp_path: Path) -> None:
    (env.life / "areas/people/Nora-Lind").mkdir()
    agent_makes_entity(env)
    report, _ = run_both(env, tmp_path)
    assert not report.scoped and report.changes


def test_a_change_outside_synced_places_is_quick(env: Env) -> None:
    nothing_synced(env)
    assert env.sync().quick


def test_a_new_mention_links_an_entity_the_pass_did_not_read(env: Env, tmp_path: Path) -> None:
    agent_adds_fact("Sarah Chen and Miguel Ortiz met Li Wei at Acme Corp")(env)
    report, _ = run_both(env, tmp_path)
    assert report.scoped
    text = env.fact_note(SARAH_DIR, "sarah-chen-099").read_text(encoding="utf-8")
    for link in ("[[miguel-ortiz|Miguel Ortiz]]", "[[li-wei|", "[[acme-corp|Acme Corp]]"):
        assert link in text, f"{link} missing from the new fact's mentions:\n{text}"


def test_a_conflict_copy_resolved_later_is_committed_by_a_scoped_pass(env: Env, tmp_path: Path) -> None:
    both_edit_one_fact(env)
    first, _ = run_both(env, tmp_path)
    assert first.scoped and len(first.conflicts) == 1
    assert env.sync().open_conflicts == [first.conflicts[0].copy_path], "a quick pass forgot the open copy"
    (env.vault / first.conflicts[0].copy_path).unlink()
    report, _ = run_both(env, tmp_path)
    assert report.scoped and report.open_conflicts == []
    assert "conflict resolved" in env.git("log", "-1", "--format=%s")
    assert env.git("status", "--porcelain") == ""
    assert env.sync().quick


def test_a_scoped_pass_keeps_the_deletion_guard(env: Env, tmp_path: Path) -> None:
    """Deleting every fact of one entity is a small share of the vault (the many-deletions bound counts every
    unit, read or not), but an entity losing most of its facts: a scoped pass holds it as a full one does, and
    carries it once accepted."""
    facts = env.facts(SARAH)
    for note in (env.vault / SARAH_DIR / "facts").glob("*.md"):
        note.unlink()
    report, _ = run_both(env, tmp_path)
    assert report.scoped and not report.stopped
    assert [(h.path, h.writer, h.rule) for h in report.held] == [(SARAH_DIR, "person", "removed most facts")]
    assert not any("units at once" in h.rule for h in report.held)
    assert env.facts(SARAH) == facts
    accepted, _ = run_both(env, tmp_path, accept=frozenset({SARAH_DIR}))
    assert accepted.held == [] and not accepted.stopped
    assert env.facts(SARAH) == []


def test_a_folder_moved_with_a_note_named_like_another_stays_scoped(env: Env, tmp_path: Path) -> None:
    """Two fact notes named alike are linked by path; moving one keeps the name shared, so the links that
    change are the moved entity's own."""
    fact = {"category": "context", "timestamp": "2026-12-01", "source": "chat"}
    old = {**fact, "id": "atlas-099", "fact": "Atlas kept spares in the lab", "status": "superseded"}
    atlas = [{**old, "supersededBy": "shared-001"}, {**fact, "id": "shared-001", "fact": "Atlas keeps spares"}]
    env.agent_edit(ATLAS, lambda facts: facts.extend({"status": "active", **f} for f in atlas))
    sarah = {**fact, "id": "shared-001", "fact": "Sarah Chen keeps the keys", "status": "active"}
    env.agent_edit(SARAH, lambda facts: facts.append(sarah))
    env.sync()
    age_everything(env)
    env.sync()
    assert env.sync().quick
    person_archives_project(env)
    report, _ = run_both(env, tmp_path)
    assert report.scoped, "the pass read everything"
    note = (env.vault / "4 Archives/project-atlas/facts/atlas-099.md").read_text(encoding="utf-8")
    assert "[[4 Archives/project-atlas/facts/shared-001|shared-001]]" in note, note


def test_the_pass_after_a_move_trusts_the_moved_folder(env: Env) -> None:
    """A pass that moves a folder records its snapshot with the memory walk moved along: the next pass is a
    quick one, and an edit in the moved memory folder is still seen."""
    person_archives_project(env)
    assert env.sync().scoped
    assert (env.life / "archives/project-atlas/items.json").exists()
    assert env.sync().quick, "the pass after the move read the moved folder again"
    text = "Atlas closed its last ticket"
    record = {"id": "atlas-098", "fact": text, "category": "context", "timestamp": "2026-12-01", "source": "chat"}
    env.agent_edit("archives/project-atlas", lambda facts: facts.append({**record, "status": "active"}))
    report = env.sync()
    assert report.scoped and report.changes
    assert text in (env.vault / "4 Archives/project-atlas/facts/atlas-098.md").read_text(encoding="utf-8")


def test_a_missing_top_folder_stops_a_scoped_pass_as_it_stops_a_full_one(env: Env, tmp_path: Path) -> None:
    """One project in the vault: a missing "1 Projects" is one entity gone, a change small enough to scope."""
    shutil.rmtree(env.vault / "1 Projects")
    before = env.snapshot()
    report, _ = run_both(env, tmp_path)
    assert report.scoped
    assert "vault folder '1 Projects' held synced notes and is missing" in report.stopped
    assert env.snapshot() == before, "a stopped pass wrote"


def test_a_missing_memory_folder_stops_a_scoped_pass_as_it_stops_a_full_one(env: Env, tmp_path: Path) -> None:
    """Five daily notes are a change small enough to scope; their folder gone is a missing place, not five
    deletions to carry to the vault."""
    shutil.rmtree(env.workspace / "memory")
    before = env.snapshot()
    report, _ = run_both(env, tmp_path)
    assert report.scoped
    assert "memory folder" in report.stopped and "is missing" in report.stopped
    assert env.snapshot() == before, "a stopped pass wrote"


def test_every_entity_gone_from_a_side_runs_in_full(env: Env, tmp_path: Path) -> None:
    """An emptied side is what an unmounted folder looks like: the full pass's checks decide, not a scoped one.
    Every entity gone is many deletions: the shrink guard holds them (once the mass-delete stop)."""
    for folder in {p.parent for name in ("items.json", "summary.md") for p in env.life.rglob(name)}:
        shutil.rmtree(folder)
    before = env.snapshot()
    report, _ = run_both(env, tmp_path)
    assert not report.scoped and not report.quick
    assert report.held and all("units at once" in h.rule for h in report.held), report.to_json()
    assert env.snapshot() == before, "a held deletion was carried"


def test_an_edit_that_keeps_size_and_mtime_in_a_file_the_scoped_pass_wrote_is_seen(env: Env) -> None:
    agent_adds_fact("Sarah Chen booked the lab for Friday")(env)
    assert env.sync().scoped
    note = env.fact_note(SARAH_DIR, "sarah-chen-099")
    old = note.read_bytes()
    new = old.replace(b"Friday", b"Monday")
    st = note.stat()
    note.write_bytes(new)
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    report = env.sync()
    assert report.scoped and not report.quick
    assert env.fact(SARAH, "sarah-chen-099")["fact"] == "Sarah Chen booked the lab for Monday"


def problems(report: Report, env: Env) -> list[tuple[str, str, str]]:
    root = str(env.root)
    return sorted((p.path.replace(root, "ROOT"), p.message, str(p.severity)) for p in report.problems)


def test_standing_problems_let_a_pass_settle_and_are_said_on_every_pass(env: Env, tmp_path: Path) -> None:
    """A broken items.json or an empty note can sit there for weeks: the passes stay quick or scoped meanwhile,
    and every one of them says the problem again, as a full pass would, until the file changes."""
    agent_breaks_items(env)
    person_empties_fact_note(env)
    report, _ = run_both(env, tmp_path)
    found = problems(report, env)
    assert [(path.rpartition("/")[2], severity) for path, _, severity in found] == [
        ("li-wei-002.md", "warning"),
        ("items.json", "error"),
    ]
    assert found[1][0].endswith(f"{MIGUEL}/items.json") and "not valid JSON" in found[1][1]
    assert report.exit_code == 5

    again = env.sync()
    assert again.quick and problems(again, env) == found and again.exit_code == report.exit_code

    person_edits_fact(env)
    elsewhere, _ = run_both(env, tmp_path)
    assert elsewhere.scoped and elsewhere.changes
    assert problems(elsewhere, env) == found, "the problems of the files the scoped pass did not read were lost"

    agent_mends_items(env)
    mended, _ = run_both(env, tmp_path)
    assert mended.scoped
    left = [p for p in found if "items.json" not in p[0]]
    assert problems(mended, env) == left and len(left) == 1
    last = env.sync()
    assert last.quick and problems(last, env) == left and last.exit_code == 0


@rounds_settings("VAULTSYNC_SCOPED_EXAMPLES", 6)
@given(rounds=st.lists(st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=3), min_size=1, max_size=3))
def test_rounds_of_mixed_edits_end_as_full_passes_would(
    rounds: list[list[str]],
    synced_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each round applies a few edits (those that no longer apply are skipped), then compares with a full pass."""
    tmp = tmp_path_factory.mktemp("rounds")
    isolate_git(monkeypatch.setenv, tmp / "git-env")
    env = settled(synced_template, tmp / "setup")
    for n, names in enumerate(rounds):
        apply_edits(env, names)
        run_both(env, tmp, confirm_deletes=True, now=lambda n=n: NOW.replace(minute=n))
