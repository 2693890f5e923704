"""Keeping processes running: what ``vaultsync service run`` does under systemd, launchd or cron alike.

Each child (``serve``, and ``watch`` when chosen) is started, its output written line by line to one rotated log,
and started again when it stops, after a pause that grows while it keeps failing (a port taken, a token file
gone) and starts short again once it has run a while. A periodic command (the hourly pass) runs beside them. The
state file says, for ``vaultsync service status`` and ``doctor``, which process is up since when and the last
error, the same way on every platform. SIGTERM or SIGINT stops the children, then the supervisor, exit 0, which
a service manager counts as a clean stop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultsync.system.fs import atomic_write

LOG_MAX_BYTES = 1_000_000
LOG_KEEP = 3
PAUSES = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)  # before each restart in a row; a child up a minute starts over
STEADY = 60.0
STOP_GRACE = 10.0  # seconds a child gets to end after SIGTERM before SIGKILL


def now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def append_log(path: Path, lines: Sequence[str]) -> None:
    """Append whole lines to ``path``, rotated first when over ``LOG_MAX_BYTES`` (``.1`` newest to ``.3``), so a
    process that runs for years cannot fill the disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    if size > LOG_MAX_BYTES:
        for n in range(LOG_KEEP - 1, 0, -1):
            older = path.with_name(f"{path.name}.{n}")
            if older.exists():
                older.replace(path.with_name(f"{path.name}.{n + 1}"))
        path.replace(path.with_name(f"{path.name}.1"))
    with path.open("a", encoding="utf-8") as log:
        log.writelines(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class ChildState:
    pid: int | None = None
    since: str | None = None
    restarts: int = 0
    last_exit: int | None = None
    last_error: str = ""
    last_error_at: str | None = None


@dataclass
class State:
    pid: int
    started: str
    stopped: str | None = None
    argv: list[str] = field(default_factory=list)  # the supervisor's own command, to start it again
    children: dict[str, ChildState] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def read(cls, path: Path) -> State | None:
        """The state a supervisor last wrote; None when there is none or it cannot be read."""
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            children = {name: ChildState(**child) for name, child in value.pop("children", {}).items()}
            return cls(**value, children=children)
        except (OSError, ValueError, TypeError):
            return None


def alive(pid: int | None) -> bool:
    """Whether ``pid`` is a running vaultsync process (on Linux its command line is checked too, so a pid reused
    after a reboot is not taken for ours)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return b"vaultsync" in cmdline.read_bytes()
        except OSError:
            return False
    return True


class Supervisor:
    def __init__(
        self,
        children: dict[str, list[str]],
        log: Path,
        state_path: Path,
        periodic: tuple[list[str], float] | None = None,
        argv: Sequence[str] = (),
    ) -> None:
        self.commands = children
        self.log = log
        self.state_path = state_path
        self.periodic = periodic
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.state = State(os.getpid(), now(), argv=list(argv), children={name: ChildState() for name in children})
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def write(self, name: str, line: str) -> None:
        with self.lock:
            append_log(self.log, [f"{now()} {name}: {line}"])

    def save(self) -> None:
        with self.lock:
            atomic_write(self.state_path, (json.dumps(self.state.to_json(), indent=2) + "\n").encode())

    def run(self, started: Callable[[], None] | None = None) -> int:
        """Supervise until SIGTERM or SIGINT; ``started`` is called once both are handled (a face says so)."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopping.set())
        if started:
            started()
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        self.write("service", f"started (pid {os.getpid()}): {', '.join(self.commands)}")
        threads = [threading.Thread(target=self._keep, args=(name,), daemon=True) for name in self.commands]
        if self.periodic:
            threads.append(threading.Thread(target=self._every, args=self.periodic, daemon=True))
        for thread in threads:
            thread.start()
        self.save()
        while not self.stopping.wait(0.5):
            pass
        for proc in list(self.procs.values()):
            if proc.poll() is None:
                proc.terminate()
        for proc in list(self.procs.values()):
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.state.stopped = now()
        self.save()
        self.write("service", "stopped")
        return 0

    def _start(self, name: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(self.commands[name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        child = self.state.children[name]
        child.pid, child.since = proc.pid, now()
        self.save()
        self.write(name, f"started (pid {proc.pid})")
        return proc

    def _keep(self, name: str) -> None:
        """Run one child for as long as the supervisor runs, its output into the log."""
        failures = 0
        while not self.stopping.is_set():
            began = time.monotonic()
            proc = self._start(name)
            last = ""
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    last = line
                    self.write(name, line)
            code = proc.wait()
            child = self.state.children[name]
            child.pid, child.last_exit = None, code
            if self.stopping.is_set():
                self.save()
                return
            child.restarts += 1
            child.last_error, child.last_error_at = f"exit {code}: {last or 'no output'}", now()
            self.save()
            failures = 0 if time.monotonic() - began > STEADY else failures + 1
            pause = PAUSES[min(failures, len(PAUSES) - 1)]
            self.write(name, f"stopped with exit {code}; starting again in {pause:g} s")
            self.stopping.wait(pause)

    def _every(self, argv: list[str], seconds: float) -> None:
        """The periodic command (the hourly pass): its own output goes to its own log (``sync --scheduled``)."""
        while not self.stopping.wait(seconds):
            done = subprocess.run(argv, capture_output=True, check=False)
            if done.returncode not in (0, 1):
                self.write("sync", f"the hourly pass ended with exit {done.returncode} (see the schedule's log)")


def spawn_detached(argv: Sequence[str]) -> int:
    """Start ``argv`` in a session of its own, its output discarded (it writes its own log): a service started
    now that cron starts at the next boot. Returns its pid."""
    with open(os.devnull, "rb") as nothing_in, open(os.devnull, "wb") as nothing_out:
        proc = subprocess.Popen(
            list(argv), stdin=nothing_in, stdout=nothing_out, stderr=nothing_out, start_new_session=True
        )
    return proc.pid


def stop(pid: int | None, wait: float = 0) -> bool:
    """Ask a supervisor to stop (SIGTERM), waiting up to ``wait`` seconds for it to end (it writes its state last,
    so a new one must not start before); False when it was not running."""
    if not alive(pid):
        return False
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return True
