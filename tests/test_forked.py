"""Forked workers for the first import: results come back whole and in order, a worker's failure reaches the
parent with its reason, and no worker outlives the pass that forked it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vaultsync.forked import ForkedMap, WorkerFailed, processes_for


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
from vaultsync.forked import ForkedMap
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
