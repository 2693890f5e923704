"""A disk that refuses writes, and locks a killed git left: a full disk, a read-only vault, a stale ref lock.

The disks are real: a small tmpfs filled with a ballast file, the same tmpfs remounted read-only. Mounting needs
root (the test suite runs as root in CI); elsewhere these tests are skipped, saying why. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from helpers.crash import LOCK_WAIT_BOOT, SHORT_LOCK_WAIT, is_temp, torn_files, tree
from helpers.server import AUTH, running_server
from helpers.twoway import EXAMPLE, SARAH, Env, clone, isolate_git
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from vaultsync import config as configmod
from vaultsync.app.init import init_vault

CLI = [sys.executable, "-m", "vaultsync.cli"]
ZED = "areas/people/zed"


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()}); a real full disk needs one")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def add_zed(env: Env) -> None:
    """The agent writes a new person with 150 facts: a pass then writes some 150 notes into the vault."""
    folder = env.life / ZED
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text("# Zed\n\nA person the agent met.\n", encoding="utf-8")
    facts = [
        {"id": f"zed-{n:03}", "fact": f"Zed fact {n} " + "words " * 50, "category": "misc", "timestamp": "2026-11-01"}
        for n in range(150)
    ]
    (folder / "items.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")


def cli(env: Env, *argv: str, lock_wait: float | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line; with ``lock_wait``, waiting that long for git's index lock (helpers.crash.run_sync)."""
    program = CLI if lock_wait is None else [sys.executable, "-c", LOCK_WAIT_BOOT, str(lock_wait)]
    return subprocess.run(
        [*program, *argv, "--config", str(env.config_path)], capture_output=True, text=True, timeout=600, env=os.environ
    )


def fill(disk: Path, leave: int) -> Path:
    ballast = disk / "ballast"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with ballast.open("wb") as out:
        out.write(b"\0" * max(0, free - leave))
    return ballast


def crashes() -> list[Path]:
    return list(Path(os.environ["XDG_STATE_HOME"]).rglob("crash-*"))


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state-home"))
    return tmp_path


def first_import(root: Path) -> Env:
    """vault-example and a vault ``init`` just made, before the first pass."""
    shutil.copytree(EXAMPLE, root / "mem")
    init_vault(root / "mem" / "workspace", root / "mem" / "life", root / "vault", root / "config.toml")
    return Env(root, configmod.load(root / "config.toml"))


def later_pass(template: Path, root: Path) -> Env:
    """A synced vault-example where the agent has since written a new person with 150 facts."""
    env = clone(template, root)
    add_zed(env)
    return env


@pytest.mark.parametrize(
    ("variant", "leave"), [("first", 50_000), ("first", 300_000), ("later", 30_000), ("later", 250_000)]
)
def test_a_full_disk_stops_cleanly_and_the_next_pass_finishes(
    synced_template: Path, isolated: Path, variant: str, leave: int
) -> None:
    def setup(root: Path) -> Env:
        return first_import(root) if variant == "first" else later_pass(synced_template, root)

    reference = setup(isolated / "reference")
    assert cli(reference, "sync").returncode == 0
    with tmpfs(isolated / "disk", "8m") as disk:
        env = setup(disk / "setup")
        before = tree(env)
        ballast = fill(disk, leave)

        # git's "Unable to create '.../index.lock': No space left on device" reads as a held lock, retried for
        # LOCK_WAIT_SECONDS before the pass gives up: a wait this test does not check, so it is kept short.
        stopped = cli(env, "sync", lock_wait=SHORT_LOCK_WAIT)
        assert stopped.returncode in (4, 5), stopped.stderr + stopped.stdout
        output = stopped.stdout + stopped.stderr
        said = [line for line in output.splitlines() if " is full" in line]
        assert len(said) == 1 and f"mounted at {disk}" in said[0], output
        assert "Traceback" not in stopped.stderr and not crashes()
        after = tree(env)
        assert not [p for p in after if is_temp(p)]
        assert not torn_files(after, before, tree(reference))
        assert env.git("diff", "--cached", "--name-only") == ""

        ballast.unlink()
        assert cli(env, "sync").returncode == 0
        assert tree(env) == tree(reference)
        assert env.git("status", "--porcelain") == ""


@pytest.mark.usefixtures("short_lock_wait")
@pytest.mark.parametrize("lock", ["refs/heads/{branch}.lock", "index.lock"])
def test_a_stale_git_lock_leaves_nothing_staged(env: Env, lock: str) -> None:
    note = env.vault / "Daily" / "2026-12-01.md"
    note.write_text(note.read_text(encoding="utf-8") + "- a line typed in Obsidian\n", encoding="utf-8")
    stale = env.vault / ".git" / lock.format(branch=env.git("symbolic-ref", "--short", "HEAD").strip())
    stale.write_text("")

    stopped = env.sync()
    assert stopped.exit_code == 4 and str(stale) in json.dumps(stopped.to_json())
    assert env.git("diff", "--cached", "--name-only") == ""

    stale.unlink()
    assert env.sync().exit_code == 0
    assert "Daily/2026-12-01.md" in env.git("show", "--name-only", "--format=", "HEAD")
    assert env.git("status", "--porcelain") == ""


async def mcp_on_a_read_only_disk(env: Env) -> tuple[bool, str]:
    """Through the SDK's own client over stdio: whether recall found Sarah, and what remember said."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync.cli", "mcp", "--config", str(env.config_path)],
        env={k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "XDG_", "PATH", "PYTHON"))},
    )
    async with Client(params) as client:
        recalled = await client.call_tool("recall", {"query": "sarah"})
        written = await client.call_tool("remember", {"entity": SARAH, "fact": "Sarah reads"})
    assert written.is_error, written.content
    return not recalled.is_error and "sarah" in recalled.content[0].text.lower(), written.content[0].text


def test_a_read_only_vault_reads_and_refuses_writes_in_one_line(synced_template: Path, isolated: Path) -> None:
    with tmpfs(isolated / "disk", "20m") as disk:
        env = clone(synced_template, disk / "setup")
        note = env.vault / "Daily" / "2026-12-01.md"
        note.write_text(note.read_text(encoding="utf-8") + "- a line typed in Obsidian\n", encoding="utf-8")
        remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount a tmpfs read-only here ({remount.stderr.strip()})")
        files = tree(env)

        status = cli(env, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert "vault: write life/../" not in status.stdout and json.loads(status.stdout)["changes"]
        recall = cli(env, "recall", "sarah", "--json")
        assert recall.returncode == 0, recall.stderr
        assert json.loads(recall.stdout)["hits"]
        history = cli(env, "log", "--json")
        assert history.returncode == 0 and json.loads(history.stdout), history.stderr

        for argv in (["sync"], ["janitor"], ["review"]):
            refused = cli(env, *argv)
            assert refused.returncode == 4, (argv, refused.stderr)
            assert refused.stderr.count("\n") == 1 and "read-only" in refused.stderr, refused.stderr
        with running_server(env.config_path) as url:
            assert httpx.get(f"{url}/recall", params={"q": "sarah"}, headers=AUTH).json()["hits"]
            write = httpx.post(f"{url}/facts", json={"entity": SARAH, "fact": "Sarah reads"}, headers=AUTH)
            assert write.status_code == 503 and "read-only" in write.json()["detail"], write.text
        found, said = asyncio.run(mcp_on_a_read_only_disk(env))
        assert found and said.count("\n") == 0 and "read-only" in said and str(disk) in said, said
        assert not crashes()
        assert tree(env) == files
