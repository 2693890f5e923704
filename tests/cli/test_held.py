"""The shrink guard on the command line and over HTTP, as real processes: ``sync`` and ``status`` exit 7 and name
each held change (``status --json``: ``held``), ``accept`` and ``restore`` answer it, committed as the person, a
target nothing is held at is refused with exit 2, and ``GET /status`` carries the held list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from helpers import inputs
from helpers.server import AUTH, running_server
from helpers.twoway import isolate_git

from vaultsync.model import ExitCode

MEMORY_70 = "# Memory\n\n" + "".join(f"- lesson {n}: label the jars\n" for n in range(70))
NOTE = "3 Resources/agent/MEMORY.md"
PERSON = "Nora Person"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> inputs.Env:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env", f"[user]\n\tname = {PERSON}\n\temail = nora@example.org\n")
    env = inputs.make_env(tmp_path)
    env.write(env.workspace / "MEMORY.md", MEMORY_70)
    for day in range(27, 32):
        env.daily(f"2026-01-{day}.md", f"# 2026-01-{day}\n\n- watered the plants\n")
    assert vaultsync(env, "sync").returncode == 0
    return env


def vaultsync(env: inputs.Env, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "vaultsync.cli", args[0], "--config", str(env.root / "config.toml"), *args[1:]]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, check=False)


def test_sync_and_status_name_the_held_change_and_exit_7(env: inputs.Env) -> None:
    env.write(env.workspace / "MEMORY.md", "# Memory\n\n- label the jars\n")

    done = vaultsync(env, "sync")
    assert done.returncode == ExitCode.HELD, done.stdout + done.stderr
    assert f"held: {NOTE}: agent cut the file (71 -> 2 lines)" in done.stdout
    assert f"vaultsync accept '{NOTE}'" in done.stdout

    status = vaultsync(env, "status", "--json")
    assert status.returncode == ExitCode.HELD, status.stderr
    held = json.loads(status.stdout)["held"]
    assert held == [
        {
            "path": NOTE,
            "scope": "MEMORY.md",
            "writer": "agent",
            "side": "memory",
            "before": 71,
            "after": 2,
            "unit": "lines",
            "rule": "cut the file",
        }
    ]
    assert env.note(NOTE) == MEMORY_70, "the vault keeps its copy"

    refused = vaultsync(env, "accept", "Daily/2026-01-27.md")
    assert refused.returncode == ExitCode.USAGE
    assert "nothing is held at 'Daily/2026-01-27.md'" in refused.stderr

    accepted = vaultsync(env, "accept", NOTE, "--json")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert json.loads(accepted.stdout)["held"] == []
    assert env.note(NOTE) == "# Memory\n\n- label the jars\n"
    assert env.git("log", "-1", "--format=%an", "--", NOTE).strip() == PERSON


def test_restore_puts_memory_md_back_and_a_person_deleting_daily_notes_is_held(env: inputs.Env) -> None:
    env.write(env.workspace / "MEMORY.md", "# Memory\n")
    for day in (27, 28, 29):
        (env.vault / "Daily" / f"2026-01-{day}.md").unlink()

    done = vaultsync(env, "sync", "--json")
    assert done.returncode == ExitCode.HELD
    assert {(h["path"], h["writer"]) for h in json.loads(done.stdout)["held"]} == {
        (NOTE, "agent"),
        ("Daily/2026-01-27.md", "person"),
        ("Daily/2026-01-28.md", "person"),
        ("Daily/2026-01-29.md", "person"),
    }

    restored = vaultsync(env, "restore", NOTE)
    assert restored.returncode == ExitCode.HELD, restored.stdout + restored.stderr  # the notes still wait
    assert (env.workspace / "MEMORY.md").read_text() == MEMORY_70
    again = vaultsync(env, "restore", "Daily")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (env.vault / "Daily/2026-01-27.md").read_text().endswith("- watered the plants\n")
    assert env.git("status", "--porcelain") == ""
    unknown = vaultsync(env, "restore", NOTE, "--at", "no-such-commit")
    assert unknown.returncode == ExitCode.USAGE and "no commit 'no-such-commit'" in unknown.stderr


def test_get_status_carries_the_held_list(env: inputs.Env) -> None:
    env.write(env.workspace / "MEMORY.md", "# Memory\n")
    assert vaultsync(env, "sync").returncode == ExitCode.HELD
    with running_server(env.root / "config.toml") as url:
        answer = httpx.get(f"{url}/status", headers=AUTH, timeout=60)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [(h["path"], h["writer"], h["before"], h["after"]) for h in body["held"]] == [(NOTE, "agent", 71, 1)]
    assert body["last_run"]["exit_code"] == ExitCode.HELD
