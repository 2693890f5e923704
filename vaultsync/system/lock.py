"""The run lock: one pass at a time in a vault, whoever starts it (the schedule, the watcher, a command, the API).

Its own module because it is about processes, not files: ``app/write.py`` alone takes it, around every change,
while ``fs.py``'s writes rely on it being held and never take it themselves.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from vaultsync.errors import LockHeld


@contextlib.contextmanager
def run_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock for the length of a pass.

    flock is released by the kernel when the process dies, so a killed pass never leaves a stale lock.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            _lock_now(fd)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
                raise LockHeld(f"a pass held the lock ({lock_path})", hint="try again shortly") from exc
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def _lock_now(fd: int) -> None:
    """Take the lock on ``fd`` or raise OSError at once: flock on POSIX, a byte-range lock on Windows.

    Both are dropped by the system when the process dies. fcntl and msvcrt exist each on one family only, so
    they are imported here, never at the top: the CLI must start on every system Obsidian runs on.
    """
    if os.name == "nt":
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
