"""The vault repository's remote: every git command that fetches, merges or pushes.

Three choices keep a killed or failing pass harmless:

* **What was fetched goes to a ref of vaultsync's own** (``refs/vaultsync/remotes/<name>/<branch>``), fetched
  from and pushed to the remote's URL rather than its name, so git never updates ``refs/remotes/...`` on its
  own. Only a pass under the run lock writes that ref, so a lock file beside it is a killed pass's and goes.
* **Merges never touch the work tree**: ``git merge-tree --write-tree`` computes the result in the object
  store, ``commit-tree`` makes the commit, and HEAD moves by compare-and-swap. Conflicts are resolved in the
  tree before anything is visible (see ``app/remote_round.py``); the work tree follows afterwards (``worktree.py``).
* **Nothing waits for a person**: ``GIT_TERMINAL_PROMPT=0`` and SSH in batch mode make a missing credential a
  failure instead of a prompt that hangs cron; credentials come from git's own helpers and keys, and URLs are
  stripped of any user and password before they reach a message.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vaultsync.errors import PushRefused
from vaultsync.git.run import Author, Git, GitFailed, batch_objects, git_version

FETCHED = "refs/vaultsync/remotes"
MERGE_TREE_GIT_MIN = (2, 38)  # ``merge-tree --write-tree``
NETWORK_SECONDS = 600  # a fetch or push that hangs this long (a dead link) counts as unreachable
PROBE_SECONDS = 30  # doctor's look at the remote: a person waits for it
MERGE_INDEX = "vaultsync-merge-index"
SCAN_CHUNK = 2000  # objects read at a time when scanning what is about to be pushed
ABSENT_BRANCH = "couldn't find remote ref"
REMOTE_SAID_MAX = 500  # characters of the remote's own message kept in the reason a push waits
Entry = tuple[str, str]  # (mode, object id) of a path in a tree


class Unreachable(RuntimeError):
    """The remote could not be reached or refused us (no such repository, no network, authentication)."""


def redact(text: str) -> str:
    """Text with any ``user:password@`` of a URL replaced: a token in a remote's URL must not reach a log."""
    return re.sub(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@", r"\1***@", text)


def _said(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return redact("; ".join(line.removeprefix("fatal: ") for line in lines[-2:]) or "no reason given")


def _remote_said(stderr: str) -> str:
    """The remote's own lines of a push (``remote: ...``: its hook's message, why the branch is protected)."""
    lines = [line.removeprefix("remote:").strip() for line in stderr.splitlines() if line.startswith("remote:")]
    return redact("; ".join(line for line in lines if line)[:REMOTE_SAID_MAX])


@dataclass(frozen=True)
class Clash:
    """A path both sides changed differently since they parted: each side's version, None where deleted."""

    path: str
    ours: Entry | None
    theirs: Entry | None


@dataclass(frozen=True)
class Merged:
    tree: str
    clashes: list[Clash]


@dataclass(frozen=True)
class Pushed:
    ok: bool
    rejected: bool = False  # the remote has commits we lack: fetch, merge, try again
    why: str = ""


# git's reasons for a push refused because the remote branch moved: it holds commits the push lacks, or it
# changed between git reading it and updating it. Any other refusal (a hook, a protected branch, no write
# access) is the remote's choice, and pushing again meets it again.
MOVED = ("non-fast-forward", "fetch first", "stale info", "failed to update ref", "cannot lock ref", "incorrect old")


class Remote:
    """One remote branch of the vault's repository, as ``[remote]`` names it."""

    def __init__(self, git: Git, name: str, branch: str) -> None:
        self.git = git
        self.name = name
        self.branch = branch
        self.ref = f"{FETCHED}/{name}/{branch}"

    @property
    def label(self) -> str:
        return f"{self.name}/{self.branch}"

    def url(self, push: bool = False) -> str:
        try:
            return self.git.text("remote", "get-url", *(["--push"] if push else []), self.name).strip()
        except GitFailed:
            raise Unreachable(
                f"the vault repository has no remote named {self.name!r}; add it with "
                f"`git -C {self.git.root} remote add {self.name} URL` or fix [remote] name in the config"
            ) from None

    def _network(self, *args: str, timeout: float = NETWORK_SECONDS) -> subprocess.CompletedProcess[str]:
        """A git command that talks to the remote: never prompts, never hangs longer than NETWORK_SECONDS."""
        try:
            return subprocess.run(
                ["git", *args],
                cwd=self.git.root,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                env=network_env(self.git.root),
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise Unreachable(f"git {args[0]} got no answer from {self.label} in {timeout:g} s") from None

    def fetch(self) -> str | None:
        """Fetch the branch into vaultsync's ref; its commit, or None when the remote has no such branch yet."""
        url = self.url()
        self._drop_own_lock()
        run = self._network("fetch", "--quiet", "--no-tags", url, f"+refs/heads/{self.branch}:{self.ref}")
        if run.returncode != 0:
            if ABSENT_BRANCH in run.stderr:
                return None
            raise Unreachable(f"fetch from {self.label} failed: {_said(run.stderr)}")
        return self.fetched()

    def probe(self) -> None:
        """Ask the remote for its branch without fetching anything (``doctor``); Unreachable says why not."""
        run = self._network("ls-remote", "--heads", self.url(), self.branch, timeout=PROBE_SECONDS)
        if run.returncode != 0:
            raise Unreachable(f"{self.label} cannot be reached: {_said(run.stderr)}")

    def _drop_own_lock(self) -> None:
        lock = self.git.git_dir / (self.ref + ".lock")
        lock.unlink(missing_ok=True)  # only passes under the run lock write this ref: a lock is a killed one's

    def fetched(self) -> str | None:
        """What the last fetch (or push) saw on the remote branch, without asking the network."""
        try:
            return self.git.text("rev-parse", "--verify", "--quiet", f"{self.ref}^{{commit}}").strip() or None
        except GitFailed:
            return None

    def counts(self, head: str | None) -> tuple[int, int]:
        """(commits of ``head`` the remote lacks, commits of the remote ``head`` lacks), per the last fetch."""
        theirs = self.fetched()
        if head is None:
            return 0, 0 if theirs is None else int(self.git.text("rev-list", "--count", theirs).strip())
        if theirs is None:
            return int(self.git.text("rev-list", "--count", head).strip()), 0
        ahead, behind = self.git.text("rev-list", "--left-right", "--count", f"{head}...{theirs}").split()
        return int(ahead), int(behind)

    def contains(self, older: str, newer: str) -> bool:
        """Whether ``older`` is ``newer`` or one of its ancestors."""
        try:
            self.git.text("merge-base", "--is-ancestor", older, newer)
        except GitFailed:
            return False
        return True

    def merge_tree(self, ours: str, theirs: str) -> Merged:
        """The merged tree of two commits, and the paths that clashed, computed without a work tree or index."""
        if git_version()[:2] < MERGE_TREE_GIT_MIN:
            raise GitFailed(
                ["git", "merge-tree"],
                f"git {'.'.join(map(str, git_version()))} cannot merge without a work tree; "
                "vaultsync needs git 2.38 or newer to merge the remote's commits",
            )
        run = subprocess.run(
            ["git", "merge-tree", "--write-tree", "-z", ours, theirs], cwd=self.git.root, capture_output=True
        )
        if run.returncode not in (0, 1):
            raise GitFailed(["git", "merge-tree"], run.stderr.decode(errors="replace"))
        records = run.stdout.split(b"\0")
        tree = records[0].decode()
        stages: dict[str, dict[str, Entry]] = {}
        for record in records[1:]:
            if not record:
                break  # the messages follow an empty record
            info, _, path = record.partition(b"\t")
            mode, oid, stage = info.decode().split(" ")
            stages.setdefault(path.decode("utf-8", "surrogateescape"), {})[stage] = (mode, oid)
        clashes = [Clash(path, found.get("2"), found.get("3")) for path, found in sorted(stages.items())]
        return Merged(tree, clashes)

    def resolved(self, tree: str, entries: dict[str, Entry | None]) -> str:
        """``tree`` with ``entries`` set (None: removed), built on a private index no other program uses."""
        index = self.git.git_dir / MERGE_INDEX
        index.with_name(index.name + ".lock").unlink(missing_ok=True)  # a killed pass's; only passes use it
        private = {"GIT_INDEX_FILE": str(index)}
        try:
            self.git.text("read-tree", tree, env=private)
            lines = "".join(
                f"{entry[0]} {entry[1]}\t{path}\0" if entry else f"0 {'0' * 40}\t{path}\0"
                for path, entry in sorted(entries.items())
            )
            self.git.text("update-index", "-z", "--index-info", stdin=lines.encode(), env=private)
            return self.git.text("write-tree", env=private).strip()
        finally:
            index.unlink(missing_ok=True)

    def commit_merge(self, tree: str, parents: list[str], message: str, author: Author) -> str:
        ident = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": author.name,
            "GIT_COMMITTER_EMAIL": author.email,
        }
        args = [arg for parent in parents for arg in ("-p", parent)]
        return self.git.text("commit-tree", tree, *args, stdin=message.encode(), env=ident).strip()

    def move_head(self, new: str, old: str) -> bool:
        """HEAD from ``old`` to ``new``, only if it still is ``old``; False when someone committed meanwhile."""
        try:
            self.git.text("update-ref", "-m", f"vaultsync: merge {self.label}", "HEAD", new, old)
        except GitFailed:
            return False
        return True

    def unpushed_blobs(self, head: str) -> Iterator[tuple[str, bytes]]:
        """(path, content) of every file version in ``head``'s history that the remote does not hold yet."""
        theirs = self.fetched()
        listing = self.git.text("rev-list", "--objects", head, *(["--not", theirs] if theirs else []))
        named = [line.split(" ", 1) for line in listing.splitlines() if " " in line]  # commits have no path
        for start in range(0, len(named), SCAN_CHUNK):
            chunk = named[start : start + SCAN_CHUNK]
            query = "".join(f"{oid}\n" for oid, _ in chunk).encode()
            found = batch_objects(self.git.bytes("cat-file", "--batch", stdin=query))
            for (_, path), got in zip(chunk, found, strict=True):
                if got is not None and got[1] == b"blob":
                    yield path, got[2]

    def push(self, sha: str) -> Pushed:
        """Push ``sha`` to the branch, as a fast-forward only: the remote's history never loses a commit.

        Pushed(rejected=True) when the branch moved on the remote; PushRefused when the remote declined it."""
        url = self.url(push=True)
        run = self._network("push", "--porcelain", url, f"{sha}:refs/heads/{self.branch}")
        refused = [line for line in run.stdout.splitlines() if line.startswith("!\t")]
        if run.returncode == 0 and not refused:
            self._drop_own_lock()
            self.git.text("update-ref", self.ref, sha)
            return Pushed(True)
        if not refused:
            return Pushed(False, why=f"push to {self.label} failed: {_said(run.stderr)}")
        summary = refused[0].split("\t")[-1]  # "[rejected] (non-fast-forward)", "[remote rejected] (hook declined)"
        reason = summary.partition("(")[2].removesuffix(")") or summary
        if reason.startswith(MOVED):
            return Pushed(False, rejected=True, why=redact(f"push to {self.label} refused: {summary}"))
        raise PushRefused(self.label, self.branch, redact(reason), _remote_said(run.stderr))


def network_env(root: Path) -> dict[str, str]:
    """The environment of a command that reaches the remote: no prompts, git's messages in English (they are
    read to tell an absent branch from an unreachable remote), SSH in batch mode unless the person chose
    their own SSH command."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C"}
    if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
        chosen = subprocess.run(["git", "config", "core.sshCommand"], cwd=root, capture_output=True, text=True)
        if chosen.returncode != 0:
            env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o ConnectTimeout=30"
    return env


def add_remote(git: Git, name: str, url: str) -> bool:
    """Point ``name`` at ``url`` in the vault's repository; False when it already points there. A different
    URL already there is an error: changing where memory goes is the person's call."""
    try:
        current = git.text("remote", "get-url", name).strip()
    except GitFailed:
        git.text("remote", "add", name, url)
        return True
    if current != url:
        raise GitFailed(["git", "remote", "add"], f"remote {name!r} already points elsewhere ({redact(current)})")
    return False


def clone(url: str, dest: Path, name: str, branch: str) -> None:
    """Clone ``url`` into ``dest`` (absent or empty) with the remote called ``name``, on ``branch``.

    An empty remote (a new bare repository) gives an empty clone, whose first commit will be on ``branch``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(
        ["git", "clone", "--quiet", "--origin", name, "--", url, str(dest)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=network_env(dest.parent),
        timeout=NETWORK_SECONDS,
    )
    if run.returncode != 0:
        raise Unreachable(f"clone failed: {_said(run.stderr)}")
    git = Git(dest, dest / ".git")
    try:
        git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except GitFailed:  # nothing there yet: make the first commit land on the configured branch
        git.text("symbolic-ref", "HEAD", f"refs/heads/{branch}")
        return
    current = git.text("symbolic-ref", "--short", "HEAD").strip()
    if current != branch:
        git.text("checkout", "--quiet", branch)
