"""What every face says when the disk refuses a write: full, or read-only. One line naming the disk (or the file)
and the fix, the same from the command line and the HTTP API, instead of a crash report."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vaultsync.system.disk import FULL_WORDS, READ_ONLY_WORDS, full, mount_of, read_only, why

AGAIN = "every file is whole and nothing is half-written: {fix}, then run it again (the next pass finishes the work)"


def refused(exc: BaseException, places: Sequence[Path] = ()) -> str | None:
    """The line for ``exc`` when it (or what caused it) is a disk that is full or read-only, else None.

    The disk is the one holding the file the failed write named, else the one (or ones) holding ``places``. The
    first failure of the chain is the one named: failing to record a failed run has the same cause.
    """
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    for cause in reversed(chain):
        if not (full(cause) or read_only(cause)):
            continue
        where = getattr(cause, "filename", None)
        named = [Path(os.fspath(where))] if isinstance(where, str | os.PathLike) else list(places)
        mounts = dict.fromkeys(str(mount_of(path)) for path in named)
        disk = f"the disk mounted at {' or '.join(mounts)}" if mounts else "the disk"
        if full(cause):
            return f"{disk} is full ({why(cause, FULL_WORDS)}); " + AGAIN.format(fix="free some space")
        target = f"cannot write {named[0]}" if where else "cannot write to the vault or the memory"
        return (
            f"{target} ({why(cause, READ_ONLY_WORDS)}): {disk} or the folder is read-only; status, recall and log "
            "still work; " + AGAIN.format(fix="make it writable (remount it read-write, or give write permission)")
        )
    return None
