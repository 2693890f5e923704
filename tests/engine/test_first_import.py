"""A first import into an empty vault runs a batch of entities at a time and ends exactly as an import of the
whole tree at once: the same notes, links and mentions across batches, the same base, one agent commit.

Each test imports the same memory tree twice, into two empty vaults: once with ``import_batch=0`` (everything at
once, the way every later full pass runs) and once in small batches, then compares the two byte for byte.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO
from helpers.crash import run_sync, stale_git_locks
from helpers.twoway import EXAMPLE, Env, base_rows, isolate_git

from vaultsync import config as configmod
from vaultsync.app.init import init_vault
from vaultsync.engine import first_import
from vaultsync.git import repo as gitrepo
from vaultsync.model import Report

GENERATE = REPO / "benchmarks" / "generate.py"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic tree in every shape the generator knows (wrappers, Chinese text, mentions, dailies)."""
    out = tmp_path_factory.mktemp("generated") / "tree"
    subprocess.run([sys.executable, str(GENERATE), str(out), "--facts", "600"], check=True, capture_output=True)
    return out


def fresh(tree: Path, root: Path) -> Env:
    shutil.copytree(tree / "workspace", root / "mem" / "workspace")
    shutil.copytree(tree / "life", root / "mem" / "life")
    # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
    init_vault(root / "mem" / "workspace", root / "mem" / "life", root / "vault", root / "config.toml", fact_text=False)
    return Env(root, configmod.load(root / "config.toml"))


def shown(report: Report, env: Env) -> dict[str, Any]:
    data = report.to_json()
    data.pop("commits")
    data["actions"] = sorted(data["actions"])
    data["changes"] = sorted(data["changes"], key=json.dumps)
    data["problems"] = sorted(data["problems"], key=json.dumps)
    return json.loads(json.dumps(data).replace(str(env.root), "ROOT"))


def import_both(tree: Path, tmp_path: Path, batch: int, workers: int = 0) -> tuple[Env, Report]:
    whole = fresh(tree, tmp_path / "whole")
    batched = fresh(tree, tmp_path / "batched")
    seen: list[tuple[int, int]] = []
    expected = whole.sync(import_batch=0)
    assert workers < 2 or threading.active_count() == 1, "a thread is left running: the import would not fork"
    report = batched.sync(
        import_batch=batch, import_workers=workers, progress=lambda done, total: seen.append((done, total))
    )
    assert report.exit_code == expected.exit_code
    assert batched.snapshot() == whole.snapshot(), "batches wrote other notes than a whole import"
    assert base_rows(batched) == base_rows(whole)
    assert shown(report, batched) == shown(expected, whole)
    log = ["log", "--format=%an%x00%s%x00%b", "--name-only"]
    assert batched.git(*log) == whole.git(*log), "the commits differ"
    assert len(batched.commits_since(batched.git("rev-list", "--max-parents=0", "HEAD").strip())) == 1
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress went backwards"
    assert seen and seen[-1][0] == seen[-1][1], "progress did not reach its total"
    return batched, report


def test_vault_example_in_batches_of_one_entity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env, report = import_both(EXAMPLE, tmp_path, batch=1)
    assert report.files_written > 40
    mentions = (env.vault / "2 Areas/people/sarah-chen/facts/sarah-chen-001.md").read_text(encoding="utf-8")
    assert "[[acme-corp|Acme Corp]]" in mentions, "a mention of an entity from another batch is missing"
    assert env.sync().quick, "the import did not settle"


@pytest.mark.parametrize(
    ("batch", "workers", "keep", "entities"),
    [
        (3, 1, first_import.KEEP_UNITS, first_import.KEEP_ENTITIES),
        (7, 1, first_import.KEEP_UNITS, first_import.KEEP_ENTITIES),
        (7, 1, 300, first_import.KEEP_ENTITIES),
        (3, 1, 0, first_import.KEEP_ENTITIES),
        (7, 1, first_import.KEEP_UNITS, 5),
        (3, 2, first_import.KEEP_UNITS, first_import.KEEP_ENTITIES),
        (5, 3, first_import.KEEP_UNITS, first_import.KEEP_ENTITIES),
    ],
    ids=[
        "3-all-kept",
        "7-all-kept",
        "7-some-read-twice",
        "3-all-read-twice",
        "7-too-many-entities-to-keep",
        "3-two-workers",
        "5-three-workers",
    ],
)
def test_a_generated_tree_in_batches(
    generated: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    batch: int,
    workers: int,
    keep: int,
    entities: int,
) -> None:
    """In this process, the first walk's reads are kept for the second up to a bound, and past it batches are
    read again; in forked workers, each reads its batches again."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    monkeypatch.setattr(first_import, "KEEP_UNITS", keep)
    monkeypatch.setattr(first_import, "KEEP_ENTITIES", entities)
    env, report = import_both(generated, tmp_path, batch=batch, workers=workers)
    assert report.files_written > 600
    assert env.sync().quick


def test_a_vault_with_notes_already_is_not_a_first_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes in the vault (a base lost, a vault restored from elsewhere) are merged as in any full pass."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env = fresh(EXAMPLE, tmp_path / "setup")
    note = env.vault / "2 Areas/people/sarah-chen/sarah-chen.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Sarah Chen\n\nWritten in the vault before the first sync.\n", encoding="utf-8")
    report = env.sync(import_batch=1)
    assert ("vault", "people/sarah-chen", "new entity") in [(c.side, c.scope, c.what) for c in report.changes]
    for path in (note, env.life / "areas/people/sarah-chen/summary.md"):
        text = path.read_text(encoding="utf-8")
        assert "Written in the vault before the first sync." in text, f"the person's text is missing from {path}"
        assert "She is organised and direct" in text, f"the agent's text is missing from {path}"


@pytest.mark.usefixtures("short_lock_wait")
@pytest.mark.parametrize("tree", ["example", "generated"])
def test_a_killed_import_is_finished_by_the_next_pass(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tree: str
) -> None:
    """Notes written, commit never made: the next pass sees a vault with notes, commits them as the agent's
    (they are the agent's, whatever the items.json they came from holds, ``supersededBy: null`` included)
    and settles."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    source = EXAMPLE if tree == "example" else generated
    whole = fresh(source, tmp_path / "whole")
    whole.sync(import_batch=0)
    env = fresh(source, tmp_path / "setup")
    env.git("config", "core.hooksPath", "/nonexistent")
    lock = env.vault / ".git" / "index.lock"
    lock.write_text("held")  # git refuses the commit: the import stops after writing every note
    first = env.sync(import_batch=2)
    assert not first.commits and (env.cfg.state_dir / "uncommitted.json").exists()
    lock.unlink()
    second = env.sync()
    assert second.commits and not second.conflicts and second.exit_code == 0
    assert not [c for c in second.changes if c.side == "vault"], "the agent's notes were reported as the person's"
    authors = env.git("log", "--format=%an", f"-{len(second.commits)}").splitlines()
    assert authors == [env.cfg.git.agent_name] * len(second.commits), f"the import was committed as {authors}"
    assert env.snapshot() == whole.snapshot()
    assert base_rows(env) == base_rows(whole)
    assert env.git("status", "--porcelain") == ""


KILLS = int(os.environ.get("VAULTSYNC_IMPORT_KILLS", "2"))


@pytest.mark.parametrize("seed", range(KILLS))
def test_a_first_import_killed_at_random_is_finished_by_the_next_pass(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """SIGKILL to the whole process group (the pass, its git children and the child writing notes) somewhere in
    a batched import, then one ordinary pass: every note and every base row as a whole import leaves them, and
    nothing uncommitted. The kill falls within the time an unkilled import takes on this machine.
    ``VAULTSYNC_IMPORT_KILLS=N`` runs more.
    """
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    whole = fresh(generated, tmp_path / "whole")
    whole.sync(import_batch=0)
    timed = run_sync(fresh(generated, tmp_path / "timed").config_path, dict(os.environ), batch=4)
    assert timed.returncode == 0 and timed.report()["commits"], timed.stderr
    env = fresh(generated, tmp_path / "setup")
    delay = random.Random(seed).uniform(0.05, 1.0) * timed.seconds
    outcome = run_sync(env.config_path, dict(os.environ), kill_after=delay, batch=4)  # the placer writes
    for lock in stale_git_locks(env.vault):  # a git child killed mid-commit; the person removes it (safety.md)
        lock.unlink()
    recovery = env.sync()
    assert not recovery.stopped and recovery.exit_code == 0, (outcome, recovery.problems)
    assert env.snapshot() == whole.snapshot(), f"killed after {delay:.2f} s: the recovery left other files"
    rows, expected = base_rows(env), base_rows(whole)
    assert (rows["units"], rows["ids"]) == (expected["units"], expected["ids"])
    assert env.git("status", "--porcelain") == ""
    assert not (env.cfg.state_dir / "uncommitted.json").exists()
    assert env.sync().quick


# Run as ``python -c``: a worker of the import (any process but the first) kills itself at its fifth new note.
KILL_A_WORKER = r"""
import os, signal, sys
parent = os.getpid()
placed = 0
def hook(event, args):
    global placed
    if event == "vaultsync.place" and os.getpid() != parent:
        placed += 1
        if placed == 5:
            os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(hook)
from vaultsync.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="looks for processes left in /proc")
def test_a_worker_killed_mid_import_is_reported_and_the_next_pass_finishes(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OOM killer takes a worker: the pass says so and commits nothing; the next pass ends as a whole
    import would, and no worker is left behind."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    whole = fresh(generated, tmp_path / "whole")
    whole.sync(import_batch=0)
    env = fresh(generated, tmp_path / "setup")
    head = env.git("rev-parse", "HEAD")
    argv = ["sync", "--json", "--config", str(env.config_path), "--batch", "4"]
    run = subprocess.run([sys.executable, "-c", KILL_A_WORKER, *argv], capture_output=True, text=True, timeout=300)
    report = json.loads(run.stdout)
    assert run.returncode == 5, run.stderr
    assert not report["commits"]
    assert [p["message"] for p in report["problems"] if p["severity"] == "error"] == [
        "a worker of the import stopped (killed by signal 9); the next pass finishes the import"
    ]
    assert env.git("rev-parse", "HEAD") == head
    assert not _processes_naming(str(env.config_path)), "a worker outlived the pass"
    recovery = env.sync()
    assert recovery.commits and recovery.exit_code == 0, recovery.problems
    assert env.snapshot() == whole.snapshot()
    assert base_rows(env)["units"] == base_rows(whole)["units"]
    assert env.git("status", "--porcelain") == ""


def _processes_naming(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (forked workers keep their parent's)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return found


def test_notes_holding_a_secret_stay_out_of_the_index_and_history_of_a_large_import(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import large enough to stage notes while it writes them hands git only those that hold no secret:
    no object in the repository, packed or loose, ever holds the secret, and the commit says which it left out."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    token = "ghp_" + "Z9y8X7w6" * 5
    env = fresh(generated, tmp_path / "setup")
    daily = sorted((env.workspace / "memory").glob("*.md"))[0]
    daily.write_text(daily.read_text(encoding="utf-8") + f"\nDeploy token: {token}\n", encoding="utf-8")
    entity = sorted((env.life / "areas/people").iterdir())[0]
    doc = json.loads((entity / "items.json").read_text(encoding="utf-8"))
    facts = doc if isinstance(doc, list) else next(v for v in doc.values() if isinstance(v, list))
    facts[0]["fact"] = f"Keeps the CI token {token} in a sticky note"
    (entity / "items.json").write_text(json.dumps(doc), encoding="utf-8")

    report = env.sync(import_batch=7)

    assert report.files_written > gitrepo.PACK_PATHS_MIN, "too small an import to stage notes as it goes"
    holding = [p for p in report.problems if "holds a secret" in p.message]
    untracked = [rel for rel in env.git("ls-files", "--others", "-z").split("\0") if rel.endswith(".md")]
    assert sorted(p.path for p in holding) == sorted(rel for rel in untracked if token in read(env, rel))
    assert len(holding) == 2, [p.line() for p in report.problems]
    assert token not in env.git("log", "-p", "--all")
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=env.vault, capture_output=True, check=True
    ).stdout
    assert token.encode() not in objects, "git holds an object with the secret"
    assert len(env.git("ls-files").splitlines()) > gitrepo.PACK_PATHS_MIN, "the clean notes were not committed"
    assert not any(token in read(env, rel) for rel in env.git("ls-files", "-z").split("\0") if rel)


def read(env: Env, rel: str) -> str:
    return (env.vault / rel).read_text(encoding="utf-8")


def test_the_base_a_batched_import_leaves_has_each_table_and_index_in_a_few_stretches(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches write rows and their key index side by side; a scoped pass reads every key, so the import leaves
    each of them in runs of consecutive pages (its root page, then the rest) rather than spread over the file."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env = fresh(generated, tmp_path / "setup")
    env.sync(import_batch=3)
    db = sqlite3.connect(env.cfg.state_dir / "base.sqlite")
    try:
        pages = db.execute("SELECT name, pageno FROM dbstat ORDER BY name, pageno").fetchall()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to show where pages lie")
    finally:
        db.close()
    laid: dict[str, list[int]] = {}
    for name, page in pages:
        laid.setdefault(name, []).append(page)
    assert len(laid["units"]) > 20 and len(laid["sqlite_autoindex_units_1"]) > 3, laid
    for name, numbers in laid.items():
        runs = 1 + sum(1 for a, b in itertools.pairwise(numbers) if b != a + 1)
        assert runs <= 2, f"{name} lies in {runs} separate runs of pages: {numbers}"
