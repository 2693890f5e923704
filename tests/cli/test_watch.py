"""``vaultsync watch`` as people run it: the real command as a subprocess on a synced copy of the example, real
files, real git. Nothing is timed: each test polls with a generous deadline and asserts on content."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.e2e import commit_count, head, tree_stat
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync.state import runs

DEADLINE = 90.0


class Watcher:
    """A running ``vaultsync watch``; its output lines are collected as they come."""

    def __init__(self, env: Env, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vaultsync.cli", "watch", "--config", str(env.config_path), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    @staticmethod
    def _read(stream: object, into: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line.rstrip("\n"))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=DEADLINE)


def until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def watching(env: Env) -> Iterator[Watcher]:
    watcher = Watcher(env)
    until(lambda: len(watcher.out) >= 1, "the first pass")
    yield watcher
    if watcher.proc.poll() is None:
        watcher.stop()


def test_a_fact_note_edit_reaches_items_json(env: Env, watching: Watcher) -> None:
    note = env.vault / SARAH_DIR / "facts/sarah-chen-001.md"
    note.write_text(note.read_text(encoding="utf-8").replace("hardware engineering manager", "VP of hardware"))
    until(lambda: "VP of hardware" in env.items_path(SARAH).read_text(encoding="utf-8"), "the edit in items.json")
    assert env.fact(SARAH, "sarah-chen-001")["fact"] == "Sarah Chen is a VP of hardware at Acme Corp"
    assert watching.stop() == 0


def test_an_agent_daily_append_reaches_the_vault_note(env: Env, watching: Watcher) -> None:
    daily = env.workspace / "memory/2026-12-01.md"
    with daily.open("a", encoding="utf-8") as f:
        f.write("- Booked the flight to Lisbon\n")
    note = env.vault / "Daily/2026-12-01.md"
    until(lambda: "- Booked the flight to Lisbon" in note.read_text(encoding="utf-8"), "the line in the vault note")
    assert watching.stop() == 0


def test_a_burst_of_200_agent_writes_ends_in_a_handful_of_passes(env: Env, watching: Watcher) -> None:
    daily = env.workspace / "memory/2026-12-01.md"
    note = env.vault / "Daily/2026-12-01.md"
    before = len(watching.out)
    for n in range(200):
        with daily.open("a", encoding="utf-8") as f:
            f.write(f"- note {n}\n")
        time.sleep(0.005)
    until(lambda: "- note 199\n" in note.read_text(encoding="utf-8"), "the last line in the vault note")
    until(lambda: len(watching.out) > before, "a line for the pass")
    assert watching.stop() == 0
    passes = watching.out[before:]
    assert 1 <= len(passes) <= 6, passes
    assert all(f"- note {n}\n" in note.read_text(encoding="utf-8") for n in range(200))


def test_nothing_is_written_or_committed_when_nothing_changed(env: Env, watching: Watcher) -> None:
    skip = (".git", ".vaultsync")
    vault_before, mem_before, sha = tree_stat(env.vault, skip), tree_stat(env.root / "mem", ()), head(env.vault)
    lines = len(watching.out)
    assert "wrote 0 file(s), nothing to commit" in watching.out[-1]
    # What cannot matter: Obsidian's window layout and an editor's swap file; then a marker that can.
    (env.vault / ".obsidian/workspace.json").write_text("{}")
    (env.vault / SARAH_DIR / ".sarah-chen.md.swp").write_bytes(b"swap")
    (env.vault / SARAH_DIR / ".sarah-chen.md.swp").unlink()
    (env.vault / ".obsidian/workspace.json").unlink()
    time.sleep(3)  # long past the quiet period: a pass these started would have printed by now
    assert len(watching.out) == lines, watching.out[lines:]
    assert watching.stop() == 0
    assert tree_stat(env.vault, skip) == vault_before
    assert tree_stat(env.root / "mem", ()) == mem_before
    assert head(env.vault) == sha


def test_its_own_writes_do_not_start_another_pass(env: Env, watching: Watcher) -> None:
    commits = commit_count(env.vault)
    note = env.vault / SARAH_DIR / "facts/sarah-chen-001.md"
    note.write_text(note.read_text(encoding="utf-8").rstrip("\n") + " since 2024\n")
    until(lambda: env.fact(SARAH, "sarah-chen-001")["fact"].endswith("since 2024"), "the edit in items.json")
    until(lambda: len(watching.out) >= 2, "the pass's line")
    time.sleep(3)
    assert watching.stop() == 0
    assert len(watching.out) == 2, watching.out  # the first pass and this one; not one for items.json's write
    assert commit_count(env.vault) == commits + 1


def test_json_prints_one_report_per_line(env: Env) -> None:
    watcher = Watcher(env, "--json")
    until(lambda: len(watcher.out) >= 1, "the first pass")
    with (env.workspace / "memory/2026-12-01.md").open("a", encoding="utf-8") as f:
        f.write("- one more\n")
    until(lambda: len(watcher.out) >= 2, "the second pass")
    assert watcher.stop() == 0
    reports = [json.loads(line) for line in watcher.out]
    assert (reports[0]["exit_code"], reports[0]["files_written"], reports[0]["commits"]) == (0, 0, [])
    assert {"side": "memory", "scope": "daily 2026-12-01", "what": "edited"} in reports[1]["changes"]


LOCK_HOLDER = """
import sys, time
from pathlib import Path
from vaultsync.system.lock import run_lock
with run_lock(Path(sys.argv[1])):
    Path(sys.argv[2]).write_text("ready")
    while not Path(sys.argv[3]).exists():
        time.sleep(0.05)
"""


def test_watch_waits_for_a_held_lock_then_runs(env: Env, tmp_path: Path) -> None:
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(env.cfg.state_dir / "lock"), ready, release])
    try:
        until(ready.exists, "the lock holder")
        watcher = Watcher(env)
        with (env.workspace / "memory/2026-12-01.md").open("a", encoding="utf-8") as f:
            f.write("- while cron held the lock\n")
        time.sleep(2)
        assert watcher.out == [] and watcher.proc.poll() is None  # waiting, not failing
        release.write_text("go")
        note = env.vault / "Daily/2026-12-01.md"
        until(lambda: "- while cron held the lock" in note.read_text(encoding="utf-8"), "the pass after the lock")
        assert watcher.stop() == 0
    finally:
        release.write_text("go")
        holder.wait(timeout=DEADLINE)
    assert all(run.exit_code != 3 for run in runs.history(env.cfg.state_dir))  # waited, never recorded as locked out


def test_a_missing_root_pauses_and_resumes(env: Env, watching: Watcher) -> None:
    moved = env.root / "workspace-away"
    env.workspace.rename(moved)
    until(lambda: any("paused: root folder(s) missing" in line for line in watching.err), "the pause")
    lines = len(watching.out)
    with (moved / "memory/2026-12-01.md").open("a", encoding="utf-8") as f:
        f.write("- written while away\n")
    moved.rename(env.workspace)
    until(lambda: any("resumed" in line for line in watching.err), "the resume")
    note = env.vault / "Daily/2026-12-01.md"
    until(lambda: "- written while away" in note.read_text(encoding="utf-8"), "the pass after resuming")
    until(lambda: len(watching.out) > lines, "the pass's line")
    assert sum("paused" in line for line in watching.err) == 1
    assert all("stopped" not in line for line in watching.out)
    assert watching.stop() == 0


def _lock_held(lock: Path) -> bool:
    with lock.open("rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def test_sigterm_mid_pass_leaves_no_torn_file_and_nothing_to_do(env: Env, watching: Watcher) -> None:
    # A large change (300 new entities) makes a pass long enough to be caught holding the lock.
    lines = len(watching.out)
    for n in range(300):
        folder = env.life / f"areas/people/person-{n:03d}"
        folder.mkdir(parents=True)
        facts = [{"id": f"p{n}-{k}", "fact": f"Person {n} fact {k}", "status": "active"} for k in range(5)]
        (folder / "items.json").write_text(json.dumps(facts, indent=2))
        (folder / "summary.md").write_text(f"Person {n}.\n")
    lock = env.cfg.state_dir / "lock"
    deadline = time.monotonic() + DEADLINE
    while not _lock_held(lock) and len(watching.out) == lines and time.monotonic() < deadline:
        time.sleep(0.005)
    assert watching.stop() == 0
    for root in (env.vault, env.root / "mem"):
        assert not [p for p in root.rglob("*.vstmp")], "a staged file was left behind"
    for items in env.life.rglob("items.json"):
        json.loads(items.read_bytes())  # every one whole
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if len(watching.out) == lines:  # stopped before the pass began: the next one does all of it
        assert done.returncode == 0, done.stderr
        done = subprocess.run(
            [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "wrote 0 file(s), nothing to commit"


def test_a_plain_sync_imports_no_watch_or_schedule_library(env: Env) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0
    for heavy in ("watchfiles", "platformdirs", "crontab", "anyio"):
        assert f" {heavy}\n" not in done.stderr and f" {heavy}." not in done.stderr, heavy
