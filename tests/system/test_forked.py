"""Forked workers for the first import: results come back whole and in order, a worker's failure reaches the
parent with its reason, and no worker outlives the pass that forked it."""

from __future__ import annotations

import fcntl
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from vaultsync.system.forked import ForkedMap, WorkerFailed, one_at_a_time, processes_for


def pid_and_square(item: int) -> tuple[int, int, int]:
    return item, item * item, os.getpid()


def test_results_come_back_in_order_from_several_workers() -> None:
    with ForkedMap(pid_and_square, list(range(11)), 3) as workers:
        results = list(workers)
    assert [(i, sq) for i, sq, _ in results] == [(i, i * i) for i in range(11)]
    pids = [pid for _, _, pid in results]
    assert len(set(pids)) == 3 and os.getpid() not in pids
    assert pids[0::3] == [pids[0]] * 4, "the first worker takes every third item"


def fails_on_four(item: int) -> int:
    if item == 4:
        raise ValueError("item four is bad")
    return item


def test_a_worker_that_raises_stops_the_map_with_its_traceback() -> None:
    got = []
    with ForkedMap(fails_on_four, list(range(8)), 2) as workers, pytest.raises(WorkerFailed) as failed:
        for item in workers:
            got.append(item)
    assert got == [0, 1, 2, 3]
    assert "ValueError: item four is bad" in str(failed.value)


def dies_on_two(item: int) -> int:
    if item == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return item


def test_a_worker_killed_stops_the_map_and_says_how() -> None:
    with ForkedMap(dies_on_two, list(range(6)), 2) as workers, pytest.raises(WorkerFailed, match="signal 9"):
        list(workers)


def sleeps(item: int) -> int:
    if item:
        time.sleep(60)
    return os.getpid()


LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states in /proc")


@LINUX
def test_closing_early_ends_every_worker() -> None:
    workers = ForkedMap(sleeps, [0, 1, 2, 3], 2)
    first = next(iter(workers))
    others = [pid for pid, _ in workers._workers]
    workers.close()
    assert first in others
    assert not any(_running(pid) for pid in others)


PARENT = """
import sys, time
from vaultsync.system.forked import ForkedMap
def sleeps(item):
    time.sleep(60)
workers = ForkedMap(sleeps, [1, 2], 2)
print(" ".join(str(pid) for pid, _ in workers._workers), flush=True)
time.sleep(60)
"""


@LINUX
def test_workers_die_with_the_pass() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pids = [int(p) for p in parent.stdout.readline().split()]
    assert len(pids) == 2 and all(_running(pid) for pid in pids)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(pid) for pid in pids):
        time.sleep(0.05)
    assert not any(_running(pid) for pid in pids), "a worker outlived its killed parent"


def test_no_workers_while_another_thread_runs() -> None:
    assert processes_for(1) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert processes_for(100) == 1
    finally:
        stop.set()
        other.join()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert processes_for(100) == min(4, cores)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for its parent to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@dataclass
class TakesTurns:
    """Holds the turn a while, noting when it came in and went out."""

    folder: Path

    def __call__(self, item: int) -> tuple[float, float]:
        with one_at_a_time(self.folder):
            came = time.monotonic()
            time.sleep(0.05)
            return came, time.monotonic()


def test_workers_take_turns_one_at_a_time(tmp_path: Path) -> None:
    with ForkedMap(TakesTurns(tmp_path), list(range(8)), 4) as workers:
        spans = sorted(workers)
    for (_, left), (came, _) in itertools.pairwise(spans):
        assert came >= left, f"two workers held the turn at once: {spans}"


def test_a_worker_killed_holding_the_turn_gives_it_up(tmp_path: Path) -> None:
    """The kernel drops the lock of a process that dies: no worker waits forever on a dead one."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # holds the turn, says so, and waits to be killed
        with one_at_a_time(tmp_path):
            os.write(ready_w, b"1")
            time.sleep(60)
        os._exit(0)
    assert os.read(ready_r, 1) == b"1"
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the turn is taken
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and free once its holder is gone
    finally:
        os.close(fd)
        os.close(ready_r)
        os.close(ready_w)
