"""Telling a disk that refuses writes from a fault: full (or over a quota, or a file-size limit) or read-only (a
mounted snapshot, a permissions mistake), the failures of the world a person fixes, not vaultsync.

They show up in many shapes: an ``OSError`` from a write, SQLite's "database or disk is full" or "readonly
database", git's "No space left on device" in the message of a failed git command. Every write vaultsync makes
goes through a temp file moved into place and the base is saved last, so a pass stopped by any of them leaves
each file whole, and the next pass, once the disk takes writes again, finishes the work. The faces say so in one
line (``vaultsync.system.faults``) instead of a crash report.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
SQLITE_FULL, SQLITE_READONLY = 13, 8
# What git and SQLite print when a write fails for room: their errors carry text rather than an errno.
FULL_WORDS = ("No space left on device", "Disk quota exceeded", "File too large", "Out of diskspace", "disk is full")
READ_ONLY_WORDS = ("Read-only file system", "readonly database")


def writable(folder: Path) -> bool:
    """Whether files can be made in ``folder`` (or, while it does not exist yet, in its nearest existing parent).

    ``os.access`` asks the kernel, which answers for a read-only mount even to root."""
    folder = folder.absolute()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path(folder.anchor))
    return os.access(existing, os.W_OK)


def full(exc: BaseException) -> bool:
    """Whether ``exc`` is a write the disk refused for room."""
    return _matches(exc, FULL_ERRNOS, SQLITE_FULL, FULL_WORDS)


def read_only(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused because the disk or the folder does not take writes."""
    if isinstance(exc, PermissionError) and exc.filename is None:
        return False  # a permission refused to a process (a signal, a socket), not a file's
    return _matches(exc, READ_ONLY_ERRNOS, SQLITE_READONLY, READ_ONLY_WORDS)


def _matches(exc: BaseException, errnos: frozenset[int], sqlite_code: int, words: tuple[str, ...]) -> bool:
    if isinstance(exc, OSError) and exc.errno in errnos:
        return True
    if getattr(exc, "sqlite_errorcode", None) == sqlite_code:  # sqlite3.Error's; importing sqlite3 costs a pass
        return True
    return any(word in str(exc) for word in words)


def why(exc: BaseException, words: tuple[str, ...]) -> str:
    """The system's own words for the refusal, as a person would search for them."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return next((word for word in words if word in str(exc)), "refused")


def mount_of(path: Path) -> Path:
    """The mount point of the file system holding ``path``: what a person frees space on or remounts."""
    path = path.absolute()
    return next((p for p in (path, *path.parents) if os.path.ismount(p)), Path(path.anchor))
