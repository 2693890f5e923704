"""The record of every run (``.vaultsync/runs.json``): when each pass ran, how it ended and what it did, in a line.

``vaultsync status`` reads it to say when the last pass ran and to warn when the last one that ran to its end
is older than the schedule allows: a cron that silently stopped is the failure a person notices last. The file
holds the newest ``KEEP`` runs and is replaced atomically, checked against what was read, so two processes
recording at once (a watching pass and cron's pass meeting its lock) do not lose each other's run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultsync.errors import FileChanged
from vaultsync.system.fs import atomic_write, read_or_none

RUNS = "runs.json"
KEEP = 50
# Exit codes of a pass that ran to its end: conflicts, skipped files and a push left waiting included.
FINISHED = frozenset({0, 1, 5, 6, 7})


@dataclass(frozen=True)
class Run:
    at: str  # ISO 8601 with the UTC offset
    kind: str  # "sync", "watch" or "scheduled"
    exit_code: int
    summary: str
    held: list[dict[str, Any]] = field(default_factory=list)  # the changes the shrink guard held, as JSON

    @property
    def when(self) -> datetime:
        return datetime.fromisoformat(self.at)

    @property
    def finished(self) -> bool:
        return self.exit_code in FINISHED

    def line(self) -> str:
        return f"{self.at} ({self.kind}) exit {self.exit_code}: {self.summary}"


def now_stamp() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def history(state_dir: Path) -> list[Run]:
    """The recorded runs, oldest first; an unreadable record reads as none (it is rewritten by the next run)."""
    return _parse(read_or_none(state_dir / RUNS))


def _parse(data: bytes | None) -> list[Run]:
    if not data:
        return []
    try:
        return [Run(**item) for item in json.loads(data)["runs"]]
    except (ValueError, TypeError, KeyError):
        return []


def last(state_dir: Path) -> Run | None:
    found = history(state_dir)
    return found[-1] if found else None


def last_ok(state_dir: Path) -> Run | None:
    return next((run for run in reversed(history(state_dir)) if run.finished), None)


def record(state_dir: Path, run: Run) -> None:
    """Add ``run`` to the record; nothing when the vault itself is missing (a pass stopped for that creates none)."""
    if not state_dir.parent.is_dir():
        return
    state_dir.mkdir(exist_ok=True)
    path = state_dir / RUNS
    for _ in range(10):
        old = read_or_none(path)
        runs = [*_parse(old), run][-KEEP:]
        data = json.dumps({"runs": [asdict(r) for r in runs]}, ensure_ascii=False, indent=1).encode()
        try:
            atomic_write(path, data, old)
            return
        except FileChanged:
            continue  # another process recorded meanwhile: read again and add to theirs
