"""Helpers for the end-to-end tests: a copy of the bundled example tree, tree snapshots and git inspection.

Everything here works on real files and a real git repository; nothing of vaultsync is mocked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from helpers import REPO
from vaultsync import config as configmod
from vaultsync.app.init import InitResult, init_vault
from vaultsync.config import Config

EXAMPLE = REPO / "vault-example"
PACKAGE_TEMPLATES = REPO / "vaultsync" / "templates"


@dataclass
class Env:
    """One sandbox: a copy of the example memory tree, a vault folder and a config path, all under ``root``."""

    root: Path
    workspace: Path
    life: Path
    vault: Path
    config_path: Path

    @property
    def mem(self) -> Path:
        return self.workspace.parent

    def cfg(self) -> Config:
        return configmod.load(self.config_path)

    def init(self) -> InitResult:
        # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
        return init_vault(self.workspace, self.life, self.vault, self.config_path, fact_text=False)


def make_env(root: Path) -> Env:
    """Copy the example tree to ``root/mem``; the vault and config are not created yet."""
    root.mkdir(parents=True, exist_ok=True)
    mem = root / "mem"
    shutil.copytree(EXAMPLE, mem)
    return Env(
        root=root,
        workspace=mem / "workspace",
        life=mem / "life",
        vault=root / "vault",
        config_path=root / "config.toml",
    )


def files_under(root: Path, exclude: Iterable[str] = (".git",)) -> list[Path]:
    """Every regular file below ``root`` except those under an excluded top-level-relative prefix."""
    prefixes = tuple(exclude)
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in prefixes):
            continue
        out.append(path)
    return out


def tree_bytes(root: Path, exclude: Iterable[str] = (".git",)) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files_under(root, exclude)}


def tree_stat(root: Path, exclude: Iterable[str] = (".git",)) -> dict[str, tuple[int, bytes]]:
    """Modification time (ns) and bytes of every file: a rewrite with equal bytes still shows."""
    return {p.relative_to(root).as_posix(): (p.stat().st_mtime_ns, p.read_bytes()) for p in files_under(root, exclude)}


def run_vaultsync(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The real program in a subprocess, as a person runs it; ``env`` is added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def commit_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").strip())


def _nul_list(text: str) -> list[str]:
    return sorted(p for p in text.split("\0") if p)


def commit_files(repo: Path, rev: str = "HEAD") -> list[str]:
    """The paths one commit touched (added, changed or deleted), unquoted."""
    return _nul_list(git(repo, "diff-tree", "--no-commit-id", "--name-only", "--no-renames", "-r", "-z", "--root", rev))


def all_committed_paths(repo: Path) -> set[str]:
    out = git(repo, "log", "--all", "--format=", "--name-only", "--no-renames", "-z")
    return {p.strip("\n") for p in out.split("\0") if p.strip("\n")}


def staged(repo: Path) -> list[str]:
    return _nul_list(git(repo, "diff", "--cached", "--name-only", "-z"))


def message(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "log", "-1", "--format=%B", rev).rstrip("\n")


def author(repo: Path, rev: str = "HEAD") -> tuple[str, str]:
    """(author, committer) as ``Name <email>``."""
    line = git(repo, "log", "-1", "--format=%an <%ae>%x00%cn <%ce>", rev).strip()
    a, c = line.split("\0")
    return a, c


def split_note(text: str) -> tuple[str, str]:
    """(frontmatter block including both ``---`` lines, body) of a note that starts with frontmatter."""
    assert text.startswith("---\n"), text[:80]
    end = text.index("\n---\n", 3) + len("\n---\n")
    return text[:end], text[end:]
