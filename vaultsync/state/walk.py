"""The memory side's stat walk: taken before a pass reads anything, it is what the quick check compares with the
last settled pass's, and what that pass recorded for the next one."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

RACY_NS = 2_000_000_000  # coarser than any file system's timestamps (FAT keeps 2 s)

Stat = list[int]
Entry = Stat | list[str] | None  # a stat, ["sha1", hex digest] of what the pass wrote, or None: unknown


@dataclass
class MemoryWalk:
    """Every file a memory scan may read, with its stat at the start of the pass."""

    started_ns: int
    entries: dict[str, Entry] = field(default_factory=dict)  # "workspace/..." or "life/..." -> entry

    @functools.cached_property
    def racy(self) -> set[str]:
        """The files too fresh for their stat to be trusted: a pass records them by the bytes it read."""
        return {key for key, entry in self.entries.items() if entry is None}


def walk_memory(workspace: Path, life: Path) -> MemoryWalk:
    """Stat what ``scan_memory`` reads (a superset: extra files only make a pass run when they change)."""
    walk = MemoryWalk(time.time_ns())
    for name in ("MEMORY.md", "HEARTBEAT.md"):
        with contextlib.suppress(OSError):
            walk.entries[f"workspace/{name}"] = _entry(os.lstat(workspace / name), walk.started_ns)
    _walk(walk, "workspace/memory", workspace / "memory")
    _walk(walk, "life", life)
    return walk


def _entry(st: os.stat_result, started_ns: int) -> Entry:
    if st.st_mtime_ns >= started_ns - RACY_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _walk(walk: MemoryWalk, prefix: str, folder: Path | str) -> None:
    try:
        listing = os.scandir(folder)
    except OSError:
        return
    with listing:
        for item in listing:
            if item.name.startswith("."):
                continue
            key = f"{prefix}/{item.name}"
            if item.is_dir(follow_symlinks=False):
                _walk(walk, key, item.path)
            else:
                try:
                    walk.entries[key] = _entry(item.stat(follow_symlinks=False), walk.started_ns)
                except OSError:
                    walk.entries[key] = None


def aged_stat(path: Path, data: bytes) -> Stat | None:
    """The stat of a file the walk found too fresh to trust, if it is old enough now and still holds ``data``.

    A tree copied just before a pass (a restore, a move to a new machine, a benchmark) is too fresh almost
    everywhere; recorded by hash, every quick check until the next writing pass would read all of it again (at
    200k facts, 71 MB). Read between two equal stats, the bytes belong to that stat, as for any file the walk
    trusts.
    """
    try:
        before = os.lstat(path)
        if before.st_mtime_ns >= time.time_ns() - RACY_NS:
            return None
        same = path.read_bytes() == data
        after = os.lstat(path)
    except OSError:
        return None
    stat = _entry(before, time.time_ns())
    return stat if same and stat is not None and stat == _entry(after, time.time_ns()) else None
