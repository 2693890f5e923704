"""Timed runs of the benchmarks: each a subprocess in its own process group, its wall time and the peak memory
of its process tree, with caches dropped before it where the OS allows; the constants every benchmark shares."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = Path(__file__).resolve().parent / "floor.py"
DOCS = ROOT / "docs" / "performance.md"
# vaultsync and the floor run under the same interpreter, so start-up costs the same on both sides.
PYTHON = ROOT / ".venv" / "bin" / "python" if (ROOT / ".venv" / "bin" / "python").exists() else Path(sys.executable)
PROFILE_FACTS = 50_000  # the size the targets are judged at; smaller runs profile their largest scale
TARGETS = {"first_import": 1.3, "no_change": 1.5, "small_change": 1.5, "growth": 1.3}
PEAK_RSS_TARGET_MB = 300.0
PEAK_RSS_SCALE = 200_000
TARGET_SCALE = 50_000  # the size the first-import, no-change and small-change targets are set for


@dataclass(frozen=True)
class Repeats:
    """How many times each scenario runs at one scale: three times at least, a median, since one cold sample of
    a shared disk says little (a single first import at 200k met floors from 49 s to 79 s in runs H-O); five
    times where a run takes under a second."""

    first_import: int
    no_change: int
    small_change: int


SCALES: dict[str, dict[int, Repeats]] = {
    "small": {5_000: Repeats(2, 3, 3)},
    "full": {5_000: Repeats(3, 5, 5), 50_000: Repeats(3, 3, 3), 200_000: Repeats(3, 3, 3)},
}


@dataclass
class Run:
    """One timed child process."""

    label: str
    seconds: float
    max_rss_mb: float
    rc: int
    stderr: str = ""
    stdout_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.rc == 0


@dataclass
class ScaleResult:
    facts: int
    stats: dict[str, int] = field(default_factory=dict)
    generate_seconds: float = 0.0
    runs: dict[str, list[Run]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, run: Run) -> Run:
        self.runs.setdefault(key, []).append(run)
        return run

    def median(self, key: str) -> float | None:
        times = [r.seconds for r in self.runs.get(key, []) if r.ok]
        return statistics.median(times) if times else None

    def peak_rss_mb(self) -> float | None:
        peaks = [r.max_rss_mb for k, rs in self.runs.items() if k.startswith("vaultsync") for r in rs]
        return max(peaks) if peaks else None


@dataclass
class Row:
    """One line of the results table."""

    scale: str
    benchmark: str
    measured: str
    reference: str
    ratio: float | None
    target: str
    verdict: str


class Bench:
    """Runs children with a clean git environment and drops caches before each timed one when it may."""

    def __init__(self, tmp: Path, cold: bool, timeout: float) -> None:
        self.tmp = tmp
        self.cold = cold
        self.timeout = timeout
        empty = tmp / "empty-gitconfig"
        # No automatic gc: the floor's `git commit` would start one in the background, which then competes with
        # the next timed run and deletes objects while a finished case is being removed.
        empty.write_text("[gc]\n\tauto = 0\n")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "VAULTSYNC_"))}
        self.env |= {"GIT_CONFIG_GLOBAL": str(empty), "GIT_CONFIG_NOSYSTEM": "1"}
        self.vaultsync = [str(PYTHON), "-m", "vaultsync.cli"]
        self.source = "the working tree"

    def snapshot(self) -> str:
        """Copy the vaultsync package and run that copy, so every run of this benchmark measures one version.

        Others may be editing ``vaultsync/`` while a long run goes on; without a copy, one scale could time a
        different (or half-saved) version than the next. ``PYTHONPATH`` comes before the editable install's
        finder, which setuptools appends to ``sys.meta_path``; the check below proves the copy is what runs.
        """
        src = self.tmp / "src"
        shutil.copytree(ROOT / "vaultsync", src / "vaultsync", ignore=shutil.ignore_patterns("__pycache__"))
        digest = hashlib.sha256()
        for path in sorted(p for p in (src / "vaultsync").rglob("*") if p.is_file()):
            digest.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes())
        self.env["PYTHONPATH"] = str(src)
        # Byte-compile now, or the first timed run would pay for compiling every module once.
        subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(src)], env=self.env, check=True)
        where = subprocess.run(
            [str(PYTHON), "-c", "import vaultsync; print(vaultsync.__file__)"],
            env=self.env,
            cwd=self.tmp,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not where.startswith(str(src)):
            raise SystemExit(f"the vaultsync snapshot is not the one imported ({where}); not benchmarking")
        self.source = f"a copy of vaultsync/ taken at the start, sha256 {digest.hexdigest()[:12]}"
        return self.source

    def child(self, label: str, cmd: Sequence[str], cwd: Path | None = None, timed: bool = True) -> Run:
        """Run ``cmd`` and return its wall time and the max RSS of its process tree.

        ``os.wait4`` gives the rusage of this one child (including the git processes it waited for), unlike
        ``getrusage(RUSAGE_CHILDREN)``, which keeps the maximum over every child this script ever had.
        """
        if timed and self.cold:
            drop_caches()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            # cwd defaults to the temp root: "python -m" puts the cwd first on sys.path, and the repository root
            # there would shadow the snapshot with the live vaultsync/.
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=err, env=self.env, cwd=cwd or self.tmp, start_new_session=True
            )
            timer = threading.Timer(self.timeout, _kill_group, (proc.pid,))
            timer.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
            seconds = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode(errors="replace")
            stderr = err.read().decode(errors="replace")
        rc = proc.returncode
        if rc < 0 and -rc == signal.SIGKILL and seconds >= self.timeout:
            stderr += f"\n(killed after the {self.timeout:.0f} s timeout)"
        run = Run(label, seconds, usage.ru_maxrss / 1024, rc, stderr.strip(), "\n".join(stdout.splitlines()[-3:]))
        if not run.ok:
            print(f"!! {label}: exit {rc} after {seconds:.1f} s\n{stderr.strip()[-3000:]}", file=sys.stderr)
        return run

    def git(self, vault: Path, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(vault), *args], env=self.env, capture_output=True, text=True)
        return done.stdout.strip()


def why(run: Run) -> str:
    """The last line of a child's stderr (a traceback's exception), which is what a table row has room for."""
    lines = [line.strip() for line in run.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output on stderr)"


def _kill_group(pid: int) -> None:
    # The group was created for this child (start_new_session), so this ends only what this script started.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def drop_caches() -> bool:
    """Drop the page cache, dentries and inodes so a run reads from disk; False where the OS does not allow it."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


# -- scenarios -------------------------------------------------------------------------------------------------
