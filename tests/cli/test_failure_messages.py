"""The command line failing as a new user meets it: one line for Ctrl-C and for a crash, a named way out of a
broken base, and a clear word when git is missing; nothing torn, nothing half-written. Every case runs the real
program in a subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO
from helpers.e2e import run_vaultsync
from helpers.twoway import SARAH, SARAH_DIR, Env, set_prop

from vaultsync.model import ExitCode


def _grow(env: Env, entities: int) -> None:
    """Enough new entities that a pass takes a while: a full pass over them, in batches."""
    for i in range(entities):
        folder = env.life / "areas" / "bulk" / f"e{i:04d}"
        folder.mkdir(parents=True)
        facts = [{"id": f"e{i:04d}-{j}", "fact": f"Bulk fact {j} of entity {i}", "status": "active"} for j in range(8)]
        (folder / "items.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
        (folder / "summary.md").write_text(f"# Bulk {i}\n", encoding="utf-8")


def test_no_git_on_path_is_said_for_sync_and_init(env: Env, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    path = {"PATH": str(bare)}
    done = run_vaultsync("sync", "--config", str(env.config_path), env=path)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "git was not found on PATH" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    fresh = tmp_path / "fresh"
    args = ("--workspace", str(env.workspace), "--life", str(env.life), "--vault", str(fresh / "vault"))
    done = run_vaultsync("init", *args, "--config", str(fresh / "c.toml"), env=path)
    assert done.returncode == ExitCode.USAGE and "git was not found on PATH" in done.stderr
    assert "Traceback" not in done.stderr and not (fresh / "vault").exists()


def test_a_corrupted_base_is_named_with_its_way_out(env: Env) -> None:
    base = env.cfg.state_dir / "base.sqlite"
    base.write_bytes(b"this is not a database, just bytes someone wrote over it\n" * 100)
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-001"), "category", "career")
    before = env.items_path(SARAH).read_bytes()
    head = env.head()
    done = run_vaultsync("sync", "--config", str(env.config_path))
    assert done.returncode == ExitCode.SAFETY_STOP, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "cannot be read" in done.stdout and f"mv '{base}'" in done.stdout
    assert env.items_path(SARAH).read_bytes() == before and env.head() == head  # no start from nothing

    base.rename(base.with_name("base.sqlite.broken"))  # the documented way out
    done = run_vaultsync("sync", "--config", str(env.config_path))
    # With no common ancestor the edit made meanwhile is a difference: both versions are kept, none is lost.
    assert done.returncode == ExitCode.CONFLICTS, done.stdout + done.stderr
    copies = list((env.vault / SARAH_DIR / "facts").glob("sarah-chen-001.vaultsync-conflict-*.md"))
    assert len(copies) == 1 and "\ncategory: career\n" in copies[0].read_text(encoding="utf-8")
    assert env.fact(SARAH, "sarah-chen-001")["category"] == "context"


def test_a_crash_has_its_own_code_one_line_and_a_traceback_file(env: Env, tmp_path: Path) -> None:
    state = env.cfg.state_dir
    for child in sorted(state.rglob("*"), reverse=True):
        child.unlink() if child.is_file() else child.rmdir()
    state.rmdir()
    state.write_text("a file where the state folder belongs\n", encoding="utf-8")
    xdg_state = tmp_path / "xdg-state"
    done = run_vaultsync("sync", "--config", str(env.config_path), env={"XDG_STATE_HOME": str(xdg_state)})
    assert done.returncode == ExitCode.CRASH, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultsync: crashed (") and "Traceback" not in done.stderr
    saved = list((xdg_state / "vaultsync" / "crash").glob("crash-*.txt"))
    assert len(saved) == 1 and str(saved[0]) in lines[0]
    assert "Traceback (most recent call last)" in saved[0].read_text(encoding="utf-8")


@pytest.mark.parametrize("entities", [600])
def test_ctrl_c_prints_one_line_and_leaves_nothing_torn(env: Env, entities: int) -> None:
    _grow(env, entities)
    lock = env.cfg.state_dir / "lock"
    lock.unlink()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not lock.exists() and proc.poll() is None:  # the pass has begun once it made its lock
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate()
    if proc.returncode == 0:
        pytest.skip("the pass ended before the signal arrived")
    assert proc.returncode == ExitCode.INTERRUPTED, out + err
    assert err.strip() == "vaultsync: interrupted; every file is whole and the next pass finishes the work"
    assert "Traceback" not in out + err

    done = run_vaultsync("sync", "--config", str(env.config_path))  # the lock is free and the pass converges
    assert done.returncode == ExitCode.CLEAN, done.stdout + done.stderr
    again = run_vaultsync("sync", "--config", str(env.config_path))
    assert again.returncode == ExitCode.CLEAN and again.stdout.strip() == "wrote 0 file(s), nothing to commit"
    assert env.git("status", "--porcelain") == ""
    facts = json.loads((env.life / "areas/bulk/e0000/items.json").read_text(encoding="utf-8"))
    assert len(facts) == 8 and (env.vault / "2 Areas/bulk/e0000/facts/e0000-7.md").is_file()
