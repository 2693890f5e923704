"""Concurrency: sync passes running while Obsidian autosaves and the agent writes, and two passes at once.

vaultsync runs from a timer while the person types in Obsidian and the agent rewrites its files, so a pass always
races other writers. Three kinds of test:

1. **Stress**: a separate writer process edits both sides for a few seconds (fact note bodies and an entity note
   body the way Obsidian's autosave rewrites a note, a daily note the way a line is added to it, ``items.json``
   the way an agent rewrites it with ``json.dumps(indent=2)``, ``memory/YYYY-MM-DD.md`` the way an agent appends)
   at random short intervals and logs every write. Meanwhile this process runs passes in a loop (and, in one
   scenario, ``vaultsync sync`` subprocesses compete for the lock). Then passes run until quiet and the log is the
   oracle: appended lines accumulate, so every one must be on both sides (or, for a note both sides appended to,
   in a conflict copy); a rewritten body is the writer's own to overwrite, so only its last version must be there.
   The writer also checks, before each write, that no pass replaced what it wrote last ("in flight").
2. **Compare-and-swap**: a second process writes the very file the pass is about to write, after the pass read it
   (the pass's ``progress`` callback runs before each action, so the timing is exact and nothing is mocked). The
   pass must leave that file alone and the next pass must merge the edit.
3. **The run lock**: a second ``vaultsync sync`` (or ``status``) while a pass runs exits 3 and touches nothing.

CI runs each stress scenario for ``CI_SECONDS`` with the writer replacing rewritten files by rename; ``-m slow``
(or ``VAULTSYNC_CONCURRENCY_SECONDS=N``) runs them longer, and also with the writer rewriting in place (truncate,
then write) as Obsidian does, so passes also read half-written notes. One known limit is pinned by a strict
xfail at the end: an agent appending through a file handle it keeps open loses what it writes after a pass
replaced the file (see docs/safety.md).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO
from helpers.twoway import (
    LIWEI,
    LIWEI_DIR,
    MIGUEL,
    MIGUEL_DIR,
    NOW,
    SARAH,
    SARAH_DIR,
    TODAY,
    Env,
    body_of,
    dump_items,
    props_of,
    set_body,
    split,
)

from vaultsync.app.sync import PassOptions, sync
from vaultsync.errors import LockHeld
from vaultsync.memory.tree import parse_summary
from vaultsync.model import ExitCode, Report
from vaultsync.system import fs, renames
from vaultsync.vault.notes import read_entity_note
from vaultsync.vault.scan import CONFLICT_MARK

SEED = int(os.environ.get("VAULTSYNC_CONCURRENCY_SEED", "20261201"))
CI_SECONDS = 3.0
SLOW_SECONDS = 60.0
SETTLE_PASSES = 3
# Daily notes: one only the person appends to, one only the agent appends to, one both append to.
PERSON_DAY, AGENT_DAY, SHARED_DAY = "2026-11-29", "2026-11-30", "2026-12-01"
LOCKED_MESSAGE = "vaultsync: another pass is running (lock held); try again when it ends\n"
WARNED_CHANGED = "changed while the pass ran; left as it is for the next pass"

WRITER = r'''
"""The other writer: Obsidian's autosave on the vault side, the agent on the memory side. Logs every write."""
import json, os, random, re, sys, time

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
rng = random.Random(spec["seed"])
log = open(spec["log"], "a", encoding="utf-8", buffering=1)
VIEW = "\n%% vaultsync: live view"
MARK = re.compile(r"Writer mark: (\S+)")
last = {}  # path -> what this writer last put there, for the in-flight check


def emit(record):
    log.write(json.dumps(record, ensure_ascii=False) + "\n")


def violation(path, found, expected):
    emit({"op": "violation", "path": path, "found": found, "expected": expected})


def read(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8")


def put(path, data):
    if spec["rewrite"] == "in-place":  # what Obsidian and most agents do: truncate, then write
        with open(path, "wb") as handle:
            handle.write(data)
        return
    tmp = os.path.join(os.path.dirname(path), ".writer-" + os.path.basename(path))
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def fact_body(op, marker):
    text = read(op["path"])
    end = text.index("\n---\n", 3) + 5
    if op["path"] in last and text[end:] != last[op["path"]]:
        violation(op["path"], text[end:], last[op["path"]])
    body = op["text"].replace("{marker}", marker) + "\n"
    put(op["path"], (text[:end] + body).encode())
    last[op["path"]] = body
    return body


def entity_body(op, marker):
    text = read(op["path"])
    found = MARK.search(text)
    if op["path"] in last and (found.group(1) if found else None) != last[op["path"]]:
        violation(op["path"], found.group(0) if found else None, last[op["path"]])
    if found:
        text = text[: found.start(1)] + marker + text[found.end(1) :]
    else:
        cut = text.index(VIEW)
        text = text[:cut] + "\nWriter mark: " + marker + "\n" + text[cut:]
    put(op["path"], text.encode())
    last[op["path"]] = marker
    return "Writer mark: " + marker


def items_add(op, marker):
    doc = json.loads(read(op["path"]))
    ids = {f.get("id") for f in doc if isinstance(f, dict)}
    gone = sorted(set(last.get(op["path"], [])) - ids)
    if gone:
        violation(op["path"], "facts missing: " + ", ".join(gone), "all added facts")
    fact_id = op["prefix"] + marker
    doc.append({"id": fact_id, "fact": "Concurrency fact " + marker, "category": "test",
                "timestamp": "2026-12-01", "source": "concurrency writer", "status": "active",
                "supersededBy": None})
    put(op["path"], (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode())
    last.setdefault(op["path"], []).append(fact_id)
    return fact_id


def append(op, marker):
    line = "- " + marker + " " + op["who"] + " wrote this line\n"
    with open(op["path"], "a", encoding="utf-8") as handle:
        handle.write(line)
    return line


KINDS = {"fact_body": fact_body, "entity_body": entity_body, "items_add": items_add, "append": append}
end = time.monotonic() + spec["seconds"]
count = 0
while time.monotonic() < end:
    op = rng.choice(spec["ops"])
    count += 1
    marker = "mk%06dz" % count
    t0 = time.monotonic_ns()
    data = KINDS[op["kind"]](op, marker)
    emit({"op": op["kind"], "path": op["path"], "marker": marker, "data": data,
          "t0": t0, "t1": time.monotonic_ns()})
    time.sleep(rng.uniform(spec["min_gap"], spec["max_gap"]))
emit({"op": "done", "count": count})
'''


# -- fixtures ---------------------------------------------------------------------------------------------------
class Clock:
    """A ``now`` one second later on every call: each pass gets its own conflict-copy stamp.

    Two passes within one wall-clock second share a stamp, which is a bug of its own
    (``test_two_conflicts_in_one_second_keep_both_vault_versions``); the stress tests are after other races.
    """

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> datetime:
        self.calls += 1
        return NOW + timedelta(seconds=self.calls)


# -- the stress scenarios -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    name: str
    ops: Callable[[Env], list[dict[str, Any]]]
    cli_passes: bool  # `vaultsync sync` subprocesses compete with the in-process passes for the lock
    conflicts: bool  # both sides edit one unit, so conflict copies are expected


def _fact_op(env: Env, stem: str, text: str) -> dict[str, Any]:
    return {"kind": "fact_body", "path": str(env.fact_note(SARAH_DIR, stem)), "text": text}


def _common_ops(env: Env) -> list[dict[str, Any]]:
    """Units only one side edits: whatever the interleaving, the writer's last version must be on both sides."""
    return [
        _fact_op(env, "sarah-chen-004", "Sarah Chen prefers a written agenda the day before any meeting ({marker})"),
        _fact_op(
            env,
            "sarah-chen-006",
            "Sarah Chen presents the Project Atlas pilot results to Acme Corp leadership on 2026-12-10 ({marker})",
        ),
        {"kind": "entity_body", "path": str(env.vault / MIGUEL_DIR / "miguel-ortiz.md")},
        {"kind": "items_add", "path": str(env.items_path(LIWEI)), "prefix": "li-wei-"},
        {"kind": "append", "path": str(env.vault / f"Daily/{PERSON_DAY}.md"), "who": "person"},
        {"kind": "append", "path": str(env.mem_file(f"memory/{AGENT_DAY}.md")), "who": "agent"},
    ]


def _shared_ops(env: Env) -> list[dict[str, Any]]:
    """Today's daily note, appended to on both sides: every pass that sees both ends in a conflict copy."""
    shared = [
        {"kind": "append", "path": str(env.vault / f"Daily/{SHARED_DAY}.md"), "who": "person"},
        {"kind": "append", "path": str(env.mem_file(f"memory/{SHARED_DAY}.md")), "who": "agent"},
    ]
    return _common_ops(env) + shared * 2


SEPARATE = Scenario("separate-units", _common_ops, cli_passes=True, conflicts=False)
SHARED = Scenario("shared-daily-note", _shared_ops, cli_passes=False, conflicts=True)


@dataclass
class Tally:
    passes: int = 0
    during: int = 0  # passes that ran while the writer wrote
    lock_held: int = 0
    skipped_writes: int = 0
    conflicts: int = 0
    exit_codes: Counter[int] = field(default_factory=Counter)
    cli: list[subprocess.CompletedProcess[str]] = field(default_factory=list)

    def line(self) -> str:
        cli_codes = Counter(run.returncode for run in self.cli)
        return (
            f"{self.passes} passes ({self.during} while the writer wrote; exit codes {dict(self.exit_codes)}), "
            f"{self.lock_held} refused by the lock, "
            f"{self.skipped_writes} writes left for the next pass, {self.conflicts} conflicts, "
            f"{len(self.cli)} `vaultsync sync` children (exit codes {dict(cli_codes)})"
        )

    def record(self, report: Report) -> None:
        self.passes += 1
        self.exit_codes[int(report.exit_code)] += 1
        self.skipped_writes += sum(1 for p in report.problems if p.message == WARNED_CHANGED)
        self.conflicts += len(report.conflicts)


class CliPasses(threading.Thread):
    """``vaultsync sync`` in a loop, as a second scheduler would start it, until told to stop."""

    def __init__(self, env: Env, tally: Tally) -> None:
        super().__init__(daemon=True)
        self.env = env
        self.tally = tally
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            self.tally.cli.append(cli(self.env, "sync"))


def cli(env: Env, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "vaultsync.cli", *args, "--config", str(env.config_path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def start_writer(
    tmp: Path, ops: list[dict[str, Any]], seconds: float, rewrite: str, seed: int
) -> subprocess.Popen[str]:
    spec = {
        "seed": seed,
        "seconds": seconds,
        "rewrite": rewrite,
        "min_gap": 0.002,
        "max_gap": 0.025,
        "log": str(tmp / "writer.log"),
        "ops": ops,
    }
    (tmp / "writer.json").write_text(json.dumps(spec), encoding="utf-8")
    return subprocess.Popen([sys.executable, "-c", WRITER, str(tmp / "writer.json")], stderr=subprocess.PIPE, text=True)


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def passes_while(
    env: Env, writer: subprocess.Popen[str], clock: Clock, tally: Tally, scenario: Scenario, torn_reads: bool
) -> None:
    """Run passes back to back, a random breath apart, until the writer is done.

    With ``torn_reads`` (the writer truncates, then writes) a pass may read a half-written file: an unreadable
    ``items.json`` or note is reported (exit 5) and left for the next pass, so errors are allowed mid-run.
    """
    rng = random.Random(f"{SEED}:passes")
    while writer.poll() is None:
        try:
            report = sync(env.cfg, PassOptions(today=TODAY, now=clock))
        except LockHeld:  # a `vaultsync sync` child holds it
            tally.lock_held += 1
            time.sleep(0.005)
            continue
        tally.record(report)
        assert not report.stopped, report.stopped
        allowed = {ExitCode.CLEAN, ExitCode.CONFLICTS} if scenario.conflicts else {ExitCode.CLEAN}
        allowed |= {ExitCode.SKIPPED_INPUT} if torn_reads else set()
        assert report.exit_code in allowed, report.to_json()
        if not scenario.conflicts and not torn_reads:
            # No unit has edits on both sides and nothing is written on the writer's files: nothing to warn about.
            assert report.problems == [], [p.line() for p in report.problems]
            assert report.conflicts == []
        time.sleep(rng.uniform(0, 0.02))


def settle(env: Env, clock: Clock, tally: Tally) -> None:
    """Passes until one writes and commits nothing (at most SETTLE_PASSES), then one that must change nothing."""
    for _ in range(SETTLE_PASSES):
        report = env.sync(now=clock)
        tally.record(report)
        assert not report.stopped, report.stopped
        if report.files_written == 0 and not report.commits and not report.actions:
            break
    else:
        raise AssertionError(f"still writing after {SETTLE_PASSES} passes: {report.actions}")
    head, before, base = env.head(), env.snapshot(), (env.vault / ".vaultsync/base.sqlite").read_bytes()
    report = env.sync(now=clock)
    tally.record(report)
    assert report.actions == [] and report.files_written == 0 and report.commits == [], report.actions
    assert report.exit_code in (ExitCode.CLEAN, ExitCode.CONFLICTS), report.to_json()
    assert [p for p in report.problems if p.severity != "note"] == [], [p.line() for p in report.problems]
    assert env.head() == head
    assert env.snapshot() == before
    assert (env.vault / ".vaultsync/base.sqlite").read_bytes() == base


def run_stress(env: Env, tmp: Path, scenario: Scenario, seconds: float, rewrite: str) -> tuple[int, Tally]:
    """One writer run against the pass loop; returns (writer operations, tally) after every check passed."""
    clock = Clock()
    tally = Tally()
    seed = random.Random(f"{SEED}:{scenario.name}:{rewrite}").randrange(2**32)
    writer = start_writer(tmp, scenario.ops(env), seconds, rewrite, seed)
    others = CliPasses(env, tally) if scenario.cli_passes else None
    try:
        if others:
            others.start()
        passes_while(env, writer, clock, tally, scenario, torn_reads=rewrite == "in-place")
        tally.during = tally.passes
    finally:
        if writer.poll() is None:
            writer.kill()
        _, err = writer.communicate()
        if others:
            others.halt.set()
            others.join()
    assert writer.returncode == 0, err
    assert tally.during >= 3, f"only {tally.during} passes ran while the writer wrote"
    log = read_log(tmp / "writer.log")
    assert log and log[-1]["op"] == "done", "the writer did not finish its log"
    for run in tally.cli:
        if run.returncode == ExitCode.LOCKED:
            assert run.stderr == LOCKED_MESSAGE and run.stdout == ""
        else:
            allowed = (ExitCode.CLEAN, ExitCode.SKIPPED_INPUT) if rewrite == "in-place" else (ExitCode.CLEAN,)
            assert run.returncode in allowed, (run.returncode, run.stdout, run.stderr)
            assert run.stderr == "", run.stderr
    settle(env, clock, tally)
    check_oracle(env, log[:-1], scenario)
    check_repository(env)
    return log[-1]["count"], tally


# -- the oracle ----------------------------------------------------------------------------------------------------
def conflict_copies(note: Path) -> list[Path]:
    return sorted(note.parent.glob(f"{note.stem}{CONFLICT_MARK}*.md"))


def fact_notes(env: Env, vault_dir: str) -> dict[str, Path]:
    return {p.stem: p for p in (env.vault / vault_dir / "facts").glob("*.md") if CONFLICT_MARK not in p.name}


def assert_entity_agrees(env: Env, rel: str, vault_dir: str) -> None:
    """Every fact of ``items.json`` has its note with its text as the body, and there is no other fact note."""
    facts = env.facts(rel)
    ids = [f.get("id") for f in facts]
    assert all(isinstance(i, str) for i in ids), f"{rel}: a fact lost its id: {facts}"
    assert len(set(ids)) == len(ids), f"{rel}: repeated ids {ids}"
    notes = fact_notes(env, vault_dir)
    assert set(notes) == set(ids), f"{rel}: notes {sorted(notes)} vs facts {ids}"
    for fact in facts:
        note = notes[fact["id"]]
        assert body_of(note) == fact["fact"] + "\n", note
        assert props_of(note)["id"] == fact["id"]


def summary_body(env: Env, rel: str) -> str:
    return parse_summary((env.life / rel / "summary.md").read_bytes()).content.body


def entity_note_body(env: Env, vault_dir: str) -> str:
    return read_entity_note((env.vault / vault_dir / f"{vault_dir.rsplit('/', 1)[1]}.md").read_text())[1]


def check_oracle(env: Env, log: list[dict[str, Any]], scenario: Scenario) -> None:
    """Every write in the log is where it must be, both sides agree, and no file is torn."""
    violations = [r for r in log if r["op"] == "violation"]
    assert violations == [], f"a pass replaced what the writer had just written: {violations[:3]}"
    writes = [r for r in log if r["op"] != "violation"]
    ops = Counter(r["op"] for r in writes)
    assert all(ops[k] > 0 for k in ("fact_body", "entity_body", "items_add", "append")), ops

    # Rewrites: only the writer's last version of each note counts, and it is on both sides.
    last: dict[str, dict[str, Any]] = {}
    for record in writes:
        last[record["path"]] = record
    notes = fact_notes(env, SARAH_DIR)
    for stem in ("sarah-chen-004", "sarah-chen-006"):
        record = last[str(notes[stem])]
        assert body_of(notes[stem]) == record["data"], f"{stem}: the writer's last text is not in the note"
        assert env.fact(SARAH, stem)["fact"] == record["data"].rstrip("\n"), f"{stem}: not in items.json"
        assert conflict_copies(notes[stem]) == []
    mark = last[str(env.vault / MIGUEL_DIR / "miguel-ortiz.md")]["data"]
    for side, body in (("summary.md", summary_body(env, MIGUEL)), ("the note", entity_note_body(env, MIGUEL_DIR))):
        assert re.findall(r"Writer mark: \S+", body) == [mark], f"miguel-ortiz {side}: {body[-200:]!r}"

    # Accumulating writes: every added fact and every appended line survives.
    added = [r["data"] for r in writes if r["op"] == "items_add"]
    liwei = {f["id"]: f for f in env.facts(LIWEI)}
    missing = [i for i in added if i not in liwei]
    assert missing == [], f"facts the agent added are gone: {missing}"
    for fact_id in added:
        assert liwei[fact_id]["fact"] == "Concurrency fact " + fact_id.removeprefix("li-wei-")
    for rel, vault_dir in ((SARAH, SARAH_DIR), (MIGUEL, MIGUEL_DIR), (LIWEI, LIWEI_DIR)):
        assert_entity_agrees(env, rel, vault_dir)
    assert summary_body(env, MIGUEL) == entity_note_body(env, MIGUEL_DIR)

    days = [PERSON_DAY, AGENT_DAY] + ([SHARED_DAY] if scenario.conflicts else [])
    for day in days:
        check_daily(env, day, [r for r in writes if r["op"] == "append"])
    if not scenario.conflicts:
        copies = sorted(p.relative_to(env.vault).as_posix() for p in env.vault.rglob(f"*{CONFLICT_MARK}*"))
        assert copies == []
    leftovers = [p for root in (env.vault, env.root / "mem") for p in root.rglob("*") if p.name.endswith(".vstmp")]
    assert leftovers == [], leftovers


def check_daily(env: Env, day: str, appends: list[dict[str, Any]]) -> None:
    """Both copies of the day are equal; the agent's lines are all in them; the person's in them or in a copy."""
    mem_path = env.mem_file(f"memory/{day}.md")
    vault_path = env.vault / f"Daily/{day}.md"
    final = mem_path.read_text(encoding="utf-8")
    assert vault_path.read_text(encoding="utf-8") == final, f"{day}: the two sides differ"
    original = set((REPO / "vault-example/workspace/memory" / f"{day}.md").read_text().splitlines())
    written = {
        "agent": [r["data"].rstrip("\n") for r in appends if r["path"] == str(mem_path)],
        "person": [r["data"].rstrip("\n") for r in appends if r["path"] == str(vault_path)],
    }
    lines = final.splitlines()
    known = original | set(written["agent"]) | set(written["person"])
    assert [line for line in lines if line not in known] == [], f"{day}: torn or foreign lines"
    assert final.endswith("\n")
    present = Counter(lines)
    assert [line for line, n in present.items() if n > 1 and line.startswith("- mk")] == [], f"{day}: repeated"
    in_order = [line for line in lines if line in set(written["agent"])]
    assert in_order == written["agent"], f"{day}: agent lines missing or out of order"
    copies = conflict_copies(vault_path)
    kept = {line for copy in copies for line in copy.read_text(encoding="utf-8").splitlines()}
    lost = [line for line in written["person"] if line not in present and line not in kept]
    assert lost == [], f"{day}: the person's lines are nowhere: {lost[:5]}"
    if copies:
        assert kept <= known, f"{day}: torn lines in a conflict copy"
    else:
        in_order = [line for line in lines if line in set(written["person"])]
        assert in_order == written["person"], f"{day}: person lines out of order"


def check_repository(env: Env) -> None:
    """Everything is committed and the repository is sound."""
    assert env.git("status", "--porcelain", "--untracked-files=all") == ""
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=env.vault, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    bad = [line for line in (fsck.stdout + fsck.stderr).splitlines() if not line.startswith("dangling ")]
    assert bad == [], bad


# -- 1. stress ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scenario", [SEPARATE, SHARED], ids=lambda s: s.name)
def test_passes_while_both_sides_write(env: Env, tmp_path: Path, scenario: Scenario) -> None:
    """A few seconds of autosaves and agent writes under back-to-back passes: nothing lost, sides agree."""
    count, tally = run_stress(env, tmp_path, scenario, CI_SECONDS, "rename")
    print(f"\n{scenario.name}: {count} writer operations, {tally.line()}")


def _slow_seconds(request: pytest.FixtureRequest) -> float | None:
    """Slow tests run when asked for (``-m slow`` or VAULTSYNC_CONCURRENCY_SECONDS), not in the plain CI run."""
    if "VAULTSYNC_CONCURRENCY_SECONDS" in os.environ:
        return float(os.environ["VAULTSYNC_CONCURRENCY_SECONDS"])
    return SLOW_SECONDS if "slow" in (request.config.getoption("markexpr") or "") else None


@pytest.mark.slow
@pytest.mark.parametrize("rewrite", ["rename", "in-place"])
@pytest.mark.parametrize("scenario", [SEPARATE, SHARED], ids=lambda s: s.name)
def test_passes_while_both_sides_write_long(
    env: Env, tmp_path: Path, scenario: Scenario, rewrite: str, request: pytest.FixtureRequest
) -> None:
    """Bug hunting: the stress scenarios for VAULTSYNC_CONCURRENCY_SECONDS (default 60 s) each."""
    seconds = _slow_seconds(request)
    if seconds is None:
        pytest.skip("slow: run with -m slow or VAULTSYNC_CONCURRENCY_SECONDS=N")
    count, tally = run_stress(env, tmp_path, scenario, seconds, rewrite)
    print(f"\n{scenario.name}/{rewrite}: {count} writer operations over {seconds:.0f} s, {tally.line()}")


# -- 2. compare-and-swap: a second process writes the file after the pass read it ---------------------------------
OTHER_WRITER = "import sys; open(sys.argv[1], sys.argv[2], encoding='utf-8', newline='').write(sys.argv[3])"


def other_process(path: Path, text: str, mode: str = "w") -> None:
    """Another process rewrites ``path`` in place (``w``, as Obsidian's autosave does) or appends to it (``a``)."""
    subprocess.run([sys.executable, "-c", OTHER_WRITER, str(path), mode, text], check=True, timeout=60)


def sync_racing(env: Env, write: Callable[[], None]) -> Report:
    """One pass, with ``write`` run after its scan and before its first write.

    The pass calls ``progress`` before each action it applies, so the first call falls exactly in the window
    where an autosave or an agent write makes the scanned content stale.
    """
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        if not calls:
            write()
        calls.append(done)

    # Through the write path, which holds the run lock for the whole pass, as every face's pass does.
    report = sync(env.cfg, PassOptions(today=TODAY, now=lambda: NOW, progress=progress))
    assert calls, "the pass had nothing to write"
    return report


def warnings_of(report: Report) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in report.problems]


def assert_clean(report: Report) -> None:
    assert not report.stopped, report.stopped
    assert report.conflicts == [] and report.open_conflicts == [], report.to_json()
    assert report.problems == [], [p.line() for p in report.problems]
    assert report.exit_code == ExitCode.CLEAN


def assert_quiet(env: Env) -> None:
    """A pass with no edits on either side writes nothing and commits nothing, and all is committed."""
    head, before = env.head(), env.snapshot()
    report = env.sync()
    assert_clean(report)
    assert report.actions == [] and report.commits == [], report.actions
    assert env.head() == head
    assert env.snapshot() == before
    assert env.git("status", "--porcelain", "--untracked-files=all") == ""


DAY_NOTE = f"Daily/{AGENT_DAY}.md"
DAY_FILE = f"memory/{AGENT_DAY}.md"
HEADING = f"# {AGENT_DAY}\n\n"
PERSON_LINE = "- 07:55 Nora: call the bank about the visa appointment\n"
AGENT_LINE = "- 18:00 Reminded Nora that the Acme Corp invoice is due on Tuesday\n"
NEW_TEXT = "Sarah Chen prefers a written agenda two working days before any meeting"
REMOTE, REMOTE_EDITED = "fully remote in November 2026", "fully remote in October 2026"
FRIDAYS = "- Reviews firmware pull requests on Fridays\n"


def person_line_added(text: str) -> str:
    assert text.count(HEADING) == 1
    return text.replace(HEADING, HEADING + PERSON_LINE)


def with_body(note: Path, body: str) -> str:
    lines, _ = split(note)
    return "---\n" + "".join(line + "\n" for line in lines) + "---\n" + body


def agent_adds_fact(env: Env) -> str:
    doc = env.items_doc(SARAH)
    doc.append(
        {
            "id": "sarah-chen-007",
            "fact": "Sarah Chen moved the pilot readout to 2026-12-11",
            "category": "milestone",
            "timestamp": "2026-12-01",
            "source": "email",
            "status": "active",
            "supersededBy": None,
        }
    )
    return dump_items(doc).decode()


def check_day(env: Env) -> None:
    original = (REPO / "vault-example/workspace" / DAY_FILE).read_text(encoding="utf-8")
    expected = person_line_added(original) + AGENT_LINE
    assert env.mem_file(DAY_FILE).read_text(encoding="utf-8") == expected
    assert env.note(DAY_NOTE).read_text(encoding="utf-8") == expected


def check_fact(env: Env, **values: str) -> None:
    fact = env.fact(SARAH, "sarah-chen-004")
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    assert fact["fact"] == NEW_TEXT and body_of(note) == NEW_TEXT + "\n"
    for key, value in values.items():
        assert fact[key] == value and props_of(note)[key] == value


def check_summary(env: Env) -> None:
    for body in (summary_body(env, MIGUEL), entity_note_body(env, MIGUEL_DIR)):
        assert REMOTE_EDITED in body and REMOTE not in body
        assert body.endswith(FRIDAYS)


def agent_sets_category(env: Env) -> None:
    def change(facts: list[dict[str, Any]]) -> None:
        next(f for f in facts if f["id"] == "sarah-chen-004")["category"] = "communication"

    env.agent_edit(SARAH, change)


def check_new_fact(env: Env) -> None:
    check_fact(env)
    assert env.fact(SARAH, "sarah-chen-007")["fact"] == "Sarah Chen moved the pilot readout to 2026-12-11"
    assert body_of(env.fact_note(SARAH_DIR, "sarah-chen-007")) == "Sarah Chen moved the pilot readout to 2026-12-11\n"


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


@dataclass(frozen=True)
class Race:
    """The pass carries ``prepare``'s edit into ``target``; after its scan another process writes ``target`` too."""

    name: str
    prepare: Callable[[Env], None]
    target: Callable[[Env], Path]
    shown: Callable[[Env], str]  # the target as the pass's warning names it
    mode: str  # "w": the racing process rewrites the file; "a": it appends
    racing: Callable[[Env, str], str]  # (env, the target's text) -> what the racing process writes
    check: Callable[[Env], None]  # after the next pass: both edits on both sides


def _fact_path(env: Env) -> Path:
    return env.fact_note(SARAH_DIR, "sarah-chen-004")


def _miguel_note(env: Env) -> Path:
    return env.vault / MIGUEL_DIR / "miguel-ortiz.md"


RACES = [
    Race(
        "agent-appends-to-the-daily-note-the-pass-writes",
        lambda env: env.note(DAY_NOTE).write_text(person_line_added(env.note(DAY_NOTE).read_text())),
        lambda env: env.mem_file(DAY_FILE),
        lambda env: f"workspace/{DAY_FILE}",
        "a",
        lambda env, text: AGENT_LINE,
        check_day,
    ),
    Race(
        "person-edits-the-daily-note-the-pass-writes",
        lambda env: _append(env.mem_file(DAY_FILE), AGENT_LINE),
        lambda env: env.note(DAY_NOTE),
        lambda env: DAY_NOTE,
        "w",
        lambda env, text: person_line_added(text),
        check_day,
    ),
    Race(
        "person-edits-the-fact-note-the-pass-writes",
        agent_sets_category,
        _fact_path,
        lambda env: f"{SARAH_DIR}/facts/sarah-chen-004.md",
        "w",
        lambda env, text: with_body(_fact_path(env), NEW_TEXT + "\n"),
        lambda env: check_fact(env, category="communication"),
    ),
    Race(
        "agent-rewrites-the-items-json-the-pass-writes",
        lambda env: set_body(_fact_path(env), NEW_TEXT + "\n"),
        lambda env: env.items_path(SARAH),
        lambda env: f"life/{SARAH}/items.json",
        "w",
        lambda env, text: agent_adds_fact(env),
        check_new_fact,
    ),
    Race(
        "person-edits-the-entity-note-the-pass-writes",
        lambda env: _append(env.life / MIGUEL / "summary.md", FRIDAYS),
        _miguel_note,
        lambda env: f"{MIGUEL_DIR}/miguel-ortiz.md",
        "w",
        lambda env, text: text.replace(REMOTE, REMOTE_EDITED),
        check_summary,
    ),
    Race(
        "agent-appends-to-the-summary-the-pass-writes",
        lambda env: _miguel_note(env).write_text(_miguel_note(env).read_text().replace(REMOTE, REMOTE_EDITED)),
        lambda env: env.life / MIGUEL / "summary.md",
        lambda env: f"life/{MIGUEL}/summary.md",
        "a",
        lambda env, text: FRIDAYS,
        check_summary,
    ),
]


@pytest.mark.parametrize("race", RACES, ids=lambda r: r.name)
def test_a_file_written_after_the_scan_is_left_for_the_next_pass(env: Env, race: Race) -> None:
    """The compare-and-swap: the pass never replaces content it did not read; the next pass merges it instead."""
    race.prepare(env)
    target = race.target(env)
    raced: list[bytes] = []

    def write() -> None:
        other_process(target, race.racing(env, target.read_text(encoding="utf-8")), race.mode)
        raced.append(target.read_bytes())

    report = sync_racing(env, write)
    assert warnings_of(report) == [(race.shown(env), WARNED_CHANGED)]
    assert report.conflicts == [] and report.exit_code == ExitCode.CLEAN
    assert target.read_bytes() == raced[0], "the pass overwrote what the other process wrote after the scan"

    assert_clean(env.sync())
    race.check(env)
    assert_quiet(env)
    check_repository(env)


# -- 3. the run lock ----------------------------------------------------------------------------------------------
def test_a_second_pass_while_one_runs_exits_3_and_touches_nothing(env: Env) -> None:
    """Two passes over one vault at once would each merge against the same base and commit twice: the lock says no."""
    set_body(_fact_path(env), NEW_TEXT + "\n")
    _append(env.mem_file(DAY_FILE), AGENT_LINE)
    state = env.vault / ".vaultsync/base.sqlite"
    children: list[subprocess.CompletedProcess[str]] = []

    def second_passes() -> None:
        head, before, base = env.head(), env.snapshot(), state.read_bytes()
        for args in (("sync",), ("sync", "--json"), ("sync", "--yes"), ("status",), ("status", "--json")):
            children.append(cli(env, *args))
        assert (env.head(), env.snapshot(), state.read_bytes()) == (head, before, base)

    report = sync_racing(env, second_passes)
    for child in children:
        # Under --json the refusal is also one JSON object on standard output (docs/cli.md: Errors under --json).
        said = json.loads(child.stdout) if "--json" in child.args else None
        busy = {"kind": "busy", "message": "another pass is running (lock held)", "hint": "try again when it ends"}
        assert said is None or said == busy | {"exit_code": 3}, child.stdout
        assert (child.returncode, child.stderr) == (ExitCode.LOCKED, LOCKED_MESSAGE), child.args
        assert said is not None or child.stdout == "", child.args
    assert_clean(report)
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == NEW_TEXT
    assert env.note(DAY_NOTE).read_text(encoding="utf-8").endswith(AGENT_LINE)
    # The lock went with the pass: the next one runs, and finds nothing left to do.
    after = cli(env, "sync")
    assert (after.returncode, after.stdout, after.stderr) == (
        ExitCode.CLEAN,
        "wrote 0 file(s), nothing to commit\n",
        "",
    )
    assert_quiet(env)
    check_repository(env)


def test_passes_started_together_run_one_at_a_time(env: Env) -> None:
    """Three `vaultsync sync` started at once, three times over: one runs, the others exit 3 or find nothing to do.

    Each round's edits are made before the children start, so the one that runs carries them; one person commit
    per round shows no two passes committed the same edits.
    """
    note = _fact_path(env)
    for round_ in range(3):
        text = f"{NEW_TEXT} (round {round_})"
        set_body(note, text + "\n")
        line = f"- 18:0{round_} agent line of round {round_}\n"
        _append(env.mem_file(DAY_FILE), line)
        head = env.head()
        command = [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)]
        children = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "abc"]
        outputs = [child.communicate(timeout=120) for child in children]
        results = [(child.returncode, out, err) for child, (out, err) in zip(children, outputs, strict=True)]
        codes = sorted(code for code, _, _ in results)
        assert set(codes) <= {ExitCode.CLEAN, ExitCode.LOCKED} and codes[0] == ExitCode.CLEAN, results
        for code, out, err in results:
            if code == ExitCode.LOCKED:
                assert (out, err) == ("", LOCKED_MESSAGE)
            else:
                assert err == "" and re.search(r"^wrote \d+ file\(s\)", out, re.MULTILINE), (out, err)
        assert env.fact(SARAH, "sarah-chen-004")["fact"] == text
        assert body_of(note) == text + "\n"
        assert env.note(DAY_NOTE).read_text(encoding="utf-8").endswith(line)
        subjects = [env.commit_info(sha)[1] for sha in env.commits_since(head)]
        assert [s for s in subjects if s.startswith("vault -> memory")] == [
            "vault -> memory: people/sarah-chen 1 fact edited"
        ], subjects
        assert len(subjects) <= 2, subjects
    assert_quiet(env)
    check_repository(env)


# -- 4. known bugs -------------------------------------------------------------------------------------------------
def test_an_autosave_during_a_pass_that_writes_both_sides_is_not_overwritten(env: Env) -> None:
    """The person types in a fact note; the text now names Li Wei, so the pass writes items.json (the text) and
    the note (its new ``mentions``). Obsidian autosaves the next keystrokes after the scan: the note write is
    rightly skipped, but items.json is written anyway. The next pass must carry the newest text, not conflict.
    """
    note = _fact_path(env)
    typed = "Sarah Chen wants a written agenda from Li Wei the day before any meeting"
    newest = "Sarah Chen wants a written agenda from Li Wei two days before any meeting"
    set_body(note, typed + "\n")

    report = sync_racing(env, lambda: other_process(note, with_body(note, newest + "\n")))
    assert warnings_of(report) == [(f"{SARAH_DIR}/facts/sarah-chen-004.md", WARNED_CHANGED)]
    assert body_of(note) == newest + "\n"

    report = env.sync()
    assert report.conflicts == [], f"false conflict: {[c.copy_path for c in report.conflicts]}"
    assert body_of(note) == newest + "\n"
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == newest
    assert_quiet(env)


@pytest.mark.parametrize("torn", ["empty", "cut-in-body"])
def test_a_fact_note_read_mid_autosave_costs_nothing(env: Env, torn: str) -> None:
    """Obsidian saves a note by truncating it and writing it again; a pass may read it in between.

    The scan sees the torn note (0 bytes, or the properties and half the text); the autosave completes before
    the pass writes, so the pass's own compare-and-swap skips the note, yet items.json takes the torn record.
    With ``empty`` the fact loses its id and an empty fact and note stay behind for good; with ``cut-in-body``
    the half text wins a false conflict against the real one.
    """
    note = _fact_path(env)
    before = env.fact(SARAH, "sarah-chen-004")
    full = with_body(note, NEW_TEXT + "\n")
    note.write_text("" if torn == "empty" else full[: full.index("two working")], encoding="utf-8")

    if torn == "empty":
        # An empty note is left alone (with a warning), so the pass writes nothing and the race has no window.
        report = env.sync()
        assert report.actions == [], report.actions
        assert any(p.path.endswith("sarah-chen-004.md") and "empty" in p.message for p in report.problems)
        other_process(note, full)
    else:
        sync_racing(env, lambda: other_process(note, full))
    for _ in range(2):
        env.sync()
    assert conflict_copies(note) == []
    assert env.facts(SARAH)[3] == {**before, "fact": NEW_TEXT}
    assert_entity_agrees(env, SARAH, SARAH_DIR)
    assert_quiet(env)


def test_two_conflicts_in_one_second_keep_both_vault_versions(env: Env) -> None:
    """Two passes a moment apart (a file watcher, a person running `vaultsync sync` twice) each meet a conflict on
    one fact note. ``now`` is the same for both, as it is for two passes within one wall-clock second."""
    note = _fact_path(env)

    def agent_text(text: str) -> None:
        def change(facts: list[dict[str, Any]]) -> None:
            next(f for f in facts if f["id"] == "sarah-chen-004")["fact"] = text

        env.agent_edit(SARAH, change)

    for person, agent in (("person's first text", "agent's first text"), ("person's second", "agent's second")):
        set_body(note, person + "\n")
        agent_text(agent)
        report = env.sync()
        assert len(report.conflicts) == 1 and body_of(note) == agent + "\n"
    kept = [body_of(copy) for copy in conflict_copies(note)]
    assert "person's second\n" in kept, f"the person's second text is in no file; copies hold {kept}"


@pytest.mark.xfail(
    strict=True,
    reason="BUG: vaultsync replaces a memory file by rename, so an agent that keeps the file open for appending "
    "(a logging handler) writes every later line into the replaced file, where nothing reads it",
)
def test_an_agent_appending_through_an_open_handle_keeps_its_lines(env: Env) -> None:
    """An agent logs its day through one open file (``logging.FileHandler`` keeps it open) while the person adds a
    line in Obsidian: the pass carries the person's line into the file, then the agent logs its next line."""
    later = "- 18:05 Nora confirmed the invoice amount\n"
    log = env.mem_file(DAY_FILE).open("a", encoding="utf-8")
    try:
        log.write(AGENT_LINE)
        log.flush()
        assert_clean(env.sync())
        note = env.note(DAY_NOTE)
        note.write_text(person_line_added(note.read_text(encoding="utf-8")), encoding="utf-8")
        assert_clean(env.sync())
        log.write(later)
        log.flush()
    finally:
        log.close()
    env.sync()
    for path in (env.mem_file(DAY_FILE), env.note(DAY_NOTE)):
        assert path.read_text(encoding="utf-8").endswith(AGENT_LINE + later), path


@pytest.mark.skipif(renames.renameat2() is None, reason="no atomic exchange of names on this system")
def test_a_save_renamed_in_just_before_the_swap_is_put_back(tmp_path: Path) -> None:
    """The last window of the compare-and-swap: a writer renames its file in after the inode check."""
    target = tmp_path / "2026-12-01.md"
    target.write_text("- as the pass read it\n", encoding="utf-8")
    checked = target.stat().st_ino
    staged = fs.stage(target, b"- as the pass read it\n- the agent's line\n")
    save = tmp_path / "obsidian-save.tmp"
    save.write_text("- as the pass read it\n- the person's line\n", encoding="utf-8")
    os.replace(save, target)  # Obsidian's save lands between the check and the swap

    with pytest.raises(fs.FileChanged):
        fs._swap_in(staged, target, checked)

    assert target.read_text(encoding="utf-8") == "- as the pass read it\n- the person's line\n"
    assert not staged.exists(), "the staged file was left behind"


def test_a_swap_with_nothing_renamed_in_puts_the_new_content_in_place(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_text("old\n", encoding="utf-8")
    staged = fs.stage(target, b"new\n")
    fs._swap_in(staged, target, target.stat().st_ino)
    assert target.read_text(encoding="utf-8") == "new\n"
    assert not staged.exists()


# -- 4. a writer caught between opening a file and writing to it ----------------------------------------------------
def test_a_line_appended_to_the_replaced_file_is_put_back(tmp_path: Path) -> None:
    """An agent opened the daily note to append just before the swap and wrote just after it: that line went to
    the replaced file. The last look puts it back, followed by what was appended to the new file since."""
    target = tmp_path / "2026-12-01.md"
    seen = b"# 2026-12-01\n- as the pass read it\n"
    target.write_bytes(seen)
    ours = seen + b"- the line the pass carried over\n"
    late = target.open("a", encoding="utf-8")  # opened before the swap: the file about to be replaced
    replaced = fs.put(fs.stage(target, ours), target, seen, ours)
    assert replaced is not None and target.read_bytes() == ours
    late.write("- written a moment too late\n")
    late.close()
    with target.open("a", encoding="utf-8") as after:
        after.write("- appended to the new file\n")

    with pytest.raises(fs.FileChanged) as raised:
        fs.settle(replaced)

    assert not isinstance(raised.value, fs.WrittenLate)
    assert target.read_bytes() == seen + b"- written a moment too late\n- appended to the new file\n"
    assert [p.name for p in tmp_path.iterdir()] == [target.name], "a staged file was left behind"


def _replaced(target: Path) -> fs.Replaced | None:
    return fs.put(fs.stage(target, b"new\n"), target, b"old\n", b"new\n")


def _deleted(target: Path) -> fs.Replaced | None:
    return fs.remove_checked(target, b"old\n", keep={target.parent})


@pytest.mark.parametrize("done", [_replaced, _deleted], ids=["replaced", "deleted"])
def test_a_late_write_to_a_note_saved_anew_since_is_handed_back(
    tmp_path: Path, done: Callable[[Path], fs.Replaced | None]
) -> None:
    """The file the pass replaced or deleted got a late line, and the note was saved anew by its name since:
    both versions stay, the late one with the caller, which keeps it where the person can find it."""
    target = tmp_path / "note.md"
    target.write_bytes(b"old\n")
    late = target.open("ab")
    replaced = done(target)
    assert replaced is not None
    target.write_bytes(b"saved by the person\n")  # Obsidian's save, by the note's name
    late.write(b"late\n")
    late.close()

    with pytest.raises(fs.WrittenLate) as raised:
        fs.settle(replaced)

    assert raised.value.data == b"old\nlate\n"
    assert target.read_bytes() == b"saved by the person\n"


def test_a_replaced_file_nobody_wrote_to_settles_quietly(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_bytes(b"old\n")
    replaced = fs.put(fs.stage(target, b"new\n"), target, b"old\n", b"new\n")
    assert replaced is not None
    fs.settle(replaced)
    assert target.read_bytes() == b"new\n"
    with pytest.raises(OSError):
        os.fstat(replaced.fd)


def test_a_line_written_to_a_deleted_note_brings_it_back(tmp_path: Path) -> None:
    """The pass deletes a note an instant after a writer opened it, and the writer's line lands after: the
    note comes back as the writer left it, and the deletion counts as abandoned."""
    target = tmp_path / "facts" / "f001.md"
    target.parent.mkdir()
    target.write_bytes(b"old\n")
    late = target.open("ab")
    deleted = fs.remove_checked(target, b"old\n", keep={tmp_path})
    assert deleted is not None and not target.exists() and not target.parent.exists()
    late.write(b"a line written as the note went\n")
    late.close()

    with pytest.raises(fs.FileChanged) as raised:
        fs.settle(deleted)

    assert not isinstance(raised.value, fs.WrittenLate)
    assert target.read_bytes() == b"old\na line written as the note went\n"


def test_a_deletion_nobody_wrote_to_stays_done(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_bytes(b"old\n")
    deleted = fs.remove_checked(target, b"old\n", keep={tmp_path})
    assert deleted is not None
    fs.settle(deleted)
    assert not target.exists()
    assert fs.remove_checked(target, b"old\n", keep={tmp_path}) is None, "a file already gone is no deletion"


# Run in a child before vaultsync: open ``note`` for appending just before the pass swaps its new version in, and
# write ``line`` through that handle once the pass opens ``trigger`` (a later write of the same pass); then, if
# ``anew`` is not empty, save ``anew`` over the note by its name, as an editor would.
LATE_BOOT = r"""
import sys
note, trigger, line, anew = sys.argv[1:5]
state = {}
def hook(event, args):
    if event == "vaultsync.exchange" and args[1] == note and "handle" not in state:
        state["handle"] = open(note, "a", encoding="utf-8")
    elif event == "open" and str(args[0]) == trigger and state.get("handle"):
        handle, state["handle"] = state["handle"], None
        handle.write(line)
        handle.close()
        if anew:
            with open(note, "w", encoding="utf-8") as again:
                again.write(anew)
sys.addaudithook(hook)
from vaultsync.cli import main
sys.exit(main(sys.argv[5:]))
"""


def late_pass(env: Env, note: Path, trigger: Path, line: str, anew: str = "") -> dict[str, Any]:
    """One ``vaultsync sync`` run with LATE_BOOT; its JSON report."""
    argv = ["sync", "--json", "--config", str(env.config_path)]
    run = subprocess.run(
        [sys.executable, "-c", LATE_BOOT, str(note), str(trigger), line, anew, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.stderr == "", run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    return report


@pytest.mark.skipif(renames.renameat2() is None, reason="no atomic exchange of names on this system")
def test_a_line_written_through_a_handle_opened_before_the_swap_is_kept(env: Env) -> None:
    """The race behind a lost line: the person's editor appends to the daily note through a handle it opened an
    instant before the pass swapped in the agent's new line, and writes after the swap. The pass puts the
    person's version back, and the next pass merges both: two lines added at the same place, both kept."""
    _append(env.mem_file(DAY_FILE), AGENT_LINE)
    set_body(_fact_path(env), NEW_TEXT + "\n")  # so the pass writes items.json after the daily note
    note = env.note(DAY_NOTE)
    before = note.read_text(encoding="utf-8")
    late_line = "- 18:02 Nora: the late line\n"

    report = late_pass(env, note, env.items_path(SARAH), late_line)

    problems = [(p["path"], p["message"]) for p in report["problems"]]
    assert problems == [(DAY_NOTE, WARNED_CHANGED)], report
    assert note.read_text(encoding="utf-8") == before + late_line, "the late line is not back in the note"
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == NEW_TEXT

    merged = env.sync()  # both sides added a line at the end of the day: both kept, the agent's first
    assert merged.conflicts == [] and conflict_copies(note) == []
    assert note.read_text(encoding="utf-8") == before + AGENT_LINE + late_line
    assert env.mem_file(DAY_FILE).read_text(encoding="utf-8") == before + AGENT_LINE + late_line
    head = env.head()
    assert env.sync().actions == [] and env.head() == head
    check_repository(env)


@pytest.mark.skipif(renames.renameat2() is None, reason="no atomic exchange of names on this system")
def test_a_late_line_to_a_note_saved_anew_since_goes_to_the_trash_and_is_named(env: Env) -> None:
    """As above, and the editor then saves the whole note by its name: the late version cannot go back under the
    name without undoing that save, so it is kept in the trash and the warning says where."""
    _append(env.mem_file(DAY_FILE), AGENT_LINE)
    set_body(_fact_path(env), NEW_TEXT + "\n")
    note = env.note(DAY_NOTE)
    before = note.read_text(encoding="utf-8")
    late_line = "- 18:02 Nora: the late line\n"
    saved = before + "- 18:03 Nora: saved over it\n"

    report = late_pass(env, note, env.items_path(SARAH), late_line, anew=saved)

    [problem] = report["problems"]
    assert problem["path"] == DAY_NOTE and problem["severity"] == "warning", problem
    kept = Path(problem["message"].rpartition("that version is in ")[2])
    assert kept.read_text(encoding="utf-8") == before + late_line
    assert kept.is_relative_to(env.vault / ".vaultsync/trash")
    assert note.read_text(encoding="utf-8") == saved, "the save made since was undone"
    env.sync()
    assert "- 18:03 Nora: saved over it\n" in env.mem_file(DAY_FILE).read_text(encoding="utf-8") + "".join(
        c.read_text(encoding="utf-8") for c in conflict_copies(note)
    )
