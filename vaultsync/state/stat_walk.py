"""The memory side's stat walk: taken before a pass reads anything, it is what the quick check compares with the
last settled pass's, and what that pass recorded for the next one."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.model import USERS_DIR, WORKSPACE_FILES
from vaultsync.system.users import user_files

RACY_NS = 2_000_000_000  # coarser than any file system's timestamps (FAT keeps 2 s)

Stat = list[int]
Entry = Stat | list[str] | None  # a stat, ["sha1", hex digest] of what the pass wrote, or None: unknown


@dataclass
class MemoryWalk:
    """Every file a memory scan may read, with its stat at the start of the pass."""

    started_ns: int
    entries: dict[str, Entry] = field(default_factory=dict)  # "workspace/..." or "life/..." -> entry
    # A walk of these files only (``walk_named``): every other entry is the last settled pass's, carried over.
    named: frozenset[str] | None = None

    @functools.cached_property
    def racy(self) -> set[str]:
        """The files too fresh for their stat to be trusted: a pass records them by the bytes it read."""
        return {key for key, entry in self.entries.items() if entry is None}


def walk_memory(workspace: Path, life: Path) -> MemoryWalk:
    """Stat what ``scan_memory`` reads (a superset: extra files only make a pass run when they change)."""
    walk = MemoryWalk(time.time_ns())
    for name in [*WORKSPACE_FILES, *user_files(workspace)]:
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


def walk_named(workspace: Path, life: Path, keys: Iterable[str], carried: Mapping[str, Entry]) -> MemoryWalk | None:
    """The walk as it would be if only the files ``keys`` names had changed since the snapshot ``carried``: their
    stats now, and the snapshot's entries for every other file.

    A caller that wrote one file (a memory write through the API, one ``items.json``) knows what it changed;
    statting that file costs nothing next to a walk of every memory folder. The walk is only as true as that
    claim for the files it did not look at, which is why a pass records their old entries unchanged: a file
    someone else changed meanwhile still differs from its entry, and the next full walk finds it. None when a
    key is not a file the full walk would list (a folder, a name below a link or a hidden folder, a path
    outside the two roots): the caller walks everything instead.
    """
    names = frozenset(keys)
    walk = MemoryWalk(time.time_ns(), dict(carried), names)
    for key in names:
        path = _walked_path(workspace, life, key)
        if path is None:
            return None
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            walk.entries.pop(key, None)
            continue
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            return None
        walk.entries[key] = _entry(st, walk.started_ns)
    return walk


def _walked_path(workspace: Path, life: Path, key: str) -> Path | None:
    """Where the file ``key`` names is, when ``walk_memory`` would list it there; None otherwise."""
    rest = key.removeprefix("workspace/")
    if rest in WORKSPACE_FILES or (rest.startswith(f"{USERS_DIR}/") and rest in user_files(workspace)):
        return workspace / rest
    if key.startswith("workspace/memory/"):
        top, parts = workspace / "memory", key.removeprefix("workspace/memory/").split("/")
    elif key.startswith("life/"):
        top, parts = life, key.removeprefix("life/").split("/")
    else:
        return None
    if any(not part or part.startswith(".") for part in parts):
        return None
    # The walk enters a root even through a link, but no folder below one that is a link or not a folder.
    folder = top
    for part in parts[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        except FileNotFoundError:
            return top.joinpath(*parts)  # gone with its folder: not in the walk either
        except OSError:
            return None
    return folder / parts[-1]
