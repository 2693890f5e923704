"""Two machines and a git remote on one disk: a bare repository, the "server" (memory tree, vaultsync, its vault)
and the "laptop" (a plain clone the person edits and commits as obsidian-git does: ``vault backup: <time>``,
then pull with merge or rebase, then push). Nothing is mocked: every step is the real git command line.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from helpers.twoway import NOW, TODAY, Env
from vaultsync import config as configmod
from vaultsync.app.sync import PassOptions, sync
from vaultsync.config import RemoteSettings
from vaultsync.model import Report

PERSON = ("Nora Laptop", "nora@laptop.example")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    run = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and run.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd}: {run.stderr}")
    return run.stdout


@dataclass
class Laptop:
    """The person's clone, driven the way obsidian-git drives it."""

    root: Path
    pull: str = "merge"  # obsidian-git's "sync method": merge or rebase

    def note(self, rel: str) -> Path:
        return self.root / rel

    def backup(self, message: str = "vault backup: 2026-12-01 10:00:00") -> None:
        """obsidian-git's "commit-and-sync": stage everything, commit, pull, push."""
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message, check=False)
        self.sync()

    def sync(self) -> None:
        git(self.root, "pull", "-q", "--rebase" if self.pull == "rebase" else "--no-rebase", "origin", "main")
        git(self.root, "push", "-q", "origin", "main")

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD").strip()


@dataclass
class Meeting:
    """The bare remote, the server's setup and the laptop, after the server's first push and the laptop's clone."""

    bare: Path
    server: Env
    laptop: Laptop

    def pass_(self, **options: object) -> Report:
        """One server pass through the same use case the command line calls (fetch, merge, pass, push)."""
        options.setdefault("today", TODAY)
        options.setdefault("now", lambda: NOW)
        return sync(self.server.cfg, PassOptions(**options))  # type: ignore[arg-type]

    def remote_head(self) -> str:
        return git(self.bare, "rev-parse", "refs/heads/main").strip()

    def server_clean(self) -> list[str]:
        """``git status`` of the server's vault: nothing staged, changed or untracked but ignored state."""
        return [line for line in git(self.server.vault, "status", "--porcelain").splitlines() if line]


def meet(env: Env, root: Path, pull: str = "merge") -> Meeting:
    """Give the synced ``env`` a bare remote, push it there with a first pass, and clone the laptop from it."""
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    git(env.vault, "remote", "add", "origin", str(bare))
    cfg = replace(env.cfg, remote=RemoteSettings())
    env.config_path.write_text(configmod.dumps(cfg), encoding="utf-8")
    env.cfg = configmod.load(env.config_path)
    meeting = Meeting(bare, env, Laptop(root / "laptop", pull))
    report = meeting.pass_()
    assert report.exit_code == 0 and report.remote and report.remote.pushed, report.to_json()
    git(root, "clone", "-q", str(bare), str(meeting.laptop.root))
    git(meeting.laptop.root, "config", "user.name", PERSON[0])
    git(meeting.laptop.root, "config", "user.email", PERSON[1])
    git(meeting.laptop.root, "config", "pull.rebase", "true" if pull == "rebase" else "false")
    return meeting
