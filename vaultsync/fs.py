"""File-system primitives every pass relies on: atomic, checked writes and the run lock.

Memory files are written by an agent at any moment and vault notes by Obsidian's autosave, so a write must
never leave a torn file and must never replace a file that changed after the pass read it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path


class FileChanged(RuntimeError):
    """The target changed between the scan and the write; the pass leaves it for the next run."""


class LockHeld(RuntimeError):
    """Another pass holds the lock."""


def digest(data: bytes) -> str:
    """Content fingerprint; sha1 is plenty to tell versions of one file apart and is fast."""
    return hashlib.sha1(data).hexdigest()


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    # The only way to read the umask is to set it; the lock keeps threads from seeing the temporary value.
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _fsync_dir(path: Path) -> None:
    # Without this the rename itself may be lost on power failure, leaving the old content.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, expected: bytes | object | None = ...) -> None:
    """Write ``data`` to ``path`` via temp file, fsync and ``os.replace``.

    ``expected`` is the content the pass read (``None`` when the file did not exist). When given, the file is
    re-read right before the replace and the write is abandoned with FileChanged if it differs: this is the
    compare-and-swap that keeps a concurrent autosave or agent append safe.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".vstmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files; keep the mode the file had, or what the umask gives a new file.
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if expected is not ...:
            current = read_or_none(path)
            if current != expected:
                raise FileChanged(str(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def remove_checked(path: Path, expected: bytes | None) -> None:
    """Delete ``path`` only if it still holds ``expected``; a file edited since the scan is kept."""
    current = read_or_none(path)
    if current is None:
        return
    if expected is not None and current != expected:
        raise FileChanged(str(path))
    path.unlink()
    _prune_empty_dirs(path.parent)


def _prune_empty_dirs(folder: Path) -> None:
    """Remove folders a deletion left empty, so a deleted entity does not leave a husk behind."""
    while True:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


@contextlib.contextmanager
def run_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock for the length of a pass.

    flock is released by the kernel when the process dies, so a killed pass never leaves a stale lock.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise LockHeld(str(lock_path)) from exc
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def is_within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
