"""The snapshot index: a private git index (``<vault>/.vaultsync/snapshot.index``) holding, for every note the
last settled pass read or wrote, the blob of exactly those bytes.

``git status`` against it lists what changed since that pass, with git's own stat cache and its racily-clean
re-check, which is how an hourly pass with nothing to do costs about what git pays to look at the vault. It
starts as a copy of the repository's index (whose stat data is fresh for everything just committed), corrected to
the expected blobs: an entry whose blob differs loses its stat data, so git re-reads that file instead of
trusting it. Only this module runs git on it; ``engine/quick.py`` decides what goes in.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from vaultsync.system.fs import digest

ZERO_OID = "0" * 40
PATHS_PER_CALL = 500  # paths given to one git command line, well under any system's argument limit
COARSE_CLOCK_NS = 20_000_000  # file times lag the wall clock by up to a timer tick
# Entries hashed from disk with their stat data, and no object written: a note held back for a secret, or any
# note of the person's, must not become a blob in .git/objects, where every copy of the repository carries it.
# The snapshot index only compares; nothing ever reads a blob back from it.
HASH_ONLY = ("update-index", "--add", "--info-only")
STATUS_ARGS = ("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames")


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, without asking git."""
    return digest(b"blob %d\0" % len(data) + data)


def status_records(out: bytes) -> Iterator[tuple[bytes, str]]:
    """(two-letter state, path) of each record of ``git status --porcelain=v1 -z`` output."""
    for record in out.split(b"\0"):
        if record:
            yield record[:2], record[3:].decode("utf-8", "surrogateescape")


def entries(listing: bytes) -> Iterator[tuple[str, str]]:
    """(path, blob id) of each record of ``ls-files --stage -z`` output, one at a time."""
    start = 0
    while (end := listing.find(b"\0", start)) != -1:
        meta, _, path = listing[start:end].decode("utf-8", "surrogateescape").partition("\t")
        start = end + 1
        if path:
            yield path, meta.split(" ")[1]


class SnapshotIndex:
    """git commands on the vault with the snapshot index in place of the repository's own."""

    def __init__(self, vault: Path, path: Path) -> None:
        self.vault = vault
        self.path = path

    def exists(self) -> bool:
        return self.path.exists()

    def start_status(self) -> subprocess.Popen[bytes] | None:
        """``git status`` against the index, started and left running; None when git cannot start.

        Looking must not write: a pass that stops or finds nothing leaves every file as it was.
        """
        env = {**os.environ, "GIT_INDEX_FILE": str(self.path), "GIT_OPTIONAL_LOCKS": "0"}
        try:
            return subprocess.Popen(
                ["git", *STATUS_ARGS], cwd=self.vault, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            return None

    def git(self, *args: str, stdin: bytes | None = None, private: bool = True) -> bytes | None:
        """git on the snapshot index (``private``) or on the repository's own; None when it failed."""
        env = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}
        if private:
            env["GIT_INDEX_FILE"] = str(self.path)
        try:
            run = subprocess.run(["git", *args], cwd=self.vault, input=stdin, capture_output=True, env=env)
        except OSError:
            return None
        return run.stdout if run.returncode == 0 else None

    def indexed(self, paths: list[str] | None = None) -> dict[str, str] | None:
        """Path -> blob id of every entry, or of those at ``paths``."""
        if paths is None:
            listing = self.git("ls-files", "--stage", "-z")
        else:
            chunks = [paths[i : i + PATHS_PER_CALL] for i in range(0, len(paths), PATHS_PER_CALL)]
            parts = [self.git("--literal-pathspecs", "ls-files", "--stage", "-z", "--", *chunk) for chunk in chunks]
            listing = None if None in parts else b"".join(p for p in parts if p)
        return None if listing is None else dict(entries(listing))

    def refresh(self) -> int:
        """Record stat data in the index; returns when the refresh started (ns).

        Exit status 1 only says some file differs from its entry, which the next git status reports anyway.
        """
        started = time.time_ns()
        self.git("update-index", "-q", "--refresh")
        return started

    def suspects(self, expected: Mapping[str, str], refreshed_ns: int) -> dict[str, str]:
        """Notes git could take for unchanged when they are not: changed in the second the index was refreshed.

        git compares stat times in whole seconds, and its racily-clean check looks at mtime only, so a same-size
        edit that also restores the mtime within that second would pass for clean. Quick checks hash these few
        notes themselves. File times come from a coarse clock that may lag by a tick, hence the margin.
        """
        cutoff = refreshed_ns // 1_000_000_000 * 1_000_000_000 - COARSE_CLOCK_NS
        root = f"{self.vault}/"
        found = {}
        for path, sha in expected.items():
            try:
                st = os.lstat(root + path)
            except OSError:
                continue  # gone already: git status shows it
            if st.st_ctime_ns >= cutoff or st.st_mtime_ns >= cutoff:
                found[path] = sha
        return found

    def write(self, expected: Mapping[str, str], left_alone: list[str]) -> bool:
        """Make the index hold ``expected`` (path -> blob id) plus ``left_alone`` as they are now."""
        self.path.with_name(self.path.name + ".lock").unlink(missing_ok=True)  # only vaultsync uses it, locked
        if (self.git("rev-parse", "--show-object-format") or b"").strip() != b"sha1":
            return False
        # Start from the repository's index: its stat data is fresh for everything just committed. copy2 keeps
        # the file's mtime, which git's racily-clean check compares entries against.
        where = (self.git("rev-parse", "--git-path", "index", private=False) or b"").decode().strip()
        import shutil  # with bz2 and lzma, about 8 ms of a cold start: only a pass that records a snapshot needs it

        try:
            shutil.copy2(self.vault / (where or ".git/index"), self.path)
        except OSError:
            self.path.unlink(missing_ok=True)
        listing = self.git("ls-files", "--stage", "-z") if self.path.exists() else b""
        if listing is None:
            return False
        # Compared entry by entry as git lists them: at 200k notes a dict of the listing would double the memory
        # a first import needs.
        keep = set(left_alone)
        lines: list[str] = []
        found = 0
        kept: set[str] = set()
        for path, sha in entries(listing):
            want = expected.get(path)
            if want is None and path in keep:
                kept.add(path)
            elif want is None:
                lines.append(f"0 {ZERO_OID}\t{path}\0")
            else:
                found += 1
                if want != sha:
                    lines.append(f"100644 {want}\t{path}\0")
        if found < len(expected):
            held = {path for path, _ in entries(listing)}
            lines += [f"100644 {sha}\t{path}\0" for path, sha in expected.items() if path not in held]
        if lines and self.git("update-index", "-z", "--index-info", stdin="".join(lines).encode()) is None:
            return False
        added = "".join(f"{path}\0" for path in left_alone if path not in kept).encode()
        return not added or self.git(*HASH_ONLY, "-z", "--stdin", stdin=added) is not None

    def patch(
        self, fresh: set[str], gone: list[str], expected: Mapping[str, str], old_suspects: Mapping[str, str]
    ) -> dict[str, str] | None:
        """Bring the index from the last settled pass up to a scoped one; returns the suspects.

        Only the notes the pass read or wrote and the copies it left alone (``fresh``) and those gone since
        change. Each fresh one is hashed from disk with its stat data (``HASH_ONLY``); one whose blob is
        not what the pass expects (saved again since) is set to the expected blob without stat data, so the next
        quick check sees it changed. Every other entry keeps the stat data git recorded before, so its suspects
        stay the old ones.
        """
        started = time.time_ns()
        present = [p for p in sorted(fresh) if os.path.lexists(self.vault / p)]
        listing = "".join(f"{path}\0" for path in present).encode()
        if listing and self.git(*HASH_ONLY, "-z", "--stdin", stdin=listing) is None:
            return None
        held = self.indexed(present) if present else {}
        if held is None:
            return None
        lines = [f"0 {ZERO_OID}\t{path}\0" for path in gone]  # not among the fresh paths, so in any order
        lines += [f"100644 {sha}\t{path}\0" for path, sha in expected.items() if held.get(path) != sha]
        if lines and self.git("update-index", "-z", "--index-info", stdin="".join(lines).encode()) is None:
            return None
        kept = {p: sha for p, sha in old_suspects.items() if p not in fresh and p not in gone}
        return kept | self.suspects({p: sha for p, sha in expected.items() if p in held}, started)


class IndexPatch:
    """``SnapshotIndex.patch`` on a thread, started once a scoped pass has written its notes.

    It reads and rewrites the whole snapshot index twice and touches nothing the pass's commits touch (they use
    the repository's own index), so it runs while they do. Only a settled pass records the snapshot that trusts
    this index; an unsettled one leaves none, and the next pass, a full one, builds the index afresh. ``result``
    waits for it: every pass does before it ends, so that no later quick check (in watch mode, in the same
    process) reads the index while it is being written.
    """

    def __init__(
        self,
        index: SnapshotIndex,
        fresh: Iterable[str],
        gone: Iterable[str],
        expected: Mapping[str, str],
        old_suspects: Mapping[str, str],
    ) -> None:
        self._outcome: list[dict[str, str] | BaseException | None] = []
        args = (index, set(fresh), sorted(gone), expected, old_suspects)
        self._thread = threading.Thread(target=self._run, args=args, name="vaultsync-snapshot")
        self._thread.start()

    def _run(
        self,
        index: SnapshotIndex,
        fresh: set[str],
        gone: list[str],
        expected: Mapping[str, str],
        old_suspects: Mapping[str, str],
    ) -> None:
        try:
            self._outcome.append(index.patch(fresh, gone, expected, old_suspects))
        except BaseException as exc:  # handed to the pass, which waits for this thread
            self._outcome.append(exc)

    def result(self) -> dict[str, str] | None:
        """The notes the next quick check hashes itself (see ``SnapshotIndex.suspects``); None when git refused."""
        self._thread.join()
        outcome = self._outcome[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome
