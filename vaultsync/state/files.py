"""The state folder, ``<vault>/.vaultsync/``: every file vaultsync keeps there, named in one place.

Nothing here is memory: the folder can be deleted at the cost of one full pass (the base is rebuilt from both
sides agreeing, and the snapshot from that pass). It is git-ignored, and ``init`` keeps it out of both memory
roots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vaultsync.system.fs import atomic_write


@dataclass(frozen=True)
class StateFiles:
    root: Path

    @property
    def lock(self) -> Path:
        """The run lock: one pass at a time, whichever face started it."""
        return self.root / "lock"

    @property
    def base(self) -> Path:
        """The last synced state of every unit (``state/base.py``)."""
        return self.root / "base.sqlite"

    @property
    def snapshot(self) -> Path:
        """What the last settled pass saw, for the quick check (``state/snapshot.py``)."""
        return self.root / "snapshot.json"

    @property
    def snapshot_index(self) -> Path:
        """The private git index of the notes as the last settled pass left them (``git/index.py``)."""
        return self.root / "snapshot.index"

    @property
    def entities(self) -> Path:
        """Every entity's names as the last settled pass left them, for a scoped or batched pass."""
        return self.root / "snapshot-entities.json"

    @property
    def recall(self) -> Path:
        """The full-text index of the memory (``state/recall.py``), a cache rebuilt whenever it is missing."""
        return self.root / "recall.sqlite"

    @property
    def uncommitted(self) -> Path:
        """Vault notes a pass wrote whose agent commit has not happened yet (a killed or refused pass)."""
        return self.root / "uncommitted.json"

    @property
    def actors(self) -> Path:
        """Who made each memory change still waiting for its commit (``state/actors.py``)."""
        return self.root / "actors.json"

    @property
    def remote(self) -> Path:
        """The push record: since when commits wait for the remote, and why (``state/push_record.py``)."""
        return self.root / "remote.json"

    @property
    def merging(self) -> Path:
        """A merge from the remote whose work-tree update has not finished (``state/push_record.py``)."""
        return self.root / "merging.json"

    @property
    def extracted(self) -> Path:
        """Where ``vaultsync extract`` stopped in each daily note (``state/extracted.py``)."""
        return self.root / "extracted.json"

    @property
    def answers(self) -> Path:
        """The HTTP API's first answer to each ``Idempotency-Key``, kept a day (``state/answers.py``)."""
        return self.root / "answers.sqlite"

    @property
    def trashes(self) -> Path:
        """Every run's trash, each in a folder named for its time."""
        return self.root / "trash"

    def trash(self, stamp: str) -> Path:
        """Where a pass puts what it deletes or sets aside on the memory side, per run."""
        return self.trashes / stamp

    def uncommitted_notes(self) -> set[str]:
        """The notes listed as written but not committed; an unreadable list counts as none."""
        try:
            listed = json.loads(self.uncommitted.read_bytes())
        except (OSError, ValueError):
            return set()
        return {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()

    def list_uncommitted(self, paths: set[str]) -> None:
        """Record ``paths`` before writing them, so whichever pass next commits for the agent takes them all."""
        atomic_write(self.uncommitted, json.dumps(sorted(paths)).encode())

    def all_committed(self) -> None:
        self.uncommitted.unlink(missing_ok=True)
