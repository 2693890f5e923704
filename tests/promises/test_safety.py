"""Safety stops and coexistence: what a pass does when it must not go on, and that it then writes nothing.

Three groups, each against a real memory tree, a real vault and a real git repository (no mocks):

1. obsidian-git and the person's own git work: a held ``index.lock`` is waited for, a stale one is reported and
   left for the person, and a repository in the middle of a merge, rebase, cherry-pick, revert or ``git am`` stops
   the pass before anything is written (exit 4).
2. The shrink guard's many-deletions bound (invariant 5): the share and the count thresholds each just below and
   just above, on both sides, hold those deletions (exit 7) and ``accept`` carries them; missing or emptied roots
   and missing top folders stop the pass, and ``--yes`` confirms.
3. Malformed input is never "fixed" by overwriting it (invariant 4), even when the other side edited the same unit
   in the same round; once repaired, the next pass merges both edits (invariant 2).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import inputs
from helpers.twoway import (
    MIGUEL,
    SARAH,
    SARAH_DIR,
    STAMP,
    Env,
    assert_diff_only_touches,
    body_of,
    clone,
    dump_items,
    isolate_git,
    props_of,
    replace_text,
    set_body,
)

from vaultsync import config as configmod
from vaultsync.config import Safety
from vaultsync.git import run as gitrun
from vaultsync.model import ExitCode, Report, Severity

NORA = "[user]\n\tname = Nora\n\temail = nora@example.org\n"


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """vault-example after one clean pass; git as the person sees it (user Nora, no editor prompts)."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env", NORA)
    monkeypatch.setenv("GIT_EDITOR", "true")
    return clone(synced_template, tmp_path / "setup")


# -- helpers ----------------------------------------------------------------------------------------------------
def frozen(workspace: Path, life: Path, vault: Path) -> dict[str, bytes]:
    """Every file a pass could write: both memory roots, the vault, the base and the trash (not .git, not the lock).

    The run lock is left out because every pass rewrites its pid into it; git is compared through HEAD and the
    index (``git_state``) instead of its files.
    """
    files: dict[str, bytes] = {}
    for label, root in (("workspace", workspace), ("life", life), ("vault", vault)):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and not rel.startswith(".git/") and rel != ".vaultsync/lock":
                files[f"{label}/{rel}"] = path.read_bytes()
    return files


def frozen_env(env: Env) -> dict[str, bytes]:
    return frozen(env.workspace, env.life, env.vault)


def git_state(vault: Path) -> tuple[str, str, str]:
    """HEAD, the index (with conflict stages) and the working-tree status, read without taking any git lock."""

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "--no-optional-locks", "-C", str(vault), *args], capture_output=True, text=True, check=True
        ).stdout

    return run("rev-parse", "HEAD"), run("ls-files", "-s"), run("status", "--porcelain")


def git_try(vault: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run git the way the person would, where failing (a conflict) is the expected outcome."""
    return subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, env={**os.environ, **env}, check=False
    )


def assert_stopped_untouched(report: Report, before: dict[str, bytes], after: dict[str, bytes], words: str) -> None:
    assert report.exit_code == ExitCode.SAFETY_STOP, report.to_json()
    assert words in report.stopped, report.stopped
    assert report.commits == [] and report.files_written == 0
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert changed == [], f"a stopped pass changed {changed}"


def add_sarah_fact(env: Env, fact_id: str = "sarah-chen-099", text: str = "Sarah Chen moved to Lisbon") -> None:
    """The agent learns a new fact: items.json gains one entry (a new fact note, new counts on the entity note)."""

    def change(facts: list[dict[str, Any]]) -> None:
        facts.append(
            {
                "id": fact_id,
                "fact": text,
                "category": "status",
                "timestamp": "2026-12-01",
                "source": "conversation",
                "status": "active",
                "supersededBy": None,
            }
        )

    env.agent_edit(SARAH, change)


def agent_sets(env: Env, rel: str, fact_id: str, **values: Any) -> None:
    def change(facts: list[dict[str, Any]]) -> None:
        next(f for f in facts if f.get("id") == fact_id).update(values)

    env.agent_edit(rel, change)


def person_creates_fact(env: Env, text: str) -> Path:
    """A note made with the Fact template in Sarah's facts folder: untracked by git until a pass commits it."""
    note = env.vault / SARAH_DIR / "facts" / "Untitled.md"
    note.write_text(f"---\nstatus: active\ncategory: preference\nsource: manual\n---\n\n{text}\n", encoding="utf-8")
    return note


def tracked(env: Env, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(env.vault), "show", f"HEAD:{path}"], capture_output=True, check=True).stdout


# == 1. obsidian-git coexistence ================================================================================
LOCK_HOLDER = """
import os, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"obsidian-git is staging\\n")
os.close(fd)
print("held", flush=True)
time.sleep(seconds)
os.unlink(path)  # fails (exit 1) if anyone else removed the lock meanwhile
print("released", time.time(), flush=True)
"""


def test_index_lock_held_for_a_moment_is_waited_for_and_the_pass_commits(env: Env) -> None:
    """obsidian-git runs ``git add``/``commit`` on a timer: a pass that meets its lock must wait, not fail or steal it.

    A separate process creates ``.git/index.lock``, holds it 1 s and removes it itself; it exits non-zero if the
    lock vanished under it, so its exit code proves vaultsync never deleted a live lock.
    """
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    set_body(note, "Sarah Chen prefers a written agenda two working days before any meeting\n")
    agent_sets(env, MIGUEL, "miguel-ortiz-003", source="standup 2026-12-01")
    lock = env.vault / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(lock), "1.0"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.time()
        report = env.sync()
        finished = time.time()
        assert holder.wait(timeout=10) == 0, "the lock holder found its lock removed by someone else"
        released = float(holder.stdout.readline().split()[1])
    finally:
        holder.kill()
        holder.wait()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert started < released <= finished, "the pass did not run into the held lock"
    assert len(report.commits) == 2
    person, agent = (env.commit_info(sha) for sha in report.commits)
    assert person[0] == "Nora" and person[2] == {f"{SARAH_DIR}/facts/sarah-chen-004.md"}
    assert agent[0] == "vaultsync agent" and "2 Areas/people/miguel-ortiz/facts/miguel-ortiz-003.md" in agent[2]
    assert env.fact(SARAH, "sarah-chen-004")["fact"].endswith("two working days before any meeting")
    assert props_of(env.fact_note("2 Areas/people/miguel-ortiz", "miguel-ortiz-003"))["source"] == "standup 2026-12-01"
    assert not lock.exists()
    assert git_state(env.vault)[2] == "", "a change in the vault was left out of git"


@pytest.mark.usefixtures("short_lock_wait")
def test_stale_index_lock_stops_before_writing_is_left_in_place_and_the_next_pass_converges(env: Env) -> None:
    """A git process that crashed leaves ``index.lock`` behind; only the person may decide it is stale.

    With edits on both sides the first commit a pass makes is the person's, before any write: after the full
    wait (``LOCK_WAIT_SECONDS``, shortened here; the lock held for a moment above is what the wait is for) the
    pass stops with exit 4, writes nothing, stages nothing, and keeps the lock byte for byte. Once the person
    deletes it, the next pass carries and commits both edits.
    """
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    set_body(note, "Sarah Chen prefers a written agenda two working days before any meeting\n")
    agent_sets(env, MIGUEL, "miguel-ortiz-003", source="standup 2026-12-01")
    lock = env.vault / ".git" / "index.lock"
    lock.write_bytes(b"left by a crashed git add\n")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    before, git_before = frozen_env(env), git_state(env.vault)

    started = time.monotonic()
    report = env.sync()

    assert time.monotonic() - started >= gitrun.LOCK_WAIT_SECONDS, "the pass did not wait for the lock"
    assert_stopped_untouched(report, before, frozen_env(env), "could not commit the person's edits")
    assert "nothing was written" in report.stopped
    failures = [p for p in report.problems if "git commit failed" in p.message]
    assert len(failures) == 1 and failures[0].severity is Severity.ERROR, [p.line() for p in report.problems]
    assert lock.read_bytes() == b"left by a crashed git add\n", "vaultsync touched a lock it does not own"
    assert git_state(env.vault) == git_before, "something was staged or committed"

    lock.unlink()  # the person, having checked that no git process runs
    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert [env.commit_info(sha)[0] for sha in report.commits] == ["Nora", "vaultsync agent"]
    assert env.fact(SARAH, "sarah-chen-004")["fact"].endswith("two working days before any meeting")
    assert props_of(env.fact_note("2 Areas/people/miguel-ortiz", "miguel-ortiz-003"))["source"] == "standup 2026-12-01"
    assert git_state(env.vault)[2] == ""


def agent_commit_blocked(env: Env) -> Path:
    """Only the agent changed something, so the pass writes the vault, then its one commit meets a stale lock."""
    add_sarah_fact(env)
    lock = env.vault / ".git" / "index.lock"
    lock.write_bytes(b"stale\n")
    items = env.items_path(SARAH).read_bytes()
    head = env.head()

    report = env.sync()

    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()
    assert not report.stopped
    assert any("git commit failed" in p.message and p.severity is Severity.ERROR for p in report.problems)
    assert env.fact_note(SARAH_DIR, "sarah-chen-099").exists(), "the write before the commit did not happen"
    assert env.items_path(SARAH).read_bytes() == items
    assert lock.read_bytes() == b"stale\n"
    assert env.head() == head
    return lock


@pytest.mark.usefixtures("short_lock_wait")
def test_stale_index_lock_at_the_agent_commit_exits_5_and_the_next_pass_commits_the_new_fact(env: Env) -> None:
    """When the agent's commit fails the vault is already written: exit 5, and the next pass must commit it."""
    lock = agent_commit_blocked(env)
    lock.unlink()

    report = env.sync()

    assert not [p for p in report.problems if p.severity is Severity.ERROR], [p.line() for p in report.problems]
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    fact_note = f"{SARAH_DIR}/facts/sarah-chen-099.md"
    assert tracked(env, fact_note) == (env.vault / fact_note).read_bytes()
    assert env.fact(SARAH, "sarah-chen-099")["fact"] == "Sarah Chen moved to Lisbon"


@pytest.mark.usefixtures("short_lock_wait")
def test_stale_index_lock_at_the_agent_commit_every_written_note_is_committed_next_pass(env: Env) -> None:
    """Invariant 6: every note the failed pass wrote (the fact note and Sarah's entity note) ends up in git."""
    lock = agent_commit_blocked(env)
    lock.unlink()

    report = env.sync()

    assert [p.line() for p in report.problems] == [], "vaultsync's own rewrite was blamed on the person"
    assert git_state(env.vault)[2] == "", "a note vaultsync wrote was left out of git"


@pytest.mark.usefixtures("short_lock_wait")
def test_stale_index_lock_is_named_in_the_report(env: Env) -> None:
    """The person has to find and delete the lock: the message must say which file."""
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants agendas early\n")
    (env.vault / ".git" / "index.lock").write_bytes(b"")

    report = env.sync()

    assert report.exit_code == ExitCode.SAFETY_STOP
    shown = report.stopped + "\n" + "\n".join(p.line() for p in report.problems)
    assert ".git/index.lock" in shown, shown


# -- a repository in the middle of a git operation -----------------------------------------------------------
def diverge(env: Env) -> tuple[str, str]:
    """Two lines of history that clash on the person's own note ``Inbox/todo.md`` (outside the synced folders).

    main: C1 creates it, C2 edits it; branch ``phone`` (from C1) edits the same line. Returns (C1, phone tip).
    Synced notes are identical on both lines, so only the git state differs from a normal vault.
    """
    todo = env.vault / "Inbox" / "todo.md"
    todo.parent.mkdir()
    todo.write_text("- [ ] buy a plant\n", encoding="utf-8")
    env.git("add", "Inbox/todo.md")
    env.git("commit", "-q", "-m", "todo")
    first = env.head()
    env.git("checkout", "-q", "-b", "phone")
    todo.write_text("- [x] buy a plant (from the phone)\n", encoding="utf-8")
    env.git("commit", "-q", "-am", "todo from the phone")
    phone = env.head()
    env.git("checkout", "-q", "main")
    todo.write_text("- [ ] buy a plant and a pot\n", encoding="utf-8")
    env.git("commit", "-q", "-am", "todo on the laptop")
    return first, phone


def start_merge(env: Env) -> str:
    diverge(env)
    assert git_try(env.vault, "merge", "phone").returncode != 0
    return "merge --abort"


def start_rebase(env: Env) -> str:
    diverge(env)
    assert git_try(env.vault, "rebase", "phone").returncode != 0
    return "rebase --abort"


def start_interactive_edit(env: Env) -> str:
    diverge(env)
    editor = env.root / "edit-todo.py"  # the person marks the commit "edit" in the todo list
    editor.write_text(
        "import sys\nfrom pathlib import Path\np = Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('pick ', 'edit ', 1))\n",
        encoding="utf-8",
    )
    run = git_try(env.vault, "rebase", "-i", "HEAD~1", GIT_SEQUENCE_EDITOR=f'"{sys.executable}" "{editor}"')
    assert run.returncode == 0, run.stderr
    return "rebase --abort"


def start_cherry_pick(env: Env) -> str:
    diverge(env)
    assert git_try(env.vault, "cherry-pick", "phone").returncode != 0
    return "cherry-pick --abort"


def start_revert(env: Env) -> str:
    first, _ = diverge(env)
    assert git_try(env.vault, "revert", "--no-edit", first).returncode != 0
    return "revert --abort"


def start_am(env: Env) -> str:
    diverge(env)
    patch = env.root / "phone.patch"
    patch.write_text(env.git("format-patch", "-1", "phone", "--stdout"), encoding="utf-8")
    assert git_try(env.vault, "am", str(patch)).returncode != 0
    return "am --abort"


BUSY = [
    pytest.param(start_merge, "MERGE_HEAD", "a merge", id="merge-conflict"),
    pytest.param(start_rebase, "rebase-merge", "a rebase", id="rebase-conflict"),
    pytest.param(start_interactive_edit, "rebase-merge", "a rebase", id="interactive-rebase-edit"),
    pytest.param(start_cherry_pick, "CHERRY_PICK_HEAD", "a cherry-pick", id="cherry-pick-conflict"),
    pytest.param(start_revert, "REVERT_HEAD", "a revert", id="revert-conflict"),
    pytest.param(start_am, "rebase-apply", "a rebase or am", id="am-conflict"),
]


@pytest.mark.parametrize(("start", "marker", "words"), BUSY)
def test_repo_mid_operation_stops_with_exit_4_and_writes_nothing(
    env: Env, start: Callable[[Env], str], marker: str, words: str
) -> None:
    """Committing into a half-done merge or rebase would tangle the person's work with vaultsync's.

    The pass has real work waiting on both sides (an agent edit, a new fact note from the person) and must still
    write nothing on either side, make no commit and leave the index, conflict stages included, as it was.
    After the person aborts the operation, the next pass carries both edits.
    """
    finish = start(env)
    assert (env.vault / ".git" / marker).exists()
    agent_sets(env, MIGUEL, "miguel-ortiz-003", source="standup 2026-12-01")
    person_creates_fact(env, "Sarah Chen wants the readout deck as a PDF")
    before, git_before = frozen_env(env), git_state(env.vault)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), f"in the middle of {words}")
    assert "nothing was written" in report.stopped
    assert git_state(env.vault) == git_before
    assert (env.vault / ".git" / marker).exists()
    assert env.sync(confirm_deletes=True).exit_code == ExitCode.SAFETY_STOP, "--yes must not override a busy repo"

    env.git(*finish.split())
    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, "sarah-chen-007")["fact"] == "Sarah Chen wants the readout deck as a PDF"
    assert props_of(env.fact_note("2 Areas/people/miguel-ortiz", "miguel-ortiz-003"))["source"] == "standup 2026-12-01"
    assert [env.commit_info(sha)[0] for sha in report.commits] == ["Nora", "vaultsync agent"]


def test_repo_mid_bisect_stops_with_exit_4_and_writes_nothing(env: Env) -> None:
    """``git bisect`` checks out an old commit: the vault then holds old notes that nobody edited."""
    for n in range(3):
        add_sarah_fact(env, f"sarah-chen-09{n}", f"Sarah Chen learned thing {n}")
        assert env.sync().exit_code == ExitCode.CLEAN
    env.git("bisect", "start", "HEAD", "HEAD~3")
    before = frozen_env(env)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), "bisect")


def test_an_old_commit_checked_out_stops_with_exit_4_and_writes_nothing(env: Env) -> None:
    """A person looking at last week's vault (``git checkout <sha>``) must not have it synced back as edits."""
    for n in range(2):
        add_sarah_fact(env, f"sarah-chen-09{n}", f"Sarah Chen learned thing {n}")
        assert env.sync().exit_code == ExitCode.CLEAN
    env.git("checkout", "--quiet", "--detach", "HEAD~2")
    before = frozen_env(env)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), "detached HEAD")
    env.git("checkout", "--quiet", "main")
    assert env.sync().exit_code == ExitCode.CLEAN
    assert env.fact(SARAH, "sarah-chen-091")["fact"] == "Sarah Chen learned thing 1"


@pytest.mark.parametrize("dry_run", [False, True], ids=["sync", "status"])
def test_head_detached_at_the_first_commit_names_the_detached_head_not_the_empty_side(env: Env, dry_run: bool) -> None:
    """The first commit holds only init's templates: checked out, the vault side looks empty. The repository's
    state is what stops the pass, said first, and ``--yes`` (which would only meet the same stop) is not offered."""
    first = env.git("rev-list", "--max-parents=0", "HEAD").split()[0]
    env.git("checkout", "--quiet", "--detach", first)
    before = frozen_env(env)

    report = env.sync(dry_run=dry_run)

    assert_stopped_untouched(report, before, frozen_env(env), "detached HEAD")
    assert "is empty" not in report.stopped and "--yes" not in report.stopped, report.stopped
    assert env.sync(confirm_deletes=True).stopped == env.sync().stopped
    env.git("checkout", "--quiet", "main")
    assert env.sync().exit_code == ExitCode.CLEAN


@pytest.mark.parametrize("where", ["no repository", "inside another repository"])
def test_a_vault_that_is_not_its_own_repository_stops_and_writes_nothing(env: Env, where: str) -> None:
    """A vault whose .git went missing must not be committed into a repository further up the tree."""
    add_sarah_fact(env)
    shutil.move(env.vault / ".git", env.root / "vault-git-kept-aside")
    if where == "inside another repository":
        subprocess.run(["git", "init", "-q", str(env.root)], check=True)
    before = frozen_env(env)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), "is not a git repository")
    if where == "inside another repository":
        assert subprocess.run(["git", "-C", str(env.root), "rev-parse", "--verify", "-q", "HEAD"]).returncode != 0


# == 2. the mass-delete guard ===================================================================================
ENTITIES = 10
FACTS_PER_ENTITY = 3  # with the summary, 4 units per entity: 40 units on each side


PEOPLE = [f"areas/people/p{n:02d}" for n in range(ENTITIES)]


@pytest.fixture(scope="session")
def forty_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten people of three facts and a summary each, synced once: exactly 40 units on each side."""
    root = tmp_path_factory.mktemp("forty-template")
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(mp.setenv, root / "git-env", NORA)
        env = inputs.make_env(root)
        for n, rel in enumerate(PEOPLE):
            facts = [inputs.fact(f"p{n:02d}-{i}", f"Keeps notebook {i}") for i in range(FACTS_PER_ENTITY)]
            env.entity(rel, facts, f"# P{n:02d}\n\nA person on the list.\n")
        report = env.sync()
        assert report.exit_code == ExitCode.CLEAN, report.to_json()
    return env.root


@pytest.fixture
def forty(forty_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> inputs.Env:
    """A private copy of the forty-unit setup (same base and git history), with its own config."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env", NORA)
    root = tmp_path / "env"
    shutil.copytree(forty_template, root, symlinks=True)
    old = configmod.load(forty_template / "config.toml")
    cfg = replace(old, workspace=root / "workspace", life=root / "life", vault=root / "vault")
    (root / "config.toml").write_text(configmod.dumps(cfg), encoding="utf-8")
    cfg = configmod.load(root / "config.toml")
    return inputs.Env(root, cfg.workspace, cfg.life, cfg.vault, cfg)


def set_safety(env: inputs.Env, share: float, count: int) -> None:
    """Write the thresholds into the config file and load it back, as a person editing [safety] would. The
    guard's other bounds are set out of reach (an entity losing its facts, a summary cut), so that these tests
    see the many-deletions bound alone: tests/promises/test_shrink_guard.py covers the others."""
    path = env.root / "config.toml"
    safety = Safety(share, count, min_facts=1000, min_lines=1000)
    path.write_text(configmod.dumps(replace(env.cfg, safety=safety)), encoding="utf-8")
    env.cfg = configmod.load(path)
    assert env.cfg.safety == safety


def person_deletes_notes(env: inputs.Env, n: int) -> list[str]:
    """The person deletes ``n`` fact notes in Obsidian; returns their fact ids (memory would lose n units)."""
    notes = sorted((env.vault / "2 Areas" / "people").glob("*/facts/*.md"))[:n]
    for note in notes:
        note.unlink()
    return [note.stem for note in notes]


def agent_deletes(env: inputs.Env, n: int) -> list[str]:
    """The agent deletes whole entity folders (4 units each) and then single facts: n units leave the vault.

    Returns the vault notes that would go.
    """
    gone: list[str] = []
    rels = PEOPLE
    whole, single = divmod(n, FACTS_PER_ENTITY + 1)
    for rel in rels[:whole]:
        shutil.rmtree(env.life / rel)
        slug = rel.rsplit("/", 1)[1]
        gone += [f"2 Areas/people/{slug}/{slug}.md"]
        gone += [f"2 Areas/people/{slug}/facts/{slug}-{i}.md" for i in range(FACTS_PER_ENTITY)]
    if single:
        rel = rels[whole]
        slug = rel.rsplit("/", 1)[1]
        items = env.items(rel)
        env.write(env.life / rel / "items.json", inputs.dumps(items[single:]))
        gone += [f"2 Areas/people/{slug}/facts/{slug}-{i}.md" for i in range(single)]
    return gone


THRESHOLDS = [
    # (share, count, n, holds): with count 0 only the share decides (10 of 40 is exactly 25%) ...
    pytest.param(0.25, 0, 10, False, id="share-at-limit"),
    pytest.param(0.25, 0, 11, True, id="share-over-limit"),
    # ... and with share 0 only the count decides.
    pytest.param(0.0, 6, 6, False, id="count-at-limit"),
    pytest.param(0.0, 6, 7, True, id="count-over-limit"),
]


@pytest.mark.parametrize(("share", "count", "n", "holds"), THRESHOLDS)
@pytest.mark.parametrize("who", ["person-deletes-notes", "agent-deletes-entities"])
def test_mass_delete_guard_thresholds(
    forty: inputs.Env, who: str, share: float, count: int, n: int, holds: bool
) -> None:
    """The guard holds only above both ``max_delete_share`` and ``max_delete_count``, each checked strictly.

    A person deleting notes threatens the memory side; an agent deleting entity folders threatens the vault side.
    Once the mass-delete stop, now the shrink guard's many-deletions bound: the deletions are held (exit 7), the
    other side keeps every copy, each held change names the writer and the count, and the trash stays empty.
    """
    env = forty
    set_safety(env, share, count)
    if who == "person-deletes-notes":
        doomed, side, writer = person_deletes_notes(env, n), "memory", "person"
    else:
        doomed, side, writer = agent_deletes(env, n), "vault", "agent"
    before, git_before = frozen(env.workspace, env.life, env.vault), git_state(env.vault)

    report = env.sync()

    if holds:
        assert report.exit_code == ExitCode.HELD, report.to_json()
        assert not report.stopped and report.files_written == 0 and report.commits == []
        after = frozen(env.workspace, env.life, env.vault)
        trees = [k for k in set(before) | set(after) if "/.vaultsync/" not in k]  # the pass keeps its state there
        assert [k for k in trees if before.get(k) != after.get(k)] == [], "a held deletion was carried"
        assert report.held and {h.writer for h in report.held} == {writer}
        assert all(f"deleted {n} of 40 units at once" in h.rule for h in report.held), report.to_json()
        assert report.held[0].path == "2 Areas/people/p00"
        assert git_state(env.vault) == git_before
        assert not (env.cfg.state_dir / "trash").exists()
        return
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    if side == "memory":
        left = {f["id"] for rel in PEOPLE for f in env.items(rel)}
        assert left.isdisjoint(doomed) and len(left) == ENTITIES * FACTS_PER_ENTITY - n
        assert (env.cfg.state_dir / "trash").is_dir(), "memory files were changed without a copy in the trash"
    else:
        assert not [g for g in doomed if (env.vault / g).exists()]
        assert env.git("status", "--porcelain") == ""


def test_accept_carries_a_mass_delete_in_process_and_on_the_command_line(forty: inputs.Env) -> None:
    """``PassOptions(accept={"all"})`` and ``vaultsync accept all`` are the person's "yes, I meant it".

    Once ``--yes`` to a stop, now the answer to a hold. The CLI is run as a real process on the same vault:
    ``sync`` holds (exit 7, "held:" on stdout), ``status --json`` names each held change, and ``accept all``
    carries the deletions out, copies in the trash.
    """
    env = forty
    set_safety(env, 0.25, 5)
    gone = person_deletes_notes(env, 12)
    items_before = {rel: (env.life / rel / "items.json").read_bytes() for rel in PEOPLE}
    assert env.sync().exit_code == ExitCode.HELD

    cli = Path(sys.executable).with_name("vaultsync")
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "vaultsync.cli"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        config = ["--config", str(env.root / "config.toml")]
        return subprocess.run([*command, *args[:1], *config, *args[1:]], capture_output=True, text=True, check=False)

    plain = run("sync")
    assert plain.returncode == ExitCode.HELD, plain.stdout + plain.stderr
    assert "held: 2 Areas/people/p00: person deleted 12 of 40 units at once" in plain.stdout
    preview = run("status", "--json")
    assert preview.returncode == ExitCode.HELD, preview.stdout + preview.stderr
    planned = json.loads(preview.stdout)
    assert planned["stopped"] is None and planned["held"][0]["path"] == "2 Areas/people/p00"
    assert env.items("areas/people/p00") == json.loads(items_before["areas/people/p00"])

    confirmed = run("accept", "all", "--json")
    assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
    left = {f["id"] for rel in PEOPLE for f in env.items(rel)}
    assert left.isdisjoint(gone) and len(left) == ENTITIES * FACTS_PER_ENTITY - 12
    trash = next((env.cfg.state_dir / "trash").iterdir())
    for rel in ("areas/people/p00", "areas/people/p03"):
        assert (trash / "life" / rel / "items.json").read_bytes() == items_before[rel]

    # In-process: the agent now deletes four whole people folders (16 of 28 vault units); accepting allows it.
    set_safety(env, 0.25, 5)
    for rel in PEOPLE[4:8]:
        shutil.rmtree(env.life / rel)
    assert env.sync().exit_code == ExitCode.HELD
    report = env.sync(accept=frozenset({"all"}))
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert not (env.vault / "2 Areas/people/p05").exists()
    assert env.git("status", "--porcelain") == ""


@pytest.mark.parametrize("root", ["workspace", "life"])
def test_missing_memory_root_stops_even_with_yes(env: Env, root: str) -> None:
    """A memory root that is gone (unmounted, renamed) cannot be confirmed away: fix the config, then sync."""
    path = getattr(env, root)
    moved = path.with_name(path.name + "-unmounted")
    path.rename(moved)
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants agendas early\n")
    before, git_before = frozen_env(env), git_state(env.vault)

    for confirm in (False, True):
        report = env.sync(confirm_deletes=confirm)
        assert_stopped_untouched(report, before, frozen_env(env), f"missing root folder(s): {root}")
        assert str(env.config_path) in report.stopped
    assert git_state(env.vault) == git_before
    assert not path.exists(), "the pass created the missing root"

    moved.rename(path)
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == "Sarah Chen wants agendas early"


@pytest.mark.parametrize("dry_run", [False, True], ids=["sync", "status"])
def test_missing_vault_root_is_reported_as_missing_and_not_created(env: Env, dry_run: bool) -> None:
    """docs/two-way.md#safety: a missing vault folder is a missing root (exit 4), and nothing is created for it."""
    env.vault.rename(env.vault.with_name("vault-unmounted"))

    report = env.sync(dry_run=dry_run)

    assert report.exit_code == ExitCode.SAFETY_STOP, report.to_json()
    assert "missing root folder(s): vault" in report.stopped
    assert not env.vault.exists(), "the pass created the missing vault folder"


def test_emptied_memory_side_stops_before_any_write(env: Env) -> None:
    """Both memory roots exist but hold nothing (a fresh mount, a wrong path) while the base is full."""
    saved = env.root / "saved-memory"
    for root in (env.workspace, env.life):
        shutil.copytree(root, saved / root.name)
        for child in list(root.iterdir()):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    before, git_before = frozen_env(env), git_state(env.vault)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), "the memory side is empty while the last sync had")
    assert git_state(env.vault) == git_before
    assert len(list((env.vault / SARAH_DIR / "facts").glob("*.md"))) == 6

    for root in (env.workspace, env.life):
        shutil.rmtree(root)
        shutil.copytree(saved / root.name, root)
    assert env.sync().exit_code == ExitCode.CLEAN


def test_emptied_vault_stops_before_any_write(env: Env) -> None:
    """Every note gone from the vault (.git and the base still there): a checkout of an empty branch, a bad mount."""
    for child in list(env.vault.iterdir()):
        if child.name not in (".git", ".vaultsync"):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    before, git_before = frozen_env(env), git_state(env.vault)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), "the vault side is empty while the last sync had")
    assert git_state(env.vault) == git_before
    assert env.items_path(SARAH).exists() and (env.workspace / "MEMORY.md").exists()

    env.git("checkout", "--", ".")
    assert env.sync().exit_code == ExitCode.CLEAN


MISSING_FOLDERS = [
    pytest.param("vault", "4 Archives", "vault folder '4 Archives'", id="vault-archives"),
    pytest.param("workspace", "memory", "memory folder {path}", id="workspace-memory"),
    pytest.param("life", "projects", "memory folder {path}", id="life-projects"),
]


@pytest.mark.parametrize(("where", "folder", "words"), MISSING_FOLDERS)
def test_missing_synced_folder_stops_and_yes_confirms_with_a_trash_copy(
    env: Env, where: str, folder: str, words: str
) -> None:
    """A top folder that held synced notes is gone: stop and name it; --yes carries the deletion through.

    Unlike a mass delete, a few files in a missing folder are enough to stop (Daily holds 5 of 47 units).
    """
    path = getattr(env, where) / folder
    shutil.rmtree(path)
    before, git_before = frozen_env(env), git_state(env.vault)

    report = env.sync()

    assert_stopped_untouched(report, before, frozen_env(env), words.format(path=path))
    assert "held synced notes and is missing" in report.stopped
    assert git_state(env.vault) == git_before

    report = env.sync(confirm_deletes=True)
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.git("status", "--porcelain") == ""


def test_the_daily_folder_deleted_in_the_vault_is_held_and_yes_carries_it_with_a_trash_copy(env: Env) -> None:
    """The daily folder is the one top folder whose absence does not stop a pass: its notes gone are held by the
    shrink guard (docs/safety.md), the memory's copies untouched, and --yes carries the deletion through."""
    path = env.vault / "Daily"
    saved = {p.name: p.read_bytes() for p in (env.workspace / "memory").glob("2026-*.md")}
    shutil.rmtree(path)
    memory_before = {p.name: p.read_bytes() for p in (env.workspace / "memory").glob("*.md")}

    report = env.sync()

    assert report.exit_code == ExitCode.HELD and not report.stopped, report.to_json()
    assert sorted(h.path for h in report.held) == sorted(f"Daily/{name}" for name in saved)
    assert {p.name: p.read_bytes() for p in (env.workspace / "memory").glob("*.md")} == memory_before

    report = env.sync(confirm_deletes=True)
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    trash = env.cfg.state_dir / "trash" / STAMP / "workspace" / "memory"
    assert {p.name: p.read_bytes() for p in trash.glob("*.md")} == saved
    assert not list((env.workspace / "memory").glob("2026-*.md"))
    assert env.git("status", "--porcelain") == ""


# == 3. malformed input is reported, never overwritten ===========================================================
def test_malformed_fact_note_while_the_agent_edits_that_fact_then_repaired_merges_both(env: Env) -> None:
    """The person's typo in a property (an unclosed ``[``) must not be "repaired" with the agent's version.

    Same round: the agent changes the fact's ``source``. The note stays byte-identical and is reported; the agent's
    edit stays in items.json. When the person fixes the typo, the next pass merges both fields.
    """
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    replace_text(note, "category: preference\n", "category: [habit\n")
    broken = note.read_bytes()
    agent_sets(env, SARAH, "sarah-chen-004", source="call on 2026-10-21")
    agent_items = env.items_path(SARAH).read_bytes()

    report = env.sync()

    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()
    about = [p for p in report.problems if p.severity is Severity.ERROR]
    assert [p.path for p in about] == [f"{SARAH_DIR}/facts/sarah-chen-004.md"], [p.line() for p in report.problems]
    assert "left untouched" in about[0].message
    assert note.read_bytes() == broken
    assert env.items_path(SARAH).read_bytes() == agent_items
    assert report.conflicts == [] and not list(note.parent.glob("*conflict*"))

    replace_text(note, "category: [habit\n", "category: habit\n")
    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    fact = env.fact(SARAH, "sarah-chen-004")
    assert (fact["category"], fact["source"]) == ("habit", "call on 2026-10-21")
    assert_diff_only_touches(agent_items, env.items_path(SARAH).read_bytes(), ["habit"])
    props = props_of(note)
    assert (props["category"], props["source"]) == ("habit", "call on 2026-10-21")
    assert env.git("status", "--porcelain") == ""


def test_malformed_entity_note_while_the_agent_edits_the_summary_then_repaired_merges_both(env: Env) -> None:
    """A broken entity note keeps the person's body edit; summary.md keeps the agent's; the repair merges lines."""
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    replace_text(note, "kind: people\n", "kind: [people\n")
    replace_text(note, "She is organised and direct:", "She is organised, kind and direct:")
    broken = note.read_bytes()
    summary = env.life / SARAH / "summary.md"
    with summary.open("a", encoding="utf-8") as handle:
        handle.write("- Wants pilot readouts as PDF\n")
    agent_summary = summary.read_bytes()

    report = env.sync()

    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()
    about = [p for p in report.problems if p.severity is Severity.ERROR]
    assert [p.path for p in about] == [f"{SARAH_DIR}/sarah-chen.md"], [p.line() for p in report.problems]
    assert note.read_bytes() == broken
    assert summary.read_bytes() == agent_summary

    replace_text(note, "kind: [people\n", "kind: people\n")
    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    merged = summary.read_text(encoding="utf-8")
    assert "She is organised, kind and direct:" in merged and merged.endswith("- Wants pilot readouts as PDF\n")
    assert merged == agent_summary.decode().replace(
        "She is organised and direct:", "She is organised, kind and direct:"
    )
    assert body_of(note).startswith(merged)
    assert env.git("status", "--porcelain") == ""


def test_broken_items_json_while_the_person_edits_a_fact_then_repaired_merges_both(env: Env) -> None:
    """An agent's half-written items.json is left as it is, and the person's note edit waits in the vault.

    When the agent rewrites the file (with an edit of its own to another fact), the next pass merges both.
    """
    items = env.items_path(SARAH)
    good = items.read_bytes()
    items.write_bytes(good[:-30])
    broken = items.read_bytes()
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    set_body(note, "Sarah Chen prefers a written agenda two working days before any meeting\n")
    edited = note.read_bytes()
    entity_note = (env.vault / SARAH_DIR / "sarah-chen.md").read_bytes()

    report = env.sync()

    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()
    about = [p for p in report.problems if p.severity is Severity.ERROR]
    assert [p.path for p in about] == [str(items)], [p.line() for p in report.problems]
    assert items.read_bytes() == broken
    assert note.read_bytes() == edited, "the person's edit was reverted while items.json was unreadable"
    assert (env.vault / SARAH_DIR / "sarah-chen.md").read_bytes() == entity_note

    doc = json.loads(good)
    next(f for f in doc if f["id"] == "sarah-chen-006")["source"] = "email from Sarah, 2026-11-24"
    items.write_bytes(dump_items(doc))
    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"].endswith("two working days before any meeting")
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-006"))["source"] == "email from Sarah, 2026-11-24"
    assert env.git("status", "--porcelain") == ""


def test_broken_items_json_while_the_person_creates_a_fact_keeps_the_new_fact(env: Env) -> None:
    """Invariant 2: a fact the person typed while the agent's file was broken must survive the repair."""
    items = env.items_path(SARAH)
    good = items.read_bytes()
    items.write_bytes(good[:-30])
    person_creates_fact(env, "Sarah Chen is learning Portuguese")

    report = env.sync()
    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()

    items.write_bytes(good)  # the agent repairs its file
    report = env.sync()

    texts = [f["fact"] for f in env.facts(SARAH)]
    assert "Sarah Chen is learning Portuguese" in texts, "the person's new fact was lost"
    notes = [body_of(p) for p in (env.vault / SARAH_DIR / "facts").glob("*.md")]
    assert "Sarah Chen is learning Portuguese\n" in notes


def test_memory_daily_note_that_is_not_utf8_keeps_its_vault_note(env: Env) -> None:
    """Invariant 4 for mirrored files: an agent writing one Latin-1 byte must not cost the vault its daily note."""
    daily = env.workspace / "memory" / "2026-11-30.md"
    note = env.vault / "Daily" / "2026-11-30.md"
    note_before = note.read_bytes()
    daily.write_bytes(daily.read_bytes() + "- caf\u00e9 with Li Wei\n".encode("latin-1"))
    broken = daily.read_bytes()

    report = env.sync()

    assert report.exit_code == ExitCode.SKIPPED_INPUT, report.to_json()
    assert [p.path for p in report.problems if p.severity is Severity.ERROR] == [str(daily)]
    assert daily.read_bytes() == broken
    assert note.exists() and note.read_bytes() == note_before, "the vault's copy was deleted"
    assert report.actions == []

    daily.write_bytes(broken.replace("caf\u00e9".encode("latin-1"), "caf\u00e9".encode()))
    assert env.sync().exit_code == ExitCode.CLEAN
    assert note.read_bytes() == daily.read_bytes()


def test_temp_files_a_killed_pass_left_are_set_aside_by_the_next_writing_pass(env: Env) -> None:
    """A pass killed between staging and renaming leaves hidden ``.vstmp`` files; nothing may sync or commit
    them, and they go to the trash rather than away (one may hold a save swapped out by a killed swap)."""
    note_dir = env.vault / SARAH_DIR / "facts"
    leftovers = [
        note_dir / ".sarah-chen-001.md.4242.vstmp",
        env.vault / "Daily" / ".2026-12-01.md.4242.vstmp",
        env.life / SARAH / ".items.json.4242.vstmp",
        env.workspace / "memory" / ".2026-12-01.md.4242.vstmp",
    ]
    for path in leftovers:
        path.write_text("half of a note", encoding="utf-8")
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-002"), "Sarah Chen prefers tea to coffee\n")

    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert [p for p in leftovers if p.exists()] == []
    assert "half of a note" not in env.git("log", "-p", "-2")
    kept = sorted(p for p in (env.cfg.state_dir / "trash").rglob("*") if p.is_file() and "leftovers" in p.parts)
    assert [p.read_text(encoding="utf-8") for p in kept] == ["half of a note"] * 4
    assert {p.name for p in kept} == {"sarah-chen-001.md.4242", "2026-12-01.md.4242", "items.json.4242"}
