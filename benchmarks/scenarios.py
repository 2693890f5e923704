"""The scenarios timed at each scale: the first import, no-change and small-change passes, full passes, new
entities, archived folders and standing problems, each on a fresh copy of a generated memory."""

from __future__ import annotations

import io
import json
import os
import pstats
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from generate import END_DATE, generate, scale_args
from measure import FLOOR, PYTHON, ROOT, Bench, Repeats, Run, ScaleResult, why


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
            res.failures.append(f"vaultsync init failed (exit {init.rc}): {why(init)}")
            return None
        run = res.add("vaultsync first import", bench.child("first import", _sync(bench, case)))
        _progress(res, "first import", r, run)
        if not run.ok:
            res.failures.append(f"first import exited {run.rc}: {why(run)}")
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
            res.failures.append(f"floor exited {run.rc}: {why(run)}")
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
                res.failures.append(f"small-change pass exited {run.rc}: {why(run)}")
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
        res.failures.append(f"{label} exited {run.rc}: {why(run)}")
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
            res.failures.append(f"new-entity pass exited {run.rc}: {why(run)}")


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
            res.failures.append(f"archive pass exited {run.rc} or moved nothing: {why(run)}")


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
            res.failures.append(f"a pass with a standing warning exited {run.rc} or left it unsaid: {why(run)}")
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
        return f"(profiling failed: exit {run.rc}: {why(run)})"
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
