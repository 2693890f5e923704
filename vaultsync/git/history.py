"""Reading the vault's history: which commits touched some notes, and what those notes held before and after.

``git log`` with path limits does the walking: it compares each commit with its parent only below the folders
that changed, so the history of one fact among 50k notes and 1,000 commits takes a fraction of a second, where
walking the commits in Python would read every tree. Old contents come from one ``git cat-file --batch``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.errors import HistoryError
from vaultsync.git.run import batch_objects

RECORD = "\x1e"
FIELD = "\x1f"
# The trailers a program's commit carries (``Agent: main``, ``Session: ...``): which of its agents, which
# conversation. git >= 2.22 reads them; a commit without them gives "".
TRAILERS = "".join(f"{FIELD}%(trailers:key={key},valueonly,separator=%x2c)" for key in ("Agent", "Session"))
FORMAT = f"{RECORD}%H{FIELD}%aI{FIELD}%an{FIELD}%ae{FIELD}%s{TRAILERS}"


@dataclass(frozen=True)
class FileChange:
    status: str  # A, M, D, R (renamed or moved), T (type), C (copied)
    path: str  # the path after the commit (for D: the path that was deleted)
    old_path: str | None = None  # for R and C: the path before


@dataclass
class Commit:
    sha: str
    when: str  # ISO 8601 with the author's offset
    author: str
    email: str
    subject: str
    files: list[FileChange] = field(default_factory=list)
    agent: str = ""  # the ``Agent`` trailer: which of a program's agents wrote
    session: str = ""  # the ``Session`` trailer: from which conversation


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    run = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
    )
    if run.returncode != 0:
        raise HistoryError(run.stderr.decode(errors="replace").strip())
    return run.stdout


def log(
    root: Path,
    pathspecs: Sequence[str],
    *,
    since: str | None = None,
    limit: int | None = None,
    follow: bool = False,
    start: str | None = None,
) -> list[Commit]:
    """The commits touching ``pathspecs`` (git pathspecs; none: every path), newest first, with the files each
    changed among them. Moves and renames are paired (``-M``); ``follow`` tracks one file across renames;
    ``start``: a commit to walk back from instead of HEAD."""
    args = ["log", "-z", "-M", "--name-status", f"--format={FORMAT}"]
    if follow:
        args.append("--follow")
    if since:
        args.append(f"--since={since}")
    if limit:
        args.append(f"-n{limit}")
    if not _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}").strip():
        return []
    out = _git(root, *args, *([start] if start else []), "--", *pathspecs).decode("utf-8", errors="replace")
    commits = []
    for chunk in out.split(RECORD)[1:]:
        header, _, rest = chunk.partition("\0")
        sha, when, author, email, subject, agent, session = (header.split(FIELD) + [""] * 7)[:7]
        commit = Commit(sha, when, author, email, subject, agent=agent.strip(), session=session.strip())
        tokens = rest.lstrip("\n").split("\0")
        i = 0
        while i < len(tokens) and tokens[i]:
            status = tokens[i]
            if status[:1] in "RC" and i + 2 < len(tokens):
                commit.files.append(FileChange(status[0], tokens[i + 2], tokens[i + 1]))
                i += 3
            elif i + 1 < len(tokens):
                commit.files.append(FileChange(status[0], tokens[i + 1]))
                i += 2
            else:
                break
        commits.append(commit)
    return commits


def messages_with(root: Path, text: str) -> list[tuple[str, str]]:
    """(sha, whole message) of every commit whose message holds ``text`` (taken literally), newest first."""
    if not _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}").strip():
        return []
    out = _git(root, "log", "-z", "--fixed-strings", f"--grep={text}", "--format=%H%x1f%B").decode(errors="replace")
    return [(sha, body) for sha, _, body in (c.partition(FIELD) for c in out.split("\0") if c.strip())]


def blobs(root: Path, specs: Sequence[str]) -> list[bytes | None]:
    """What each ``<commit>:<path>`` held (None where it did not exist), read by one ``git cat-file --batch``."""
    if not specs:
        return []
    if any("\n" in spec for spec in specs):
        raise ValueError("a path with a line break cannot be read through cat-file --batch")
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{spec}\n" for spec in specs).encode())
    return [obj[2] if obj and obj[1] == b"blob" else None for obj in batch_objects(out)]


def good_commit(root: Path, path: str, at: str | None = None) -> str:
    """The commit to restore ``path`` (a note or a folder) from: ``at`` as given, else HEAD when it holds the
    path, else the parent of the last commit that touched it (the one that deleted it). Raises HistoryError
    when git knows no such commit, or no version of the path."""
    if at is not None:
        try:
            return _git(root, "rev-parse", "--verify", "-q", f"{at}^{{commit}}").decode().strip()
        except HistoryError:
            raise HistoryError(f"no commit {at!r} in the vault's history") from None
    head = _git(root, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
    if files_at(root, head, path, names_only=True):
        return head
    last = _git(root, "rev-list", "-1", head, "--", path).decode().strip()
    if not last:
        raise HistoryError(f"{path}: never committed in the vault")
    return _git(root, "rev-parse", "--verify", f"{last}^{{commit}}^").decode().strip()


def files_at(root: Path, commit: str, path: str, names_only: bool = False) -> dict[str, bytes]:
    """Every file at or below ``path`` in ``commit``, vault path -> bytes (empty bytes with ``names_only``)."""
    listed = _git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", path).decode()
    names = [name for name in listed.split("\0") if name and (name == path or name.startswith(f"{path}/"))]
    if names_only:
        return dict.fromkeys(names, b"")
    found = blobs(root, [f"{commit}:{n}" for n in names])
    return {name: data for name, data in zip(names, found, strict=True) if data is not None}
