"""A function over a list of items in forked worker processes, the results taken back in the items' order.

A first import renders and writes tens of thousands of notes in Python, one core's worth of work that no
thread can share (the interpreter lock: a thread writing notes beside one rendering waited on the lock more
than it wrote). Forked workers each run it for a share of the batches, with what the parent computed before
the fork (every entity's name, the note-name counts) inherited rather than sent.
Each result comes back pickled over a pipe of its own.

The parent forks before it starts any thread of its own, so no lock is held by a thread that does not exist
in the child. A worker ends with ``os._exit``: nothing of the parent's (its open base, its lock, buffered
output) is closed, flushed or run at exit by the child. It holds the parent's run lock as long as it lives,
and the kernel kills it when the parent dies (Linux ``PR_SET_PDEATHSIG``), so no worker writes for a pass
that is gone.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
MAX_PROCESSES = 4  # each holds a batch; more rarely pays on the machines this runs on
_LENGTH = struct.Struct("<Q")
_PR_SET_PDEATHSIG = 1


class WorkerFailed(RuntimeError):
    """A worker raised (its traceback follows) or died before sending every result."""


def processes_for(items: int, wanted: int = 0) -> int:
    """How many workers ``items`` items get: ``wanted``, else one per usable core up to MAX_PROCESSES, never
    more than there are items; 1 means none.

    None either where fork is missing, or while another thread runs (a pass called by a program with threads
    of its own): a child forked then could wait forever on a lock that thread held at the fork.
    """
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(wanted or min(MAX_PROCESSES, cores), items))


class ForkedMap(Generic[T, R]):
    """``func`` over ``items`` in ``processes`` forked workers, the i-th worker taking every processes-th item.

    Iterating yields the results in the items' order; a result is read as soon as its turn comes, so a worker
    done early waits on its pipe while the parent takes in the one before it (at 50k facts, 6% of a worker's
    time; a thread per worker emptying its pipe at once measured no quicker, the two cores being busy anyway).
    ``close`` (or leaving the ``with``) kills workers still running: every file a worker writes is atomic, and
    what it leaves half-done (a temp file) the next pass sets aside.
    """

    def __init__(self, func: Callable[[T], R], items: Sequence[T], processes: int) -> None:
        self._count = len(items)
        self._workers: list[tuple[int, IO[bytes]]] = []
        self._reaped: set[int] = set()
        parent = os.getpid()
        # What the parent holds is left out of the workers' garbage collections, which would otherwise write to
        # every object's header and so copy every page of it into each worker.
        gc.freeze()
        try:
            for first in range(processes):
                read_end, write_end = os.pipe()
                pid = os.fork()
                if pid == 0:  # the worker: never returns
                    os.close(read_end)
                    for _, stream in self._workers:  # the earlier workers' pipes are not this one's
                        os.close(stream.fileno())
                    _work(func, items[first::processes], write_end, parent)
                os.close(write_end)
                self._workers.append((pid, os.fdopen(read_end, "rb")))
        finally:
            gc.unfreeze()

    def __iter__(self) -> Iterator[R]:
        for index in range(self._count):
            pid, stream = self._workers[index % len(self._workers)]
            frame = _receive(stream)
            if frame is None:
                self._reaped.add(pid)
                raise WorkerFailed(f"a worker of the import stopped ({_status(pid)})")
            ok, value = frame
            if not ok:
                raise WorkerFailed(f"a worker of the import failed:\n{value}")
            yield value

    def close(self) -> None:
        for pid, stream in self._workers:
            stream.close()
            if pid not in self._reaped:
                os.kill(pid, signal.SIGKILL)  # one done is a zombie until reaped: the signal is harmless
                os.waitpid(pid, 0)
        self._workers = []

    def __enter__(self) -> ForkedMap[T, R]:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


@contextlib.contextmanager
def one_at_a_time(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s flock: among processes entering this, one at a time goes on.

    Workers writing at once are slower than taking turns: on ext4, two processes creating small files at once
    spent several times the kernel time of one process creating them all (benchmarks/history.md). Each entry opens
    ``folder`` anew, so two workers forked from one parent are two lock holders, and the kernel drops the lock
    of a worker that dies holding it, so no other waits on it forever.
    """
    import fcntl  # forked workers exist only where fork does, on POSIX; importing it here keeps Windows starting

    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _work(func: Callable[[T], Any], items: Sequence[T], fd: int, parent: int) -> None:
    code = 1
    try:
        _die_with(parent)
        with os.fdopen(fd, "wb") as out:
            try:
                for item in items:
                    _send(out, (True, func(item)))
                code = 0
            except BaseException:
                _send(out, (False, traceback.format_exc()))
    finally:
        os._exit(code)


def _die_with(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def _status(pid: int) -> str:
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _send(stream: IO[bytes], value: object) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next value, or None at the end of the stream (or of a cut one)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(head)
    payload = stream.read(length)
    if len(payload) < length:
        return None
    return pickle.loads(payload)
