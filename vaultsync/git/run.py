"""Running git: the one place a git process is started for the vault's repository, with git's passing errors
(obsidian-git holding the index, a note rewritten while git hashed it) waited out and every other failure
raised with git's own words."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultsync.errors import NotARepository, UntrustedRepository

LOCK_WAIT_SECONDS = 10.0
# git errors that pass by themselves: obsidian-git holding the index, or a note Obsidian was rewriting in place
# while git hashed it ("short read while indexing", "unstable object source data", "Unable to process path").
PASSING = (
    "index.lock",
    "short read",
    "failed to read",
    "unstable object source data",
    "Unable to process path",
    "updating files failed",
)


class GitFailed(RuntimeError):
    """A git command vaultsync ran failed; ``stderr`` is git's own words."""

    def __init__(self, args: list[str], stderr: str) -> None:
        super().__init__(f"{' '.join(args)}: {stderr.strip()}")
        self.stderr = stderr


CLIENT_PREFIX = "vaultsync api ("  # a program writing through the HTTP API or MCP: ``vaultsync api (openclaw)``


@dataclass(frozen=True)
class Author:
    name: str
    email: str


def ensure_repo(root: Path) -> bool:
    """Create a repository at ``root`` unless git finds one of its own there; True when one was created.

    Asked of git as every pass asks it (``git_dir``): a repository git refuses (UntrustedRepository) is not
    made again, and one only GitPython would open is no repository to a pass."""
    try:
        git_dir(root)
    except UntrustedRepository:
        raise
    except NotARepository:
        import git  # only `vaultsync init` creates repositories: a pass does not pay for importing GitPython

        git.Repo.init(root, initial_branch="main")
        return True
    return False


@functools.cache
def git_version() -> tuple[int, ...]:
    """The installed git's version numbers, ``(2, 39, 5)``; ``()`` when git does not say."""
    try:
        said = subprocess.run(["git", "version"], capture_output=True, text=True).stdout
    except OSError:
        return ()
    found = re.search(r"(\d+(?:\.\d+)+)", said)
    return tuple(int(n) for n in found.group(1).split(".")) if found else ()


def git_dir(root: Path) -> Path:
    """The git directory of the repository whose top is ``root``; NotARepository otherwise.

    Asking git (rather than looking for ``.git``) finds what git itself would use: a ``.git`` file of a
    worktree or submodule, ``GIT_DIR``. A folder inside another repository's tree is not the vault's own.
    UntrustedRepository when the vault's own repository is one git refuses for its owner.
    """
    try:
        run = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--show-toplevel"],
            cwd=root,
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C", "LANGUAGE": "C"},  # git's refusal is read in its English words
        )
    except (FileNotFoundError, NotADirectoryError):
        raise NotARepository(root) from None
    lines = run.stdout.splitlines()
    if run.returncode != 0:
        _untrusted(root, run.stderr)
    if run.returncode != 0 or len(lines) != 2 or not Path(lines[1]).samefile(root):
        raise NotARepository(root)
    return Path(lines[0])


def _untrusted(root: Path, stderr: str) -> None:
    """Raise UntrustedRepository when git's ``stderr`` refuses ``root``'s own repository for its owner; a refused
    repository further up (the vault has none of its own) is only not the vault's."""
    found = re.search(r"detected dubious ownership in repository at '(.+)'", stderr)
    if found is None:
        return
    try:
        own = Path(found.group(1)).samefile(root)
    except OSError:
        own = False
    if own:
        suggested = re.search(r"safe\.directory (.+)$", stderr, re.MULTILINE)
        path = suggested.group(1).strip() if suggested else found.group(1)
        raise UntrustedRepository(root, found.group(0), path)


class Git:
    """git in one repository's work tree."""

    def __init__(self, root: Path, git_dir: Path) -> None:
        self.root = root
        self.git_dir = git_dir

    def text(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return self.bytes(*args, stdin=stdin, env=env).decode()

    def bytes(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        """Run git in the vault; what passes (a held ``index.lock``, a note mid-save) is waited for, then reported."""
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            started = time.time()
            run = subprocess.run(
                ["git", *args], cwd=self.root, input=stdin, capture_output=True, env={**os.environ, **(env or {})}
            )
            if run.returncode == 0:
                return run.stdout
            stderr = run.stderr.decode(errors="replace")
            if run.returncode < 0:
                # git hashes a large file through mmap and dies of SIGBUS when Obsidian truncates it meanwhile,
                # leaving its index lock. A lock made since this child started is that child's, since git takes
                # its lock with O_EXCL: removing it takes nothing from anyone.
                self._drop_lock_of_dead_child(started, env)
                stderr += f"\ngit died of signal {-run.returncode}; {PASSING[0]}"
            if not any(sign in stderr for sign in PASSING) or time.monotonic() > deadline:
                raise GitFailed(["git", *args], stderr)
            time.sleep(0.2)

    def _drop_lock_of_dead_child(self, started: float, env: dict[str, str] | None) -> None:
        index = Path((env or {}).get("GIT_INDEX_FILE") or self.git_dir / "index")
        lock = index.with_name(index.name + ".lock")
        try:
            if lock.stat().st_mtime >= started - 0.05:  # file times lag the clock by a tick
                lock.unlink()
        except FileNotFoundError:
            pass

    def fed(self, args: tuple[str, ...], chunks: Iterable[bytes], env: dict[str, str]) -> None:
        """Run git with ``chunks`` on its standard input as they come. When the chunks stop short (they
        raised), git is killed rather than left to take what it was given for all of it."""
        with subprocess.Popen(
            ["git", *args],
            cwd=self.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        ) as git:
            assert git.stdin is not None and git.stderr is not None
            try:
                for chunk in chunks:
                    git.stdin.write(chunk)
                git.stdin.close()
            except BrokenPipeError:  # git stopped reading: its message says why
                pass
            except BaseException:
                git.kill()
                raise
            stderr = git.stderr.read().decode(errors="replace")
            if git.wait() != 0:
                raise GitFailed(["git", *args], stderr)


def nul_list(paths: list[str]) -> bytes:
    return "".join(f"{path}\0" for path in paths).encode()


def batch_objects(out: bytes) -> list[tuple[bytes, bytes, bytes] | None]:
    """(id, type, content) of each object ``git cat-file --batch`` printed, in order; None for one not found."""
    found: list[tuple[bytes, bytes, bytes] | None] = []
    i = 0
    while i < len(out):
        end = out.index(b"\n", i)
        header = out[i:end]
        if header.endswith(b" missing") or header.endswith(b" ambiguous"):
            found.append(None)
            i = end + 1
            continue
        oid, kind, size = header.rsplit(b" ", 2)
        start = end + 1
        found.append((oid, kind, out[start : start + int(size)]))
        i = start + int(size) + 1
    return found
