"""The command line as a new user meets it: a version, the config where XDG says, one line for Ctrl-C and for a
crash, a named way out of a broken base, a clear word when git is missing, quiet output for cron, and a start
on systems without fcntl. Every case runs the real program in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import SARAH, SARAH_DIR, Env, set_prop

from vaultsync import __version__
from vaultsync.model import ExitCode


def _vs(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_version() -> None:
    done = _vs("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"vaultsync {__version__}"


def test_the_default_config_is_under_xdg_config_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg-config"
    config = xdg / "vaultsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[paths]\n", encoding="utf-8")  # invalid on purpose: the message names the file it read
    env = {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "home")}
    os.environ.pop("VAULTSYNC_CONFIG", None)
    done = _vs("status", env={**env, "VAULTSYNC_CONFIG": ""})
    assert done.returncode == ExitCode.USAGE
    assert str(config) in done.stderr, done.stderr


def test_no_git_on_path_is_said_for_sync_and_init(env: Env, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    path = {"PATH": str(bare)}
    done = _vs("sync", "--config", str(env.config_path), env=path)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "git was not found on PATH" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    fresh = tmp_path / "fresh"
    args = ("--workspace", str(env.workspace), "--life", str(env.life), "--vault", str(fresh / "vault"))
    done = _vs("init", *args, "--config", str(fresh / "c.toml"), env=path)
    assert done.returncode == ExitCode.USAGE and "git was not found on PATH" in done.stderr
    assert "Traceback" not in done.stderr and not (fresh / "vault").exists()


def test_a_corrupted_base_is_named_with_its_way_out(env: Env) -> None:
    base = env.cfg.state_dir / "base.sqlite"
    base.write_bytes(b"this is not a database, just bytes someone wrote over it\n" * 100)
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-001"), "category", "career")
    before = env.items_path(SARAH).read_bytes()
    head = env.head()
    done = _vs("sync", "--config", str(env.config_path))
    assert done.returncode == ExitCode.SAFETY_STOP, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "cannot be read" in done.stdout and f"mv '{base}'" in done.stdout
    assert env.items_path(SARAH).read_bytes() == before and env.head() == head  # no start from nothing

    base.rename(base.with_name("base.sqlite.broken"))  # the documented way out
    done = _vs("sync", "--config", str(env.config_path))
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
    done = _vs("sync", "--config", str(env.config_path), env={"XDG_STATE_HOME": str(xdg_state)})
    assert done.returncode == ExitCode.CRASH, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultsync: crashed (") and "Traceback" not in done.stderr
    saved = list((xdg_state / "vaultsync" / "crash").glob("crash-*.txt"))
    assert len(saved) == 1 and str(saved[0]) in lines[0]
    assert "Traceback (most recent call last)" in saved[0].read_text(encoding="utf-8")


def test_quiet_prints_only_problems_and_conflicts_with_timestamps(env: Env) -> None:
    done = _vs("sync", "--quiet", "--config", str(env.config_path))
    assert done.returncode == ExitCode.CLEAN and done.stdout == "" and done.stderr == ""
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-001"), "category", "work")
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="career"))
    done = _vs("sync", "--quiet", "--config", str(env.config_path))
    assert done.returncode == ExitCode.CONFLICTS
    lines = done.stdout.splitlines()
    assert lines and all(line[:4].isdigit() and line[10] == "T" for line in lines), lines
    assert any(" conflict: " in line and ".vaultsync-conflict-" in line for line in lines)
    assert not any("wrote" in line or "changes" in line for line in lines)


def test_the_cli_starts_where_fcntl_does_not_exist(tmp_path: Path) -> None:
    """Windows has no fcntl: importing the CLI and its lock must not need it."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['fcntl'] = None\n", encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = _vs("--help", env=env)
    assert done.returncode == 0, done.stderr
    probe = (
        "import vaultsync.system.lock, vaultsync.system.forked, vaultsync.engine.run, vaultsync.app.sync; print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, **env}, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr


def _grow(env: Env, entities: int) -> None:
    """Enough new entities that a pass takes a while: a full pass over them, in batches."""
    for i in range(entities):
        folder = env.life / "areas" / "bulk" / f"e{i:04d}"
        folder.mkdir(parents=True)
        facts = [{"id": f"e{i:04d}-{j}", "fact": f"Bulk fact {j} of entity {i}", "status": "active"} for j in range(8)]
        (folder / "items.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
        (folder / "summary.md").write_text(f"# Bulk {i}\n", encoding="utf-8")


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

    done = _vs("sync", "--config", str(env.config_path))  # the lock is free and the pass converges
    assert done.returncode == ExitCode.CLEAN, done.stdout + done.stderr
    again = _vs("sync", "--config", str(env.config_path))
    assert again.returncode == ExitCode.CLEAN and again.stdout.strip() == "wrote 0 file(s), nothing to commit"
    assert env.git("status", "--porcelain") == ""
    facts = json.loads((env.life / "areas/bulk/e0000/items.json").read_text(encoding="utf-8"))
    assert len(facts) == 8 and (env.vault / "2 Areas/bulk/e0000/facts/e0000-7.md").is_file()


def test_every_line_of_the_scheduled_log_has_the_time(tmp_path: Path) -> None:
    """A warning found by ``grep`` in the log must say when it was seen, not only the run's first line."""
    config = tmp_path / "config.toml"
    script = (
        "import sys; from pathlib import Path; from vaultsync.app.schedule import write_log, log_path; "
        "c = Path(sys.argv[1]); write_log(c, 5, sys.stdin.read()); print(log_path(c))"
    )
    output = "changes:\n  vault   people/sarah: edited\nwarning: a.md: odd\n\nwrote 1 file(s), 1 commit(s): abc\n"
    done = subprocess.run(
        [sys.executable, "-c", script, str(config)],
        input=output,
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
        check=True,
    )
    log = Path(done.stdout.strip()).read_text(encoding="utf-8").splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"
    assert len(log) == 4
    assert re.fullmatch(stamp + r" exit 5: wrote 1 file\(s\), 1 commit\(s\): abc", log[0])
    assert re.fullmatch(stamp + r"     changes:", log[1])
    assert re.fullmatch(stamp + r"       vault   people/sarah: edited", log[2])
    assert re.fullmatch(stamp + r"     warning: a\.md: odd", log[3])
