"""Run every vaultsync benchmark at a chosen scale and print ratios measured in the same run.

Why ratios: the machines this runs on are shared and noisy, so absolute seconds from two runs (or two
machines) say little. Each benchmark therefore times vaultsync against a reference doing the irreducible part of
the same job, on the same data, interleaved in the same run, and reports the ratio of medians:

* first import: ``vaultsync sync`` on a fresh vault vs ``benchmarks/floor.py`` (plain f-string notes at the same
  paths, then ``git add -A`` and ``git commit``); target <= 1.3x;
* no-change pass: ``vaultsync sync`` with nothing to do vs ``git status --porcelain`` on the same vault;
  target <= 1.5x, Python start-up included;
* small-change pass: one fact edited in the vault, one fact added by the agent, one line appended to the newest
  daily note, vs the no-change pass; target <= 1.5x, commits included;
* growth: first-import (and no-change) seconds per fact, a larger memory's within 1.3x of a smaller one's;
* peak memory: the max RSS of the vaultsync process tree (its git children included) under 300 MB at 200k facts.

Every timed run is a subprocess (start-up is part of what a person waits for), in a fresh temp dir per
scenario, with ``GIT_CONFIG_GLOBAL`` pointed at an empty file so a developer's git config (hooks, fsmonitor,
signing) cannot skew one side. Caches are dropped before each timed run when the OS allows it.

The first-import, no-change and small-change targets are judged at 50k facts, the size they are set for, and
the memory target at 200k; the other scales print their ratios for information.

Usage: ``.venv/bin/python benchmarks/run.py --scale small`` (about 1-2 minutes) or ``--scale full``
(5k/50k/200k facts; long). ``--write-docs`` rewrites the "Latest results" part of ``docs/performance.md``
(between its markers; the text around them is kept).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import platform
import pstats
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from generate import END_DATE, generate, scale_args

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


def _why(run: Run) -> str:
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


@dataclass
class Case:
    """A fresh directory holding a copy of the memory tree and, once initialised, a vault and its config."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "mem" / "workspace"

    @property
    def life(self) -> Path:
        return self.root / "mem" / "life"

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def config(self) -> Path:
        return self.root / "config.toml"


def fresh_case(bench: Bench, tree: Path, name: str) -> Case:
    case = Case(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=bench.tmp)))
    shutil.copytree(tree, case.root / "mem")
    return case


def first_import(bench: Bench, res: ScaleResult, tree: Path, repeats: int) -> Case | None:
    """vaultsync's first pass vs the floor, alternating so drift in machine load hits both sides alike.

    The vault made by the last vaultsync repeat is returned for the no-change and small-change scenarios: its
    state is exactly "after a first import", and a 200k-fact import is too costly to repeat just to set up.
    """
    kept: Case | None = None
    kept_ok = False
    for r in range(repeats):
        case = fresh_case(bench, tree, "vaultsync")
        roots = ["--workspace", str(case.workspace), "--life", str(case.life), "--vault", str(case.vault)]
        init = bench.child(
            "vaultsync init", [*bench.vaultsync, "init", *roots, "--config", str(case.config)], timed=False
        )
        if not init.ok:
            res.failures.append(f"vaultsync init failed (exit {init.rc}): {_why(init)}")
            return None
        run = res.add("vaultsync first import", bench.child("first import", _sync(bench, case)))
        _progress(res, "first import", r, run)
        if not run.ok:
            res.failures.append(f"first import exited {run.rc}: {_why(run)}")
        if kept:
            shutil.rmtree(kept.root)
        kept, kept_ok = case, run.ok

        floor = fresh_case(bench, tree, "floor")
        floor.vault.mkdir()
        bench.git(floor.vault, "init", "--quiet", "--initial-branch=main")
        run = res.add(
            "floor first import",
            bench.child("floor", [str(PYTHON), str(FLOOR), str(floor.workspace), str(floor.life), str(floor.vault)]),
        )
        _progress(res, "floor", r, run)
        if not run.ok:
            res.failures.append(f"floor exited {run.rc}: {_why(run)}")
        shutil.rmtree(floor.root, ignore_errors=True)
    if kept and not kept_ok:
        shutil.rmtree(kept.root)
        return None
    return kept


def passes(bench: Bench, res: ScaleResult, case: Case, repeats: Repeats) -> None:
    """No-change and small-change passes on one vault, interleaved round by round.

    The no-change pass is timed against ``git status --porcelain``, the cheapest "is anything different?"
    there is; the small-change pass (one edit on each side and one daily-note line, different files each round)
    against the no-change pass. Interleaving them means a burst of load from the machine's other jobs lands on
    both sides of a ratio, instead of on whichever scenario happened to run during it. After a small-change
    pass has synced, the vault is in a no-change state again, so the next round's no-change pass is a real one.
    """
    # One untimed git status first: git refreshes its index stat data after a big commit ("racy" entries), a
    # one-off that would otherwise be charged to the reference. vaultsync's no-change pass does not run git.
    bench.child("warm-up status", ["git", "-C", str(case.vault), "status", "--porcelain"], timed=False)
    fact_notes = _fact_notes(case.vault / "2 Areas" / "people")
    bare = _bare_array_entities(case.life / "areas" / "people")
    for r in range(max(repeats.no_change, repeats.small_change)):
        if r < repeats.no_change:
            _uncommitting(bench, res, case, "vaultsync no-change", "no-change pass", r)
            status = bench.child("git status", ["git", "-C", str(case.vault), "status", "--porcelain"])
            _progress(res, "git status", r, res.add("git status", status))
        if r < repeats.small_change:
            if not fact_notes or not bare:
                res.failures.append("small change: no fact note or bare-array items.json to edit")
                continue
            _small_edits(case, fact_notes, bare, r)
            before = bench.git(case.vault, "rev-list", "--count", "HEAD")
            run = res.add("vaultsync small change", bench.child("small-change pass", _sync(bench, case)))
            _progress(res, "small change", r, run)
            if not run.ok:
                res.failures.append(f"small-change pass exited {run.rc}: {_why(run)}")
            after = bench.git(case.vault, "rev-list", "--count", "HEAD")
            if before == after:
                res.failures.append(f"small-change round {r + 1} made no commit")
            elif r == 0:
                res.notes.append(f"small-change pass made {int(after) - int(before)} commit(s) per round")
    if bare:
        new_entities(bench, res, case, bare[0].parent.parent, repeats.small_change)
        archived(bench, res, case, repeats.small_change)
        standing(bench, res, case, bare[0], repeats.no_change)
    full_passes(bench, res, case, repeats.first_import)


def full_passes(bench: Bench, res: ScaleResult, case: Case, repeats: int) -> None:
    """Passes with no snapshot to start from, as the first after an upgrade or a config change: every note and
    memory file is read, nothing is written. Timed against the floor (writing every note and committing), for
    information; its peak memory counts toward the 200k target like any pass's."""
    for r in range(repeats):
        (case.vault / ".vaultsync" / "snapshot.json").unlink(missing_ok=True)
        _uncommitting(bench, res, case, "vaultsync full", "full pass", r)


def _uncommitting(bench: Bench, res: ScaleResult, case: Case, key: str, label: str, r: int) -> None:
    """A timed pass over a vault with nothing to sync: it must succeed and commit nothing (no edits, no commit)."""
    head = bench.git(case.vault, "rev-parse", "HEAD")
    run = res.add(key, bench.child(label, _sync(bench, case)))
    _progress(res, label.removesuffix(" pass"), r, run)
    if not run.ok:
        res.failures.append(f"{label} exited {run.rc}: {_why(run)}")
    if bench.git(case.vault, "rev-parse", "HEAD") != head:
        res.failures.append(f"a {label} over an unchanged vault made a commit")


def new_entities(bench: Bench, res: ScaleResult, case: Case, people: Path, repeats: int) -> None:
    """Passes after the agent creates an entity (a new person, one fact naming a known one), the commonest
    change after a fact. Timed against the no-change pass; it has no target of its own, so it is shown
    for information."""
    known = sorted(p.name for p in people.iterdir() if p.is_dir())
    for r in range(repeats):
        slug = f"bench-person-{r + 1:03d}"
        folder = people / slug
        folder.mkdir()
        named = " ".join(w.capitalize() for w in known[(r * 7919) % len(known)].split("-"))
        (folder / "summary.md").write_text(f"# Bench Person {r + 1}\n\nMet in round {r + 1}.\n", encoding="utf-8")
        fact = {"id": f"{slug}-001", "fact": f"Bench Person {r + 1} works with {named}", "status": "active"}
        (folder / "items.json").write_text(json.dumps([fact], indent=2) + "\n", encoding="utf-8")
        run = res.add("vaultsync new entity", bench.child("new-entity pass", _sync(bench, case)))
        _progress(res, "new entity", r, run)
        if not run.ok or "new entity" not in run.stdout_tail + run.stderr:
            res.failures.append(f"new-entity pass exited {run.rc}: {_why(run)}")


def archived(bench: Bench, res: ScaleResult, case: Case, repeats: int) -> None:
    """Passes after the person archives a project in Obsidian (its folder dragged from ``1 Projects`` to
    ``4 Archives``): the pass moves the memory folder to match. Timed against the no-change pass, for
    information like the new-entity pass."""
    projects = sorted(p for p in (case.vault / "1 Projects").iterdir() if p.is_dir())
    for r, folder in enumerate(projects[:repeats]):
        folder.rename(case.vault / "4 Archives" / folder.name)
        run = res.add("vaultsync archive", bench.child("archive pass", _sync(bench, case)))
        _progress(res, "archive", r, run)
        if not run.ok or "moved from" not in run.stdout_tail + run.stderr:
            res.failures.append(f"archive pass exited {run.rc} or moved nothing: {_why(run)}")


def standing(bench: Bench, res: ScaleResult, case: Case, items: Path, repeats: int) -> None:
    """No-change passes while one file keeps a problem (a fact id repeated, a warning said on every pass).

    Such a file can sit in a tree for weeks; the passes meanwhile must stay as cheap as with a clean tree. One
    untimed pass takes the new fact in, then each round times a pass against ``git status`` as above.
    """
    facts = json.loads(items.read_text(encoding="utf-8"))
    twin = next((f["id"] for f in facts if isinstance(f, dict) and isinstance(f.get("id"), str)), None)
    if twin is None:
        res.failures.append(f"standing warning: no fact with an id in {items}")
        return
    facts.append({"id": twin.upper(), "fact": "Benchmark: a fact whose id repeats another's", "status": "active"})
    items.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    bench.child("pass taking the repeated id in", _sync(bench, case), timed=False)
    for r in range(repeats):
        head = bench.git(case.vault, "rev-parse", "HEAD")
        run = res.add("vaultsync standing", bench.child("no-change pass, standing warning", _sync(bench, case)))
        _progress(res, "standing", r, run)
        if not run.ok or "repeats" not in run.stdout_tail:
            res.failures.append(f"a pass with a standing warning exited {run.rc} or left it unsaid: {_why(run)}")
        if bench.git(case.vault, "rev-parse", "HEAD") != head:
            res.failures.append("a no-change pass with a standing warning made a commit")
        status = bench.child("git status", ["git", "-C", str(case.vault), "status", "--porcelain"])
        _progress(res, "git status", r, res.add("git status standing", status))


def _small_edits(case: Case, fact_notes: list[Path], bare: list[Path], r: int) -> None:
    """Round ``r``'s edits: a person edits a fact note, the agent adds a fact and appends to today's note."""
    note = fact_notes[(r * 7919) % len(fact_notes)]
    text = note.read_text(encoding="utf-8")
    note.write_text(text.rstrip("\n") + f" (edited in Obsidian, round {r + 1})\n", encoding="utf-8")
    _agent_adds_fact(bare[(r * 104729) % len(bare)], r)
    daily = sorted((case.workspace / "memory").glob("*.md"))[-1]
    with daily.open("a", encoding="utf-8") as handle:
        handle.write(f"- 18:{r % 60:02d} Benchmark round {r + 1}: agent appended this line\n")


def profile_no_change(bench: Bench, case: Case, top: int = 15) -> str:
    """Top lines of a cProfile of one no-change pass, run in a child so its imports and start-up count too."""
    out = case.root / "profile.out"
    cmd = [str(PYTHON), "-m", "cProfile", "-o", str(out), "-m", "vaultsync.cli", "sync", "--config", str(case.config)]
    run = bench.child("profiled no-change pass", cmd, timed=False)
    if not out.exists():
        return f"(profiling failed: exit {run.rc}: {_why(run)})"
    buf = io.StringIO()
    pstats.Stats(str(out), stream=buf).sort_stats("cumulative").print_stats(top)
    lines = buf.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    head = next((line.strip() for line in lines if "function calls" in line), "")
    site = f"{ROOT}/.venv/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages/"
    # Module paths are shown from their package down: the folders above them are one machine's.
    libs = {sysconfig.get_path(name) for name in ("purelib", "platlib", "platstdlib", "stdlib")}
    prefixes = [site, f"{bench.env.get('PYTHONPATH', ROOT)}/", f"{ROOT}/", *sorted(f"{lib}/" for lib in libs)]
    body = []
    for line in lines[start:]:
        for prefix in prefixes:
            line = line.replace(prefix, "")
        body.append(re.sub(r"(?<![\w.])/(?:[^\s/:()]+/)+", "", line))
    return "\n".join([head, "", *body]).rstrip()


def _sync(bench: Bench, case: Case) -> list[str]:
    return [*bench.vaultsync, "sync", "--config", str(case.config)]


def _progress(res: ScaleResult, what: str, r: int, run: Run) -> None:
    status = "" if run.ok else f"  FAILED (exit {run.rc})"
    print(f"  {res.facts:>7} facts  {what:<15} #{r + 1}  {run.seconds:8.2f} s  {run.max_rss_mb:7.1f} MB{status}")


def _fact_notes(folder: Path) -> list[Path]:
    notes: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        if Path(dirpath).name == "facts":
            notes += [Path(dirpath) / n for n in sorted(filenames) if n.endswith(".md") and "~" not in n]
    return notes


def _bare_array_entities(folder: Path) -> list[Path]:
    found = []
    for items in sorted(folder.glob("*/items.json")):
        if items.read_text(encoding="utf-8").lstrip().startswith("["):
            found.append(items)
    return found


def _agent_adds_fact(items: Path, r: int) -> None:
    """Append a fact the way an agent rewriting its JSON would: same indent and escaping as the file had."""
    text = items.read_text(encoding="utf-8")
    facts = json.loads(text)
    second = text.splitlines()[1] if text.count("\n") > 1 else "  "
    indent = len(second) - len(second.lstrip(" ")) or 2
    slug = items.parent.name
    facts.append(
        {
            "id": f"{slug}-bench-{r + 1:03d}",
            "fact": f"Benchmark round {r + 1}: the agent learned something new about {slug}",
            "category": "context",
            "timestamp": END_DATE.isoformat(),
            "source": "conversation",
            "status": "active",
        }
    )
    items.write_text(json.dumps(facts, indent=indent, ensure_ascii="\\u" in text) + "\n", encoding="utf-8")


# -- the run ---------------------------------------------------------------------------------------------------


def run_scale(bench: Bench, facts: int, repeats: Repeats, want_profile: bool) -> tuple[ScaleResult, str | None]:
    res = ScaleResult(facts)
    tree = bench.tmp / f"tree-{facts}"
    start = time.perf_counter()
    res.stats = asdict(generate(tree, **scale_args(facts)))
    res.generate_seconds = time.perf_counter() - start
    print(f"\n== {facts} facts: {json.dumps(res.stats)} (generated in {res.generate_seconds:.1f} s)")
    case = first_import(bench, res, tree, repeats.first_import)
    profile = None
    if not case:
        res.notes.append("no-change and small-change passes not run: there was no vault from a successful import")
    else:
        passes(bench, res, case, repeats)
        if want_profile:
            print("  profiling one no-change pass ...")
            profile = profile_no_change(bench, case)
    shutil.rmtree(tree, ignore_errors=True)
    if case:
        shutil.rmtree(case.root, ignore_errors=True)
    return res, profile


def _fmt(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f} s"


def _verdict(ratio: float | None, target: float, failed: bool = False) -> str:
    if failed:
        return "ERROR"
    if ratio is None:
        return "n/a"
    return "PASS" if ratio <= target else "FAIL"


def growth_of(per_fact: dict[int, float]) -> tuple[float, float]:
    """(rise, spread) of seconds per fact by number of facts: the rise is the largest ratio of a larger memory's
    time per fact to a smaller one's, the spread the largest to the smallest whatever their sizes.

    The rise is what the growth target judges: whether a fact costs more as the memory grows. The spread also
    counts a small memory's fixed costs (an interpreter, a repository, a dozen git processes: about half of a
    5k import), which make its time per fact larger without anything growing; the references show it too.
    """
    sizes = sorted(per_fact)
    rise = max(per_fact[b] / per_fact[a] for i, a in enumerate(sizes) for b in sizes[i + 1 :])
    return rise, max(per_fact.values()) / min(per_fact.values())


def rows_for(results: list[ScaleResult]) -> list[Row]:
    rows: list[Row] = []
    for res in results:
        scale = f"{res.facts // 1000}k"
        failed = bool(res.failures)
        pairs = (
            ("first import", "vaultsync first import", "floor first import", "floor", "first_import"),
            ("no-change pass", "vaultsync no-change", "git status", "git status", "no_change"),
            ("small-change pass", "vaultsync small change", "vaultsync no-change", "no-change pass", "small_change"),
            ("no-change, standing warning", "vaultsync standing", "git status standing", "git status", "no_change"),
        )
        judged = res.facts == TARGET_SCALE
        for title, mine, ref, ref_name, target_key in pairs:
            m, f = res.median(mine), res.median(ref)
            ratio = m / f if m is not None and f else None
            n = len(res.runs.get(mine, []))
            target = f"<= {TARGETS[target_key]}x"
            rows.append(
                Row(
                    scale,
                    f"{title} (median of {n})",
                    _fmt(m),
                    f"{ref_name} {_fmt(f)}",
                    ratio,
                    target if judged else f"({target} is at 50k)",
                    _verdict(ratio, TARGETS[target_key], failed and m is None) if judged else "info",
                )
            )
        informative = (
            ("new-entity pass", "vaultsync new entity", "vaultsync no-change", "no-change pass"),
            ("archive pass", "vaultsync archive", "vaultsync no-change", "no-change pass"),
            ("full pass, no snapshot", "vaultsync full", "floor first import", "floor"),
        )
        for title, mine, ref, ref_name in informative:
            m, f = res.median(mine), res.median(ref)
            if m is not None:
                shown = f"{ref_name} {_fmt(f)}"
                ratio = m / f if f else None
                n = len(res.runs[mine])
                rows.append(Row(scale, f"{title} (median of {n})", _fmt(m), shown, ratio, "(no target)", "info"))
        peak = res.peak_rss_mb()
        binding = res.facts == PEAK_RSS_SCALE
        rows.append(
            Row(
                scale,
                "peak RSS of vaultsync (with git children)",
                "n/a" if peak is None else f"{peak:.0f} MB",
                "",
                None,
                f"< {PEAK_RSS_TARGET_MB:.0f} MB at 200k" if binding else "(target is at 200k)",
                ("PASS" if peak < PEAK_RSS_TARGET_MB else "FAIL") if binding and peak is not None else "info",
            )
        )
    # The references' own growth, for reading vaultsync's: each scale runs minutes after the last, and a shared
    # machine's speed moves in between, which shows as "growth" of work that cannot grow.
    growth = (
        ("first import", "vaultsync first import", True),
        ("no-change pass", "vaultsync no-change", True),
        ("floor (reference)", "floor first import", False),
        ("git status (reference)", "git status", False),
    )
    for title, key, judged in growth:
        per_fact = {res.facts: res.median(key) / res.facts for res in results if res.median(key) is not None}
        target = f"<= {TARGETS['growth']}x" if judged else "(the machine)"
        if len(per_fact) >= 2:
            rise, spread = growth_of(per_fact)
            shown = ", ".join(f"{f // 1000}k {v * 1e6:.0f} us" for f, v in sorted(per_fact.items()))
            reference = f"larger / smaller (max / min {spread:.2f}x)"
            verdict = _verdict(rise, TARGETS["growth"]) if judged else "info"
            rows.append(Row("all", f"growth: {title} time per fact", shown, reference, rise, target, verdict))
        else:
            rows.append(Row("all", f"growth: {title} time per fact", "n/a", "needs 2+ scales", None, target, "n/a"))
    return rows


def print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="vaultsync benchmarks (ratios are measured in this run; absolute seconds are not portable)")
    for column in ("scale", "benchmark", "vaultsync", "reference", "ratio", "target", "result"):
        table.add_column(column, justify="right" if column in ("ratio",) else "left")
    colours = {"PASS": "green", "FAIL": "red", "ERROR": "bold red"}
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        verdict = f"[{colours[row.verdict]}]{row.verdict}[/]" if row.verdict in colours else row.verdict
        table.add_row(row.scale, row.benchmark, row.measured, row.reference, ratio, row.target, verdict)
    Console(width=160).print(table)


def machine() -> dict[str, str]:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "vaultsync"], capture_output=True)
    # The interpreter that runs vaultsync and the floor, which may not be the one running this script.
    version = subprocess.run(
        [str(PYTHON), "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
    ).stdout.strip()
    mem_kb = next(
        (
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    return {
        "nproc": str(os.cpu_count()),
        "python": f"{version or platform.python_version()} ({portable(str(PYTHON))})",
        "git": git,
        "os": platform.platform(),
        "memory": f"{mem_kb // 1024} MB",
        "vaultsync": (head.stdout.strip() or "unknown") + (" with uncommitted changes" if dirty.stdout else ""),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": datetime.now().strftime("%Y-%m-%d %H:%M"),
    }


DOC_BEGIN = "<!-- from here to the end marker, benchmarks/run.py --write-docs writes; edit the text around it -->"
DOC_END = "<!-- end of the part benchmarks/run.py writes -->"


def portable(arg: str) -> str:
    """An argument or path as the doc shows it: inside the repository, relative to it (``.venv/bin/python``);
    elsewhere, by its name alone. The doc is read on other machines, where one machine's folders mean nothing.
    """
    option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if not value.startswith("/"):
        return arg
    path = Path(value)
    shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return f"{option}{eq}{shown}"


def splice(old: str | None, generated: str) -> str:
    """The doc with the part between the markers replaced by ``generated``; the text around it is kept as is.

    A doc without the markers keeps all its text and gets the generated part at its end, so no explanation a
    person wrote is ever lost to a rewrite; move the block where it belongs once.
    """
    body = generated.strip("\n")
    block = f"{DOC_BEGIN}\n{body}\n{DOC_END}"
    if old is None:
        return f"# Performance\n\n{block}\n"
    head, begin, rest = old.partition(DOC_BEGIN)
    if begin and DOC_END in rest:
        return head + block + rest.split(DOC_END, 1)[1]
    return old.rstrip("\n") + "\n\n" + block + "\n"


def generated_docs(
    rows: list[Row],
    results: list[ScaleResult],
    skipped: list[str],
    info: dict[str, str],
    cold: str,
    command: str,
    elapsed: float,
) -> str:
    """The latest run, as docs/performance.md shows it: the verdicts, the trees, the machine and the command.

    Each repeat's seconds, peak memory and exit code go to the ``--json`` file, and ``--profile``'s profile to
    the terminal, rather than the doc: the doc explains, and the ratios of medians are what a reader compares
    with the targets.
    """
    lines = [
        "## Latest results",
        "",
        f"Measured on {info['date']} by the command at the end of this part; each ratio is of medians taken in",
        "that one run (see [How it is measured](#how-it-is-measured)).",
        "",
        "| scale | benchmark | vaultsync | reference | ratio | target | result |",
        "| --- | --- | --- | --- | ---: | --- | --- |",
    ]
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        lines.append(
            f"| {row.scale} | {row.benchmark} | {row.measured} | {row.reference} | {ratio} | {row.target} | "
            f"**{row.verdict}** |"
        )
    if skipped:
        lines += ["", "Not measured in this run: " + "; ".join(skipped) + "."]
    lines += ["", "### Trees", ""]
    lines += ["| facts | entities | superseded | id-less | Chinese | wrapped files | daily notes |"]
    lines += ["| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for res in results:
        s = res.stats
        lines.append(
            f"| {s.get('facts', 0)} | {s.get('entities', 0)} | {s.get('superseded', 0)} | {s.get('idless', 0)} | "
            f"{s.get('chinese', 0)} | {s.get('wrapped', 0)} | {s.get('daily_notes', 0)} |"
        )
    problems = [f"{res.facts // 1000}k: {f}" for res in results for f in res.failures]
    scales_of: dict[str, list[str]] = {}
    for res in results:
        for note in res.notes:
            scales_of.setdefault(note, []).append(f"{res.facts // 1000}k")
    notes = [f"{', '.join(scales)}: {note}" for note, scales in scales_of.items()]
    if problems:
        lines += ["", "### Failures", ""] + [f"- {p}" for p in problems]
    if notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in notes]
    lines += [
        "",
        "### Machine",
        "",
        f"- vaultsync: commit {info['vaultsync']}",
        f"- nproc: {info['nproc']}; memory: {info['memory']}; OS: {info['os']}",
        f"- Python: {info['python']}; {info['git']}",
        f"- load average at the start: {info['load']}",
        f"- page cache: {cold}",
        f"- total run time: {elapsed / 60:.1f} min",
        "",
        "```sh",
        command,
        "```",
    ]
    return "\n".join(lines)


def write_docs(path: Path, generated: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(splice(old, generated), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the vaultsync benchmarks and print ratios with PASS/FAIL.")
    parser.add_argument("--scale", choices=sorted(SCALES), default="small", help="small: 5k facts; full: 5k/50k/200k")
    parser.add_argument("--max-facts", type=int, help="skip scales above this many facts")
    parser.add_argument("--repeats", type=int, help="override the repeats of every scenario")
    parser.add_argument("--budget-minutes", type=float, help="skip a scale whose estimated time exceeds what is left")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before one child run is killed")
    parser.add_argument("--warm", action="store_true", help="do not drop the page cache before timed runs")
    parser.add_argument("--profile", action="store_true", help="cProfile one no-change pass at the largest scale")
    parser.add_argument("--write-docs", action="store_true", help=f"write {DOCS.relative_to(ROOT)}")
    parser.add_argument("--json", type=Path, help="also write every measurement to this JSON file")
    parser.add_argument("--tmp", type=Path, help="where the temp dirs go (default: the system temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs")
    parser.add_argument("--live", action="store_true", help="run vaultsync/ in place instead of a snapshot of it")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    plan = SCALES[args.scale]
    skipped = [
        f"{f // 1000}k facts (over --max-facts {args.max_facts})" for f in plan if args.max_facts and f > args.max_facts
    ]
    scales = {f: r for f, r in plan.items() if not args.max_facts or f <= args.max_facts}
    if args.repeats:
        scales = {f: Repeats(args.repeats, args.repeats, args.repeats) for f in scales}
    cold = not args.warm and drop_caches()
    cache = (
        "cold: dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`) before every timed run"
        if cold
        else "warm: the page cache was not dropped"
        + (" (--warm)" if args.warm else " (not permitted here: drop_caches could not be written)")
    )
    info = machine()
    called = [sys.executable, *sys.argv] if argv is None else ["benchmarks/run.py", *argv]
    command = shlex.join(portable(arg) for arg in called)
    print(f"vaultsync benchmarks, scale {args.scale}: {', '.join(str(f) for f in scales)} facts; cache {cache}")
    print(f"machine: {json.dumps(info)}")

    tmp = Path(tempfile.mkdtemp(prefix="vaultsync-bench-", dir=args.tmp))
    bench = Bench(tmp, cold, args.timeout)
    results: list[ScaleResult] = []
    profile: tuple[int, str] | None = None
    profiled = max((f for f in scales if f <= PROFILE_FACTS), default=min(scales, default=0))

    def report(final: bool) -> list[Row]:
        rows = rows_for(results)
        pending = [
            f"{f // 1000}k facts (the run stopped before it)" for f in scales if f not in {r.facts for r in results}
        ]
        if args.write_docs:
            shown_skips = skipped + ([] if final else pending)
            elapsed = time.perf_counter() - started
            write_docs(DOCS, generated_docs(rows, results, shown_skips, info, cache, command, elapsed))
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
        return rows

    try:
        if not args.live:
            print(f"vaultsync under test: {bench.snapshot()}")
        info["vaultsync"] += f"; ran {bench.source}"
        for facts, repeats in scales.items():
            estimate = _estimate(results, facts, repeats)
            left = None if args.budget_minutes is None else args.budget_minutes * 60 - (time.perf_counter() - started)
            if left is not None and estimate is not None and estimate > left:
                why = f"{facts // 1000}k facts (estimated {estimate / 60:.0f} min from the smaller scale's per-fact"
                skipped.append(why + f" times, over the {args.budget_minutes:.0f} min budget)")
                print(f"\n== skipping {facts} facts: estimated {estimate / 60:.0f} min > {left / 60:.0f} min left")
                continue
            res, prof = run_scale(bench, facts, repeats, args.profile and facts == profiled)
            results.append(res)
            if prof:
                profile = (facts, prof)
            report(final=False)
    except KeyboardInterrupt:
        print("\ninterrupted: reporting what was measured", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows = report(final=True)
    print()
    print_table(rows)
    for res in results:
        for failure in res.failures:
            print(f"[{res.facts}] ERROR: {failure}")
        for note in res.notes:
            print(f"[{res.facts}] note: {note}")
    if profile:
        print(f"\nno-change pass at {profile[0]} facts under cProfile (top 15 by cumulative time):\n{profile[1]}")
    if skipped:
        print("not measured: " + "; ".join(skipped))
    print(f"cache: {cache}; total {timedelta(seconds=round(time.perf_counter() - started))}")
    if args.write_docs:
        print(f"wrote {DOCS}")
    return 1 if any(r.failures for r in results) else 0


def _estimate(done: list[ScaleResult], facts: int, repeats: Repeats) -> float | None:
    """Seconds a scale should take, scaling the largest finished scale's per-fact times linearly (optimistic)."""
    if not done:
        return None
    prev = max(done, key=lambda r: r.facts)
    per = {k: (prev.median(k) or 0.0) / prev.facts for k in prev.runs}
    first = per.get("vaultsync first import", 0) + per.get("floor first import", 0)
    total = first * repeats.first_import + per.get("vaultsync no-change", 0) * (repeats.no_change + 1)
    total += per.get("vaultsync small change", 0) * repeats.small_change
    return total * facts


if __name__ == "__main__":
    sys.exit(main())
