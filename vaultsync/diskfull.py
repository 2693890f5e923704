"""Telling a full disk from a fault: the one failure of the world a person fixes by freeing space.

A full disk (or a quota, or a file-size limit) shows up in many shapes: an ``OSError`` from a write, SQLite's
"database or disk is full", git's "No space left on device" in the message of a failed git command. Every write
vaultsync makes goes through a temp file moved into place and the base is saved last, so a pass stopped by any
of them leaves each file whole, and the next pass, with space freed, finishes the work. The faces say so in one
line instead of a crash report.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
SQLITE_FULL = 13
# What git and SQLite print when a write fails for room: their errors carry text rather than an errno.
FULL_WORDS = ("No space left on device", "Disk quota exceeded", "File too large", "Out of diskspace", "disk is full")


def disk_full(exc: BaseException, places: Sequence[Path] = ()) -> str | None:
    """One line naming the disk and the fix when ``exc`` (or what caused it) is a full disk, else None.

    The disk is the one holding the file the failed write named, else the one (or ones) holding ``places``.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _full(current):
            where = getattr(current, "filename", None)
            named = [Path(os.fspath(where))] if isinstance(where, str | os.PathLike) else list(places)
            return (
                f"the disk{_on(named)} is full ({_why(current)}); every file is whole and nothing is "
                "half-written: free some space, then run it again (the next pass finishes the work)"
            )
        current = current.__cause__ or current.__context__
    return None


def _full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
        return True
    if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL:
        return True
    return any(words in str(exc) for words in FULL_WORDS)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return next((words for words in FULL_WORDS if words in str(exc)), "no space left")


def _on(paths: Sequence[Path]) -> str:
    """`` mounted at <folder>`` for the folders holding ``paths``."""
    mounts = dict.fromkeys(str(_mount(path)) for path in paths)
    return f" mounted at {' or '.join(mounts)}" if mounts else ""


def _mount(path: Path) -> Path:
    path = path.absolute()
    return next((p for p in (path, *path.parents) if os.path.ismount(p)), Path(path.anchor))
