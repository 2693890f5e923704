"""File-system primitives every pass relies on: atomic, checked writes.

Memory files are written by an agent at any moment and vault notes by Obsidian's autosave, so a write must
never leave a torn file and must never replace a file that changed after the pass read it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from vaultsync.errors import FileChanged, WrittenLate
from vaultsync.system.renames import exchange, place_new

TEMP_SUFFIX = ".vstmp"  # staged writes; a killed pass may leave one, and the next pass removes it


BEING_WRITTEN = "was being written while the pass read it; left as it is for the next pass"


class BeingWritten(RuntimeError):
    """The file's size moved while it was read: another program was writing it. Read it next pass."""


def digest(data: bytes) -> str:
    """Content fingerprint; sha1 is plenty to tell versions of one file apart and is fast.

    hashlib is imported here, not at start-up: it loads OpenSSL's library, about 13 ms of a cold start, and a
    pass that finds nothing to do hashes nothing.
    """
    import hashlib

    return hashlib.sha1(data).hexdigest()


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    # The only way to read the umask is to set it; the lock keeps threads from seeing the temporary value.
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def read_whole(path: Path) -> bytes:
    """Read a file another program may be writing, and refuse a torn read.

    Obsidian saves by truncating and rewriting in place, and an agent may append at any time: a read in the
    middle sees an empty or cut file, and the file's size afterwards tells.
    """
    with open(path, "rb") as handle:
        data = handle.read()
        # The size of what was opened: a file replaced by rename meanwhile was read whole, and is not torn.
        if os.fstat(handle.fileno()).st_size != len(data):
            raise BeingWritten(str(path))
    return data


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


def is_leftover(name: str) -> bool:
    """A temp file ``stage`` made: seen outside a pass, it is a killed pass's, since passes hold the run lock."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def stage(path: Path, data: bytes, durable: bool = False, new: bool = False) -> Path:
    """Write ``data`` to a hidden temp file beside ``path`` and return it; nothing visible changes yet.

    The temp file sits in the target's folder so the later ``os.replace`` is a rename within one file system.
    ``durable`` fsyncs it; a pass staging thousands of files syncs them all at once instead (``sync_all``).
    ``new`` says the caller knows ``path`` does not exist: the file gets the mode the umask gives, without
    asking the disk first (a first import stages tens of thousands of notes).
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}{TEMP_SUFFIX}"
    if new:
        try:
            fd = _create(tmp, os.O_EXCL, 0o666)  # the umask applies, as to any new file
        except FileExistsError:  # a leftover of a killed pass that had this process id
            new = False
    if not new:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)  # keep the mode the file had ...
        except FileNotFoundError:
            mode = 0o666 & ~_umask()  # ... or what the umask gives a new file
        fd = _create(tmp, os.O_TRUNC, mode)
    try:
        if not new:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def _create(tmp: Path, flag: int, mode: int) -> int:
    try:
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | flag, mode)
    except FileNotFoundError:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | flag, mode)


@dataclass
class Replaced:
    """A file a pass just replaced or deleted, still open.

    A writer that opened the file an instant before (an agent's open, append, close; Obsidian's save in place)
    writes into this one after it, where nothing would read it again; ``settle`` looks once more.
    """

    path: Path
    fd: int
    seen: bytes  # what the compare-and-swap read through ``fd``
    ours: bytes | None  # what the pass put at ``path``; None when it deleted the file
    inode: int = 0  # the inode of the file the pass put there; 0 when it deleted the file


def put(tmp: Path, path: Path, expected: bytes | object | None = ..., ours: bytes = b"") -> Replaced | None:
    """Move a staged temp file onto ``path``, unless ``path`` no longer holds ``expected``.

    ``expected`` is the content the pass read (``None`` when the file must not exist), ``ours`` what ``tmp``
    holds. This compare-and-swap keeps a concurrent autosave or agent append safe:

    * a new file is renamed into place by a rename that fails if one appeared meanwhile (``place_new``);
    * an existing file is opened and compared first, and the replaced file is returned still open: the caller
      passes it to ``settle`` a little later, which puts back whatever a writer that got in between the check
      and the rename wrote into it;
    * a writer renaming its own file into place between that check and the swap gets it back (``_swap_in``).

    What is left is a writer holding the file open past ``settle`` (a logging handler), which no rename-based
    write can see, and, on systems without an atomic exchange of names, the microseconds before the rename.
    """
    if expected is ...:
        os.replace(tmp, path)
        return None
    if expected is None:
        try:
            place_new(tmp, path)
        except FileExistsError:
            tmp.unlink(missing_ok=True)
            raise FileChanged(str(path)) from None
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        tmp.unlink(missing_ok=True)
        raise FileChanged(str(path)) from None
    try:
        seen = _read_fd(fd)
        # Still the file just compared? A writer that replaces files by rename may have put another there while
        # it was read; checking the inode right before the rename leaves it microseconds instead.
        if seen != expected or os.stat(path).st_ino != os.fstat(fd).st_ino:
            tmp.unlink(missing_ok=True)
            raise FileChanged(str(path))
        mine = os.stat(tmp).st_ino
        _swap_in(tmp, path, os.fstat(fd).st_ino)
    except BaseException:
        os.close(fd)
        raise
    return Replaced(path, fd, seen, ours, mine)


def settle(replaced: Replaced) -> None:
    """Close a replaced or deleted file; if a write reached it after the swap, put that write back at its name.

    The name then holds what it would have held had the pass not written: the late writer's version, followed
    by whatever was appended to the pass's version since (a deleted file comes back as the late writer left
    it). FileChanged says the pass's write was undone, or that another writer renamed its own file over it since
    (either way its unit waits for the next pass, which merges the two); WrittenLate that the name was written
    anew since, so the late version could not go back and the caller must keep it elsewhere.
    """
    try:
        late = _read_fd(replaced.fd)
    finally:
        os.close(replaced.fd)
    if late == replaced.seen:
        if replaced.inode and _inode(replaced.path) != replaced.inode:
            # Another writer renamed its own file over the pass's since (OpenClaw's temporary file and rename,
            # made from what it read before the pass wrote): the pass's write no longer stands.
            raise FileChanged(str(replaced.path))
        return
    ours = replaced.ours
    for _ in range(3):  # each retry means yet another write to the name meanwhile
        current = read_or_none(replaced.path)
        if ours is None and current is None:
            back, expected = late, None
        elif ours is not None and current is not None and current.startswith(ours):
            back, expected = late + current[len(ours) :], current
        else:
            break
        try:
            tmp = stage(replaced.path, back)
            try:
                again = put(tmp, replaced.path, expected, back)
            finally:
                tmp.unlink(missing_ok=True)
        except FileChanged:
            continue
        except OSError as exc:  # the late version must not live only in this process
            raise WrittenLate(str(replaced.path), late) from exc
        if again:
            settle(again)
        raise FileChanged(str(replaced.path))
    raise WrittenLate(str(replaced.path), late)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _swap_in(tmp: Path, path: Path, checked: int) -> None:
    """Put ``tmp`` at ``path``, which held inode ``checked`` an instant ago, and never lose a file renamed in since.

    Where the system can exchange two names atomically (Linux ``renameat2(RENAME_EXCHANGE)``), the file the
    swap displaces lands at ``tmp``: if it is not the one just compared, a writer renamed its own file in after
    the check, and it is swapped back, with a second swap when yet another writer got in between (its newer file
    wins, as it would have without vaultsync). Elsewhere a plain rename leaves that microsecond window open.
    """
    ours = os.stat(tmp).st_ino
    if not exchange(tmp, path):
        os.replace(tmp, path)
        return
    if os.stat(tmp).st_ino == checked:
        tmp.unlink()
        return
    exchange(tmp, path)  # theirs back in place
    if os.stat(tmp).st_ino != ours:
        exchange(tmp, path)  # a newer one arrived meanwhile: that is the one to keep
    tmp.unlink()
    raise FileChanged(str(path))


def set_aside(leftovers: Collection[Path], roots: Collection[Path], trash: Path) -> None:
    """Move temp files a killed pass left into ``trash``, under their place relative to one of ``roots``.

    Most hold a write the pass never put in place, but one caught between swapping a note in and swapping a
    renamed-in save back holds that save: kept, none is lost, and none lies beside the notes any longer.
    """
    for leftover in leftovers:
        root = next((r for r in roots if leftover.is_relative_to(r)), leftover.parent)
        rel = leftover.relative_to(root)
        target = trash / "leftovers" / rel.parent / rel.name.lstrip(".").removesuffix(TEMP_SUFFIX)
        target.parent.mkdir(parents=True, exist_ok=True)
        import shutil  # with bz2 and lzma, about 8 ms of a cold start: only a killed pass leaves temp files

        with contextlib.suppress(FileNotFoundError):
            shutil.move(leftover, target)


def _read_fd(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def sync_all() -> None:
    """Flush every written file and rename to disk in one call.

    One global flush costs about what one fsync does, while an fsync per file and per folder made a first
    import of 50k notes spend most of its time waiting on the disk.
    """
    os.sync()


def atomic_write(path: Path, data: bytes, expected: bytes | object | None = ...) -> None:
    """Write one file durably via temp file, fsync and ``os.replace``, with the compare-and-swap of ``put``."""
    tmp = stage(path, data, durable=True)
    try:
        replaced = put(tmp, path, expected, data)
    finally:
        tmp.unlink(missing_ok=True)
    if replaced:
        settle(replaced)
    _fsync_dir(path.parent)


def remove_checked(path: Path, expected: bytes | None, keep: Collection[Path] = ()) -> Replaced | None:
    """Delete ``path`` only if it still holds ``expected``; a file edited since the scan is kept.

    The deleted file is returned still open, for ``settle``: a writer that opened it just before the unlink
    wrote after it into a file no name leads to. Folders the deletion leaves empty go too, so a deleted entity
    leaves no husk, up to but not including any folder in ``keep`` (the roots and the PARA and daily folders,
    which the safety checks expect to exist).
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        current = _read_fd(fd)
        if expected is not None and current != expected:
            raise FileChanged(str(path))
        try:
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                raise FileChanged(str(path))  # another file renamed in since it was read
        except FileNotFoundError:
            os.close(fd)
            return None  # deleted meanwhile by someone else: what the pass wanted
        path.unlink()
    except BaseException:
        os.close(fd)
        raise
    folder = path.parent
    while folder not in keep and folder != folder.parent:
        try:
            folder.rmdir()
        except OSError:
            break
        folder = folder.parent
    return Replaced(path, fd, current, None)
