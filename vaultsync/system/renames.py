"""The two renames ``os.replace`` cannot do: exchange two names, and name a file only where no file is.

Linux has both as flags of one system call, ``renameat2``, which Python does not wrap; reaching it through
libc is its own concern, apart from the writes in ``fs.py`` that decide when to swap. Where the system or
the file system has no such call, ``exchange`` says so and ``place_new`` falls back to a hard link.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from pathlib import Path
from typing import Any

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@functools.cache
def renameat2() -> Any:
    """libc's ``renameat2`` on Linux, else None; looked up at the first rename, so that a pass that writes
    nothing does not pay for loading ctypes (~10 ms of its start-up with a cold disk cache)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None


def _rename2(a: Path, b: Path, flags: int, event: str) -> bool:
    """``renameat2`` with ``flags``; False when this system or file system cannot."""
    call = renameat2()
    if call is None:
        return False
    sys.audit(event, str(a), str(b))  # a rename Python does not audit itself
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically; False when this system or file system cannot."""
    return _rename2(a, b, _RENAME_EXCHANGE, "vaultsync.exchange")


def place_new(tmp: Path, path: Path) -> None:
    """Give ``tmp`` the name ``path``, which must not exist; FileExistsError when a file appeared there.

    One rename that refuses to replace (``RENAME_NOREPLACE``) where the system has it: a first import names
    tens of thousands of new notes, and a hard link plus an unlink costs a second change to the folder each.
    """
    if not _rename2(tmp, path, _RENAME_NOREPLACE, "vaultsync.place"):
        os.link(tmp, path)
        tmp.unlink()
