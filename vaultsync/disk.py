"""Telling a disk that refuses writes from a fault: full (or over a quota, or a file-size limit) or read-only (a
mounted snapshot, a permissions mistake), the failures of the world a person fixes, not vaultsync.

They show up in many shapes: an ``OSError`` from a write, SQLite's "database or disk is full" or "readonly
database", git's "No space left on device" in the message of a failed git command. Every write vaultsync makes
goes through a temp file moved into place and the base is saved last, so a pass stopped by any of them leaves
each file whole, and the next pass, once the disk takes writes again, finishes the work. The faces say so in one
line instead of a crash report.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
SQLITE_FULL, SQLITE_READONLY = 13, 8
# What git and SQLite print when a write fails for room: their errors carry text rather than an errno.
FULL_WORDS = ("No space left on device", "Disk quota exceeded", "File too large", "Out of diskspace", "disk is full")
READ_ONLY_WORDS = ("Read-only file system", "readonly database")
AGAIN = "every file is whole and nothing is half-written: {fix}, then run it again (the next pass finishes the work)"


def writable(folder: Path) -> bool:
    """Whether files can be made in ``folder`` (or, while it does not exist yet, in its nearest existing parent).

    ``os.access`` asks the kernel, which answers for a read-only mount even to root."""
    folder = folder.absolute()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path(folder.anchor))
    return os.access(existing, os.W_OK)


def refused(exc: BaseException, places: Sequence[Path] = ()) -> str | None:
    """One line naming the disk, what it refused and the fix when ``exc`` (or what caused it) is a disk that is
    full or read-only, else None.

    The disk is the one holding the file the failed write named, else the one (or ones) holding ``places``. The
    first failure in the chain is the one named: a failure to record a failed run has the same cause.
    """
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    for cause in reversed(chain):
        full, read_only = _matches(cause, FULL_ERRNOS, SQLITE_FULL, FULL_WORDS), _read_only(cause)
        if not (full or read_only):
            continue
        where = getattr(cause, "filename", None)
        named = [Path(os.fspath(where))] if isinstance(where, str | os.PathLike) else list(places)
        if full:
            return f"the disk{_on(named)} is full ({_why(cause, FULL_WORDS)}); " + AGAIN.format(fix="free some space")
        target = f"cannot write {named[0]}" if len(named) == 1 and where else "cannot write to the vault or memory"
        return (
            f"{target} ({_why(cause, READ_ONLY_WORDS)}): the disk{_on(named)} or the folder is read-only; status, "
            "recall and log still work; "
            + AGAIN.format(fix="make it writable (remount it read-write, or give the folders write permission)")
        )
    return None


def _read_only(exc: BaseException) -> bool:
    if isinstance(exc, PermissionError) and exc.filename is None:
        return False  # a permission refused to a process (a signal, a socket), not a file's
    return _matches(exc, READ_ONLY_ERRNOS, SQLITE_READONLY, READ_ONLY_WORDS)


def _matches(exc: BaseException, errnos: frozenset[int], sqlite_code: int, words: tuple[str, ...]) -> bool:
    if isinstance(exc, OSError) and exc.errno in errnos:
        return True
    if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == sqlite_code:
        return True
    return any(word in str(exc) for word in words)


def _why(exc: BaseException, words: tuple[str, ...]) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return next((word for word in words if word in str(exc)), "refused")


def _on(paths: Sequence[Path]) -> str:
    """`` mounted at <folder>`` for the folders holding ``paths``."""
    mounts = dict.fromkeys(str(_mount(path)) for path in paths)
    return f" mounted at {' or '.join(mounts)}" if mounts else ""


def _mount(path: Path) -> Path:
    path = path.absolute()
    return next((p for p in (path, *path.parents) if os.path.ismount(p)), Path(path.anchor))
