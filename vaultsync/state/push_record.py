"""What a pass keeps about the git remote in the state folder: the push record and the merge journal.

The push record (``remote.json``) says since when commits wait for the remote and why, so ``status`` can say
"3 commits ahead, waiting to push since ..." without reaching the network, and the first failure's time is
kept across the hourly passes that fail after it. The merge journal (``merging.json``) is written before HEAD
moves to a merge with the remote and removed once the work tree holds the merge: a pass killed in between
leaves notes that are older than HEAD, which the next pass would take for the person undoing the remote's
edits; the journal tells it to finish the update first.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write, read_or_none


@dataclass(frozen=True)
class Waiting:
    since: str  # ISO 8601, when a push first failed
    why: str


@dataclass(frozen=True)
class Journal:
    """HEAD moves from ``old`` to ``new``; the work tree follows for the paths that differ between them."""

    old: str
    new: str


def _load(data: bytes | None) -> dict[str, str]:
    try:
        found = json.loads(data or b"null")
    except ValueError:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}


def waiting(files: StateFiles) -> Waiting | None:
    """The push record; an unreadable one reads as none (the next failed push writes it again)."""
    found = _load(read_or_none(files.remote))
    return Waiting(found["since"], found.get("why", "")) if found.get("since") else None


def record_waiting(files: StateFiles, since: str, why: str) -> Waiting:
    """Keep the earliest time a push failed; the latest reason."""
    kept = waiting(files)
    record = Waiting(kept.since if kept else since, why)
    files.root.mkdir(parents=True, exist_ok=True)
    atomic_write(files.remote, json.dumps(asdict(record), ensure_ascii=False).encode())
    return record


def pushed(files: StateFiles) -> None:
    files.remote.unlink(missing_ok=True)


def journal(files: StateFiles) -> Journal | None:
    found = _load(read_or_none(files.merging))
    return Journal(found["old"], found["new"]) if found.get("old") and found.get("new") else None


def begin_merge(files: StateFiles, entry: Journal) -> None:
    files.root.mkdir(parents=True, exist_ok=True)
    atomic_write(files.merging, json.dumps(asdict(entry)).encode())


def merge_done(files: StateFiles) -> None:
    files.merging.unlink(missing_ok=True)
