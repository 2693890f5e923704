"""The snapshot's two uses: the quick check that lets a pass with nothing to do stop after one ``git status``
and a walk of the memory side, and the record a settled pass leaves for it.

The snapshot itself is ``state/snapshot.py`` (memory stats, suspects, open conflicts, standing problems) and
``git/index.py`` (the notes, in a private git index); this module runs the check against both and writes both.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vaultsync.config import Config
from vaultsync.git.index import COARSE_CLOCK_NS, IndexPatch, SnapshotIndex, blob_id, status_records
from vaultsync.model import Problem
from vaultsync.state import snapshot
from vaultsync.state.files import StateFiles
from vaultsync.state.snapshot import QuickFindings
from vaultsync.state.stat_walk import MemoryWalk, aged_stat, walk_named
from vaultsync.system.fs import digest
from vaultsync.vault.layout import CONFLICT_MARK, VaultLayout

SUSPECTS_MAX = 2000  # more notes than this to hash on every quick check: better one more full pass


def snapshot_index(cfg: Config) -> SnapshotIndex:
    return SnapshotIndex(cfg.vault, StateFiles(cfg.state_dir).snapshot_index)


class QuickCheck:
    """The test "did anything change since the last settled pass?", run while the memory side is walked.

    ``git status`` on the vault is the slow half, so it starts first, before the snapshot is even read, and
    runs beside the rest: reading the snapshot, the memory walk. A snapshot found unusable stops it again.
    """

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.saved: dict[str, Any] | None = None
        self.status: subprocess.Popen[bytes] | None = None
        index = snapshot_index(cfg)
        if not index.exists():
            return
        self.status = index.start_status()
        if self.status is None:
            return
        self.saved = snapshot.load(cfg, StateFiles(cfg.state_dir))
        if self.saved is None:
            self._stop()

    def _stop(self) -> None:
        """End a ``git status`` whose answer is of no use (the snapshot is not), so no full pass runs beside it."""
        if self.status is not None:
            self.status.kill()
            self.status.communicate()
            self.status = None

    def named_walk(self, keys: frozenset[str]) -> MemoryWalk | None:
        """A walk of the memory files ``keys`` only, the snapshot's entries standing for the rest; None when
        there is no usable snapshot to take them from, or a key is no file a walk lists (``walk_named``)."""
        if self.saved is None or self.status is None:
            return None
        return walk_named(self.cfg.workspace, self.cfg.life, keys, self.saved["memory"])

    def changes(self, walk: MemoryWalk) -> QuickFindings | None:
        """What changed since the last settled pass; None when that cannot be known (a full pass must run)."""
        if self.saved is None or self.status is None:
            return None
        memory = snapshot.changed_memory(self.saved["memory"], walk, self.cfg)
        seen = QuickFindings(self.saved, memory, _changed_notes(self.saved["suspects"], self.cfg))
        out, _ = self.status.communicate()
        if self.status.returncode != 0:
            return None
        places = Places(self.cfg)
        for state, path in status_records(out):
            # The first column compares the snapshot with HEAD, which does not matter; the second is the worktree.
            if (state in (b"??", b"!!") or state[1:2] != b" ") and places.read_by_a_pass(path):
                (seen.odd if state == b"!!" else seen.vault).add(path)
        return seen


def _changed_notes(suspects: dict[str, Any], cfg: Config) -> set[str]:
    changed = set()
    for path, sha in suspects.items():
        try:
            data = (cfg.vault / path).read_bytes()
        except OSError:
            data = None
        if data is None or blob_id(data) != sha:
            changed.add(path)
    return changed


class Places:
    """Which vault paths a full pass reads: notes under the PARA folders, and daily notes in Daily and its date
    sub-folders."""

    def __init__(self, cfg: Config) -> None:
        self.para = tuple(cfg.layout.para_folders().values())
        self.layout = VaultLayout(cfg.layout)
        self.daily = self.layout.daily_dir

    def read_by_a_pass(self, path: str) -> bool:
        folder = path.endswith("/")
        path = path.rstrip("/")
        if any(part.startswith(".") for part in path.split("/")):
            return False
        for top in self.para:
            if path == top or path.startswith(f"{top}/"):
                return folder or path.endswith(".md")
            if folder and top.startswith(f"{path}/"):
                return True
        if folder:
            return path == self.daily or self.daily.startswith(f"{path}/") or self.layout.in_daily(path)
        parent, _, name = path.rpartition("/")
        if not name.endswith(".md") or not self.layout.in_daily(parent):
            return False
        if self.daily and parent == self.daily:
            return True
        return self.layout.daily_of_note(path) is not None or CONFLICT_MARK in name


@dataclass
class SnapshotKept:
    """What a scoped pass keeps of the snapshot it started from: everything it did not read."""

    seen: QuickFindings
    read: Callable[[str], bool]  # vault paths the scoped pass read (or would have): their old entries go
    before: set[str]  # the notes of the units in scope, as the snapshot knew them
    renamed: bool = False  # an entity in scope was created or renamed: the recorded names change


@dataclass
class SnapshotUpdate:
    """A scoped pass's snapshot index being brought up to date (``IndexPatch``), and what it carries over."""

    carry: SnapshotKept
    thread: IndexPatch

    @classmethod
    def start(
        cls, cfg: Config, carry: SnapshotKept, expected: Mapping[str, str], left_alone: Iterable[str]
    ) -> SnapshotUpdate:
        fresh = set(expected) | set(left_alone)
        gone = (carry.before | carry.seen.vault) - fresh
        old: dict[str, str] = carry.seen.saved.get("suspects", {})
        return cls(carry, IndexPatch(snapshot_index(cfg), fresh, gone, expected, old))

    def suspects(self) -> dict[str, str] | None:
        return self.thread.result()


def record(
    cfg: Config,
    walk: MemoryWalk,
    memory_written: Mapping[str, bytes | None],
    memory_read: Mapping[str, bytes],
    notes: Mapping[str, str],
    left_alone: Iterable[str],
    conflicts: Iterable[str],
    entities: Mapping[str, Any],
    standing: Iterable[Problem] = (),
    patch: SnapshotUpdate | None = None,
) -> None:
    """Write the snapshot of a settled pass.

    ``memory_written``: memory files the pass wrote (bytes) or deleted (None), keyed like the walk.
    ``memory_read``: memory files as the scan read them; one too fresh for its stat to be trusted is recorded
    by the hash of those bytes instead.
    ``notes``: the blob id (``blob_id``) of every vault note as the pass leaves it (what the scan read, then
    the pass's writes; deletions removed). ``left_alone``: notes in synced places the pass does not sync
    (conflict copies, foreign notes); their content does not matter to a pass, so git hashes them as they are.
    ``entities``: each entity's display name and aliases, which a scoped pass needs for the entities it does
    not read. ``standing``: the pass's standing problems (``Problem.standing``), for the quick check to say
    again. ``patch``: for a scoped pass, its snapshot index brought up to date with ``notes`` and
    ``left_alone``, and its ``SnapshotKept``: which the notes and memory files it read were; every other entry of the
    old snapshot is still true (the quick check just showed it unchanged) and is kept.
    """
    files = StateFiles(cfg.state_dir)
    snapshot.forget(files)
    entries = _memory_entries(cfg, walk, memory_written, memory_read, patch)
    token = os.urandom(8).hex()
    if patch is not None:
        suspects = patch.suspects()
        if patch.carry.renamed:  # an entity created or renamed: the names a scoped pass starts from change with it
            snapshot.save_entities(files, token, dict(entities))
        else:
            token = str(patch.carry.seen.saved.get("token"))
    else:
        suspects = _index_notes(cfg, notes, left_alone)
        if suspects is None:
            return
        snapshot.save_entities(files, token, dict(entities))
    if suspects is None or len(suspects) > SUSPECTS_MAX:
        return  # still changing under our feet: the next pass runs in full
    snapshot.save(
        cfg,
        files,
        {
            "token": token,
            "suspects": suspects,
            "conflicts": sorted(conflicts),
            "problems": [[p.path, p.message, str(p.severity)] for p in standing],
            "memory": entries,
        },
    )


def _memory_entries(
    cfg: Config,
    walk: MemoryWalk,
    memory_written: Mapping[str, bytes | None],
    memory_read: Mapping[str, bytes],
    patch: SnapshotUpdate | None,
) -> dict[str, Any]:
    """The snapshot's memory entries: the walk's stats; for a file the walk could not trust by its stat, the old
    entry (a scoped pass's quick check found it unchanged by its hash) or the hash of what the scan read; then
    the pass's own writes by their hash, its deletions dropped."""
    entries = dict(walk.entries)
    if patch is not None:
        saved = patch.carry.seen.saved["memory"]
        for key, entry in walk.entries.items():
            if entry is None and key not in patch.carry.seen.memory:
                entries[key] = saved[key]  # checked by its hash in this pass's quick check
    for key, entry in walk.entries.items():
        if entry is None and key in memory_read:
            root, _, rel = key.partition("/")
            path = (cfg.workspace if root == "workspace" else cfg.life) / rel
            data = memory_read[key]
            entries[key] = aged_stat(path, data) or ["sha1", digest(data)]
    for key, data in memory_written.items():
        if data is None:
            entries.pop(key, None)
        else:
            entries[key] = ["sha1", digest(data)]
    return entries


def _index_notes(cfg: Config, notes: Mapping[str, str], left_alone: Iterable[str]) -> dict[str, str] | None:
    """Write the snapshot index of a full pass; the notes a quick check must hash itself (``suspects``), or None
    when git could not write it (no snapshot is recorded then)."""
    index = snapshot_index(cfg)
    if not index.write(notes, sorted(set(left_alone))):
        return None
    suspects = index.suspects(notes, index.refresh())
    if len(suspects) > SUSPECTS_MAX:
        # A first import wrote every note in this second. Once it is past, a refresh records stat data git
        # can trust, instead of leaving thousands of notes to hash on every quick check.
        time.sleep(1.0 - time.time() % 1.0 + COARSE_CLOCK_NS / 1e9)
        suspects = index.suspects(notes, index.refresh())
    return suspects
