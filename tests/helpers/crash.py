"""Helpers for the fault-injection tests: a large synced setup with edits pending on both sides, passes run as
child processes that are killed with SIGKILL, and the invariants a killed pass must keep.

Nothing of vaultsync, git or the file system is mocked: the pass is the real ``python -m vaultsync.cli sync``,
killed by the kernel. The only instrument is an optional audit hook in the child (``CRASH_BOOT``) that kills its
own process group right before a chosen file-system or subprocess event, so that a crash point the random
timing found can be replayed exactly.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.twoway import (
    EXAMPLE,
    LIWEI,
    LIWEI_DIR,
    MIGUEL,
    MIGUEL_DIR,
    SARAH,
    SARAH_DIR,
    Env,
    body_of,
    clone,
    dump_items,
    isolate_git,
    props_of,
    replace_text,
    set_body,
    set_prop,
)
from vaultsync import config as configmod
from vaultsync.app.init import init_vault

# -- the setup ------------------------------------------------------------------------------------------------
GENERATED = 40  # extra entities, so that a pass scans ~400 notes and writes about a hundred files
GEN_FACTS = 8
AGENT_EDITED = range(0, 16)  # entities whose facts the agent edits and extends
PERSON_EDITED = range(20, 26)  # entities whose fact notes the person edits
NEW_ENTITY = "areas/people/nadia-okafor"  # created by the agent, with many facts: many new notes
NEW_ENTITY_DIR = "2 Areas/people/nadia-okafor"
NEW_ENTITY_FACTS = 30
PERSON_ENTITY = "areas/people/maria-lopez"  # created by the person in Obsidian
PERSON_ENTITY_DIR = "2 Areas/people/maria-lopez"
CONFLICT_ENTITY = 30  # both sides rewrite the text of the same fact
CLASH = (f"person-{CONFLICT_ENTITY:02d}-001", "agent wording of the clash", "person wording of the clash")
MINTED_TEXT = "Miguel Ortiz keeps a spare v0.9 board in the office drawer"
CONFLICT_MARK = ".vaultsync-conflict-"
STAMP_RE = re.compile(r"\.vaultsync-conflict-\d{8}-\d{6}(?:-\d+)?\.md$")
TEMP_RE = re.compile(r"(^|/)\.[^/]+\.[^/]*\.vstmp$")


def gen_rel(i: int) -> str:
    return f"areas/people/person-{i:02d}"


def gen_dir(i: int) -> str:
    return f"2 Areas/people/person-{i:02d}"


def gen_id(i: int, n: int) -> str:
    return f"person-{i:02d}-{n:03d}"


def add_generated_entities(life: Path) -> None:
    """Entities shaped like the agent's own, before the first pass, so they are part of the synced base."""
    for i in range(GENERATED):
        folder = life / gen_rel(i)
        folder.mkdir(parents=True)
        (folder / "summary.md").write_text(
            f"# Person {i:02d}\n\nPerson {i:02d} is a contact generated for the crash tests.\n", encoding="utf-8"
        )
        facts = [
            {
                "id": gen_id(i, n),
                "fact": f"Person {i:02d} fact {n}: works with Sarah Chen on item {i * 100 + n}",
                "category": "context",
                "timestamp": f"2026-11-{1 + n:02d}",
                "source": "conversation",
                "status": "active",
                "supersededBy": None,
            }
            for n in range(1, GEN_FACTS + 1)
        ]
        (folder / "items.json").write_bytes(dump_items(facts))


# -- the edits pending before the killed pass, and how to tell each survived -----------------------------------
Check = Callable[[Env], str | None]  # None when the edit is where it must be, else what is wrong


@dataclass
class Edit:
    what: str
    check: Check


def _mem_fact(env: Env, rel: str, fact_id: str) -> dict[str, Any] | None:
    found = [f for f in env.facts(rel) if f.get("id") == fact_id]
    return found[0] if len(found) == 1 else None


def _conflict_copies(env: Env, vault_dir: str) -> list[Path]:
    return sorted((env.vault / vault_dir).rglob(f"*{CONFLICT_MARK}*.md"))


def fact_text_check(rel: str, vault_dir: str, fact_id: str, text: str, *, person: bool) -> Check:
    """The fact holds ``text`` on both sides; a person's version may instead be kept in a conflict copy."""

    def check(env: Env) -> str | None:
        fact = _mem_fact(env, rel, fact_id)
        note = env.fact_note(vault_dir, fact_id)
        in_memory = fact is not None and fact.get("fact") == text
        in_vault = note.is_file() and body_of(note).rstrip("\n") == text
        if in_memory and in_vault:
            return None
        if person and any(text in body_of(c) for c in _conflict_copies(env, vault_dir)):
            return None
        return f"memory has it: {in_memory}, vault has it: {in_vault}, no conflict copy holds it"

    return check


def fact_prop_check(rel: str, vault_dir: str, fact_id: str, key: str, value: str) -> Check:
    def check(env: Env) -> str | None:
        fact = _mem_fact(env, rel, fact_id)
        note = env.fact_note(vault_dir, fact_id)
        in_memory = fact is not None and fact.get(key) == value
        in_vault = note.is_file() and props_of(note).get(key) == value
        return None if in_memory and in_vault else f"memory has it: {in_memory}, vault has it: {in_vault}"

    return check


def fact_gone_check(rel: str, vault_dir: str, fact_id: str) -> Check:
    def check(env: Env) -> str | None:
        in_memory = _mem_fact(env, rel, fact_id) is not None
        in_vault = env.fact_note(vault_dir, fact_id).exists()
        return None if not in_memory and not in_vault else f"still in memory: {in_memory}, in vault: {in_vault}"

    return check


def one_fact_check(rel: str, vault_dir: str, text: str) -> Check:
    """A fact created on one side exists exactly once on each side: neither lost nor duplicated."""

    def check(env: Env) -> str | None:
        in_memory = [f.get("id") for f in env.facts(rel) if f.get("fact") == text]
        notes = [
            p.name
            for p in (env.vault / vault_dir / "facts").glob("*.md")
            if CONFLICT_MARK not in p.name and body_of(p).strip("\n") == text
        ]
        if len(in_memory) == 1 and len(notes) == 1 and notes[0] == f"{in_memory[0]}.md":
            return None
        state = "duplicated" if len(in_memory) > 1 or len(notes) > 1 else "lost or misnamed"
        return f"{state}: facts in memory {in_memory}, notes in the vault {sorted(notes)}"

    return check


def lines_check(mem_file: str, note: str, *lines: str) -> Check:
    def check(env: Env) -> str | None:
        mem_path = env.workspace / mem_file
        note_path = env.vault / note
        mem_text = mem_path.read_text(encoding="utf-8") if mem_path.is_file() else ""
        vault_text = note_path.read_text(encoding="utf-8") if note_path.is_file() else ""
        missing = [(line in mem_text, line in vault_text, line) for line in lines]
        bad = [m for m in missing if not (m[0] and m[1])]
        return None if not bad else f"(in memory, in vault, line): {bad}"

    return check


def entity_check(rel: str, note: str, text: str) -> Check:
    def check(env: Env) -> str | None:
        summary = env.life / rel / "summary.md"
        vault_note = env.vault / note
        in_memory = summary.is_file() and text in summary.read_text(encoding="utf-8")
        in_vault = vault_note.is_file() and text in vault_note.read_text(encoding="utf-8")
        return None if in_memory and in_vault else f"memory has it: {in_memory}, vault has it: {in_vault}"

    return check


def make_pending_edits(env: Env) -> list[Edit]:
    """Edits on both sides, as an agent and a person make them between two passes; returns how to check each.

    Why this mix: the pass then writes new notes, rewrites notes and items.json, renames a minted note, deletes
    on both sides (the memory deletion goes through the trash), merges a daily note both sides edited, writes a
    conflict copy and makes both commits, so a kill can land between any two of those steps.
    """
    edits: list[Edit] = []

    # The agent: edited and added facts in many entities, a removed fact, a new entity, MEMORY.md, today's note.
    for i in AGENT_EDITED:
        new_text = f"Person {i:02d} fact 3 revised by the agent after the call on 2026-12-01"
        added_id = gen_id(i, 90)
        added_text = f"Person {i:02d} asked Li Wei for the sample batch number {i}"

        def change(facts: list[dict[str, Any]], i: int = i, new_text: str = new_text, added: str = added_text) -> None:
            next(f for f in facts if f["id"] == gen_id(i, 3))["fact"] = new_text
            facts.append({**facts[0], "id": gen_id(i, 90), "fact": added, "timestamp": "2026-12-01"})

        env.agent_edit(gen_rel(i), change)
        edits.append(
            Edit(
                f"agent edits {gen_id(i, 3)}",
                fact_text_check(gen_rel(i), gen_dir(i), gen_id(i, 3), new_text, person=False),
            )
        )
        edits.append(
            Edit(f"agent adds {added_id}", fact_text_check(gen_rel(i), gen_dir(i), added_id, added_text, person=False))
        )
    env.agent_edit(gen_rel(1), lambda facts: facts.pop(6))  # person-01-007
    edits.append(Edit("agent removes person-01-007", fact_gone_check(gen_rel(1), gen_dir(1), gen_id(1, 7))))

    folder = env.life / NEW_ENTITY
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text(
        "# Nadia Okafor\n\nNadia Okafor runs the Brightlake test lab.\n", encoding="utf-8"
    )
    new_facts = [
        {
            "id": f"nadia-okafor-{n:03d}",
            "fact": f"Nadia Okafor logged calibration run {n} for Project Atlas",
            "category": "context",
            "timestamp": "2026-12-01",
            "source": "conversation",
            "status": "active",
        }
        for n in range(1, NEW_ENTITY_FACTS + 1)
    ]
    (folder / "items.json").write_bytes(dump_items(new_facts))
    for n in (1, NEW_ENTITY_FACTS):
        text = f"Nadia Okafor logged calibration run {n} for Project Atlas"
        check = fact_text_check(NEW_ENTITY, NEW_ENTITY_DIR, f"nadia-okafor-{n:03d}", text, person=False)
        edits.append(Edit(f"agent creates nadia-okafor-{n:03d}", check))
    edits.append(
        Edit(
            "agent creates nadia-okafor",
            entity_check(NEW_ENTITY, f"{NEW_ENTITY_DIR}/nadia-okafor.md", "Brightlake test lab"),
        )
    )

    memory_line = "- Nora switched the studio printer to the new toner supplier"
    with (env.workspace / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write(f"\n{memory_line}\n")
    edits.append(
        Edit("agent appends to MEMORY.md", lines_check("MEMORY.md", "3 Resources/agent/MEMORY.md", memory_line))
    )
    agent_daily = "- 17:05 agent: booked the readout room for 2026-12-10"
    with (env.workspace / "memory" / "2026-12-01.md").open("a", encoding="utf-8") as handle:
        handle.write(f"{agent_daily}\n")

    # The person: fact notes, a property, a new fact from the template, a deleted note, two daily notes, a new
    # entity note.
    sarah_text = "Sarah Chen wants the agenda two working days before any meeting"
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), sarah_text + "\n")
    edits.append(
        Edit(
            "person edits sarah-chen-004", fact_text_check(SARAH, SARAH_DIR, "sarah-chen-004", sarah_text, person=True)
        )
    )
    liwei_id = env.facts(LIWEI)[1]["id"]
    set_prop(env.fact_note(LIWEI_DIR, liwei_id), "category", "logistics")
    edits.append(
        Edit(
            f"person sets category of {liwei_id}", fact_prop_check(LIWEI, LIWEI_DIR, liwei_id, "category", "logistics")
        )
    )
    for i in PERSON_EDITED:
        text = f"Person {i:02d} fact 2 corrected by Nora in Obsidian"
        set_body(env.fact_note(gen_dir(i), gen_id(i, 2)), text + "\n")
        edits.append(
            Edit(
                f"person edits {gen_id(i, 2)}", fact_text_check(gen_rel(i), gen_dir(i), gen_id(i, 2), text, person=True)
            )
        )
    (env.fact_note(gen_dir(21), gen_id(21, 5))).unlink()
    edits.append(Edit("person deletes person-21-005", fact_gone_check(gen_rel(21), gen_dir(21), gen_id(21, 5))))

    untitled = env.vault / MIGUEL_DIR / "facts" / "Untitled.md"
    untitled.write_text(
        f"---\nstatus: active\ncategory: hardware\ntimestamp: 2026-12-01\nsource: manual\n---\n\n{MINTED_TEXT}\n",
        encoding="utf-8",
    )
    edits.append(Edit("person creates a fact from the template", one_fact_check(MIGUEL, MIGUEL_DIR, MINTED_TEXT)))

    person_daily = "- Nora: call the bank about the wire fee"
    replace_text(env.note("Daily/2026-12-01.md"), "# 2026-12-01\n", f"# 2026-12-01\n\n{person_daily}\n")
    edits.append(
        Edit(
            "both sides edit today's note",
            lines_check("memory/2026-12-01.md", "Daily/2026-12-01.md", person_daily, agent_daily),
        )
    )
    old_daily = "- Nora: renewed the studio insurance"
    with env.note("Daily/2026-11-30.md").open("a", encoding="utf-8") as handle:
        handle.write(f"{old_daily}\n")
    edits.append(
        Edit("person appends to 2026-11-30", lines_check("memory/2026-11-30.md", "Daily/2026-11-30.md", old_daily))
    )

    person_entity = env.vault / PERSON_ENTITY_DIR / "maria-lopez.md"
    person_entity.parent.mkdir(parents=True)
    person_entity.write_text("# Maria Lopez\n\nMaria Lopez is the new studio accountant.\n", encoding="utf-8")
    edits.append(
        Edit(
            "person creates maria-lopez",
            entity_check(PERSON_ENTITY, f"{PERSON_ENTITY_DIR}/maria-lopez.md", "studio accountant"),
        )
    )

    # Both sides rewrite the same fact: memory's version wins, the person's is kept in a conflict copy.
    clash_id, agent_clash, person_clash = CLASH
    env.agent_edit(gen_rel(CONFLICT_ENTITY), lambda facts: facts[0].update(fact=agent_clash))
    set_body(env.fact_note(gen_dir(CONFLICT_ENTITY), clash_id), person_clash + "\n")
    rel, vdir = gen_rel(CONFLICT_ENTITY), gen_dir(CONFLICT_ENTITY)
    edits.append(Edit("agent side of the clash", fact_text_check(rel, vdir, clash_id, agent_clash, person=False)))
    edits.append(Edit("person side of the clash", fact_text_check(rel, vdir, clash_id, person_clash, person=True)))
    return edits


# -- snapshots and the invariants ------------------------------------------------------------------------------
def tree(env: Env) -> dict[str, bytes]:
    """Every file of the memory roots and the vault ('.git' and '.vaultsync' aside), temp files included."""
    files: dict[str, bytes] = {}
    for label, root in (("workspace", env.workspace), ("life", env.life), ("vault", env.vault)):
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            if label == "vault" and rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d not in (".git", ".vaultsync")]
            for name in filenames:
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                files[f"{label}/{rel}"] = (Path(dirpath) / name).read_bytes()
    return files


def is_temp(path: str) -> bool:
    return bool(TEMP_RE.search(path))


def copy_slot(path: str) -> str:
    """A conflict copy's name without its time stamp: the killed and the reference pass ran at other seconds."""
    return STAMP_RE.sub(CONFLICT_MARK + "*.md", path)


def torn_files(after: dict[str, bytes], before: dict[str, bytes], reference: dict[str, bytes]) -> list[str]:
    """Files holding neither their content before the pass nor the one an unkilled pass gives them."""
    ref_copies = {copy_slot(p): data for p, data in reference.items() if CONFLICT_MARK in p}
    bad = []
    for path in sorted(set(after) | set(before) | set(reference)):
        if is_temp(path):
            continue
        now = after.get(path)
        if CONFLICT_MARK in path and path not in before:
            if now is not None and now != ref_copies.get(copy_slot(path)):
                bad.append(f"{path}: conflict copy with unexpected content")
            continue
        if now != before.get(path) and now != reference.get(path):
            state = "missing" if now is None else f"{len(now)} bytes"
            bad.append(f"{path}: {state}, neither the old nor the new content")
    return bad


def base_units(state_dir: Path) -> dict[str, tuple[bytes, str]]:
    """The base's units table. Opening it rolls back a transaction the kill interrupted, as the next pass would."""
    db = sqlite3.connect(state_dir / "base.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {key: (bytes(data), extra) for key, data, extra in db.execute("SELECT key, data, extra FROM units")}
    finally:
        db.close()


def fsck(vault: Path) -> str:
    """'' when ``git fsck --full`` is clean (dangling objects are normal after a killed commit), else its output."""
    run = subprocess.run(["git", "fsck", "--full", "--no-dangling"], cwd=vault, capture_output=True, text=True)
    out = (run.stdout + run.stderr).strip()
    return "" if run.returncode == 0 and not out else f"exit {run.returncode}: {out}"


def git_lines(vault: Path, *args: str) -> list[str]:
    run = subprocess.run(["git", *args], cwd=vault, capture_output=True, text=True, check=True)
    return [line for line in run.stdout.splitlines() if line]


OWN_GIT_LOCK = "vaultsync-index.lock"  # the lock of the private index vaultsync commits through


def stale_git_locks(vault: Path) -> list[Path]:
    """Lock files a killed git left behind (index.lock, refs/heads/main.lock, ...)."""
    return sorted((vault / ".git").rglob("*.lock"))


# -- running a pass as a child process -------------------------------------------------------------------------
def git_env(tmp: Path) -> dict[str, str]:
    """The child's environment: the caller's, with every git config lookup pointed at files under ``tmp``."""
    env = dict(os.environ)
    isolate_git(env.__setitem__, tmp)
    return env


# Run in the child before vaultsync: kill the whole process group (the pass and its git children) right before
# the N-th audit event of the watched kinds whose arguments contain the needle. With N = 0 it only logs the
# events, one per line, to the file named by VAULTSYNC_CRASH_LOG.
CRASH_BOOT = r"""
import os, signal, sys
kinds = set(os.environ["VAULTSYNC_CRASH_EVENTS"].split(","))
needle = os.environ.get("VAULTSYNC_CRASH_NEEDLE", "")
target = int(os.environ.get("VAULTSYNC_CRASH_AT", "0"))
log = os.environ.get("VAULTSYNC_CRASH_LOG")
seen = 0
def hook(event, args):
    global seen
    if event not in kinds:
        return
    text = " ".join(str(a) for a in args[:2])
    if needle not in text:
        return
    seen += 1
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{seen}\t{event}\t{text}\n")
    if seen == target:
        os.killpg(os.getpgrp(), signal.SIGKILL)
sys.addaudithook(hook)
from vaultsync.cli import main
sys.exit(main(sys.argv[1:]))
"""
# Run in the child instead of ``-m vaultsync.cli``: the same command line, waiting argv[1] seconds for a git lock.
LOCK_WAIT_BOOT = r"""
import sys
from vaultsync.git import run
run.LOCK_WAIT_SECONDS = float(sys.argv[1])
from vaultsync.cli import main
sys.exit(main(sys.argv[2:]))
"""
SHORT_LOCK_WAIT = 0.5  # seconds; see the short_lock_wait fixture in conftest.py
# os.replace and shutil.move raise "os.rename"; unlink raises "os.remove"; every git call starts with Popen.
# vaultsync raises "vaultsync.exchange" before it swaps a staged file in with renameat2(RENAME_EXCHANGE), and
# "vaultsync.place" before it names a new file with renameat2(RENAME_NOREPLACE).
RENAMES = ("os.rename", "vaultsync.exchange", "vaultsync.place")
MUTATIONS = (*RENAMES, "os.remove", "os.rmdir", "subprocess.Popen")


@dataclass
class Outcome:
    returncode: int
    killed: bool
    seconds: float
    stdout: str = ""
    stderr: str = ""

    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def sync_argv(config: Path, batch: int | None = None) -> list[str]:
    """``batch``: entities a full pass reads at a time, when not the default."""
    return ["sync", "--json", "--config", str(config), *([] if batch is None else ["--batch", str(batch)])]


def run_sync(
    config: Path,
    env: dict[str, str],
    kill_after: float | None = None,
    batch: int | None = None,
    lock_wait: float | None = None,
) -> Outcome:
    """One ``vaultsync sync`` in its own session; with ``kill_after``, SIGKILL its process group after that long.

    The kill goes to the group, not only the pid, so a ``git commit`` the pass started dies with it, as when
    the OOM killer or ``systemctl kill --signal=KILL`` ends the whole service. With ``lock_wait``, the child
    waits that long for a git lock instead of ``LOCK_WAIT_SECONDS`` (the ``short_lock_wait`` fixture's reason).
    """
    start = time.monotonic()
    program = ["-m", "vaultsync.cli"] if lock_wait is None else ["-c", LOCK_WAIT_BOOT, str(lock_wait)]
    child = subprocess.Popen(
        [sys.executable, *program, *sync_argv(config, batch)],
        env=env,
        cwd=config.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    killed = False
    if kill_after is not None:
        try:
            child.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            killed = True
    out, err = child.communicate(timeout=120)
    _reap_group(child.pid)
    return Outcome(child.returncode, killed, time.monotonic() - start, out.decode(), err.decode())


def run_sync_crashing_at(
    config: Path,
    env: dict[str, str],
    events: tuple[str, ...],
    at: int,
    needle: str = "",
    log: Path | None = None,
    batch: int | None = None,
) -> Outcome:
    """A pass that kills itself (and its git children) with SIGKILL right before the ``at``-th matching event."""
    env = {
        **env,
        "VAULTSYNC_CRASH_EVENTS": ",".join(events),
        "VAULTSYNC_CRASH_NEEDLE": needle,
        "VAULTSYNC_CRASH_AT": str(at),
    }
    if log is not None:
        env["VAULTSYNC_CRASH_LOG"] = str(log)
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", CRASH_BOOT, *sync_argv(config, batch)],
        env=env,
        cwd=config.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    out, err = child.communicate(timeout=120)
    _reap_group(child.pid)
    killed = child.returncode == -signal.SIGKILL
    return Outcome(child.returncode, killed, time.monotonic() - start, out.decode(), err.decode())


def _reap_group(pgid: int) -> None:
    """Wait until no git child of the pass is left (it would hold locks the next pass waits for).

    Every member of the group already got the SIGKILL (or the pass ended normally); signal 0 only asks whether
    one still exists.
    """
    for _ in range(500):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    raise AssertionError(f"process group {pgid} still has members 5 s after the pass ended")


@dataclass
class Tally:
    """What the kill runs hit, for the summary line: a run that never lands mid-pass proves little."""

    runs: int = 0
    killed: int = 0
    mid_apply: int = 0  # the kill left some but not all of the pass's file changes
    base_saved: int = 0  # the kill came after the base was recorded
    temp_left: int = 0
    locks_removed: int = 0
    failures: list[str] = field(default_factory=list)

    def line(self, label: str, seed: int) -> str:
        return (
            f"{label}: {self.runs} kill runs (seed {seed}): {self.killed} killed mid-pass, {self.mid_apply} between "
            f"file writes, {self.base_saved} after the base was saved, {self.temp_left} left temp files, "
            f"{self.locks_removed} left a stale git lock; {len(self.failures)} failed"
        )


# -- one kill run, checked end to end --------------------------------------------------------------------------
@dataclass
class Oracle:
    """What a pass over the pending setup starts from and what an unkilled pass makes of it."""

    pending: Path  # the setup with edits pending on both sides; every run works on a copy of it
    edits: list[Edit]
    before: dict[str, bytes]
    reference: dict[str, bytes]
    base_before: dict[str, tuple[bytes, str]]
    base_reference: dict[str, tuple[bytes, str]]
    duration: float  # seconds an unkilled child pass takes, start to exit
    git_env: dict[str, str]


@dataclass
class RunResult:
    label: str
    outcome: Outcome
    failures: list[str] = field(default_factory=list)
    mid_apply: bool = False
    base_saved: bool = False
    temp_files: list[str] = field(default_factory=list)
    locks: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # edits not where they must be after recovery
    uncommitted: list[str] = field(default_factory=list)  # `git status` entries after recovery

    def fail(self, what: str) -> None:
        self.failures.append(what)


def check_killed_run(oracle: Oracle, env: Env, result: RunResult) -> RunResult:
    """Check invariants (a) to (d) on ``env`` right after ``result.outcome``'s pass died, then recover it.

    Every failed invariant is recorded in ``result.failures`` rather than raised, so one run reports all it broke.
    """
    vault = env.vault
    after = tree(env)
    # (a) no torn file; temp files are allowed, and must stay out of every later pass and commit.
    for problem in torn_files(after, oracle.before, oracle.reference):
        result.fail(f"(a) torn: {problem}")
    result.temp_files = sorted(p for p in after if is_temp(p))
    changed = {p for p in set(after) | set(oracle.before) if after.get(p) != oracle.before.get(p) and not is_temp(p)}
    target = {p for p in set(oracle.reference) | set(oracle.before) if oracle.reference.get(p) != oracle.before.get(p)}
    result.mid_apply = bool(changed) and len(changed) < len(target)

    # (c) the base is the old one or the new one, never a mix; the repository is sound.
    units = base_units(env.cfg.state_dir)
    if units == oracle.base_reference:
        result.base_saved = True
    elif units != oracle.base_before:
        result.fail("(c) the base is neither the one before the pass nor the one after it")
    if problem := fsck(vault):
        result.fail(f"(c) git fsck after the kill: {problem}")
    # A git child killed mid-commit leaves its lock file. vaultsync reports a stale index.lock and never deletes
    # it (another git may own it; see test_stale_index_lock_is_reported_not_deleted), so here the person removes
    # it after reading the message, which is what the message asks for; the same for a ref lock. The lock of
    # vaultsync's private index is its own, removed by the next pass, so it stays for the recovery pass to handle.
    for lock in stale_git_locks(vault):
        result.locks.append(lock.relative_to(vault).as_posix())
        if lock.name != OWN_GIT_LOCK:
            lock.unlink()

    # (d) one pass, not killed, converges without a person.
    recovery = run_sync(env.config_path, oracle.git_env)
    report = _report(recovery, result, "recovery pass")
    if report is not None:
        if report["stopped"]:
            result.fail(f"(d) the recovery pass stopped: {report['stopped']}")
        errors = [p for p in report["problems"] if p["severity"] == "error"]
        if errors:
            result.fail(f"(d) the recovery pass reported errors: {errors}")
        mentions = [p for p in report["problems"] if "vstmp" in json.dumps(p)]
        if mentions:
            result.fail(f"(a) the recovery pass read a temp file: {mentions}")
        expected = 1 if report["open_conflicts"] else 0
        if recovery.returncode != expected:
            result.fail(f"(d) the recovery pass exited {recovery.returncode}, expected {expected}")

    # (b) no lost edit: each is on both sides, or (a person's) in a conflict copy.
    for edit in oracle.edits:
        if problem := edit.check(env):
            result.lost.append(edit.what)
            result.fail(f"(b) edit '{edit.what}' is not where it must be: {problem}")

    # The vault is fully committed, and no temp file ever is, nor is one carried to the other side.
    now = tree(env)
    new_temps = sorted(p for p in now if is_temp(p) and p not in after)
    if new_temps:
        result.fail(f"(a) the recovery pass left temp files: {new_temps}")
    strays = sorted(p for p in now if "vstmp" in p and not is_temp(p))
    if strays:
        result.fail(f"(a) a temp file was synced: {strays}")
    status = git_lines(vault, "status", "--porcelain", "-z", "--untracked-files=all")
    entries = [e for line in status for e in line.split("\0") if e]
    result.uncommitted = [e for e in entries if not (e.startswith("?? ") and is_temp(e[3:]))]
    if result.uncommitted:
        result.fail(f"(d) left out of git after the recovery pass: {result.uncommitted}")
    committed = git_lines(vault, "log", "--all", "--format=", "--name-only", "--no-renames")
    if any(is_temp(p) for p in committed):
        result.fail(f"(a) a temp file was committed: {[p for p in committed if is_temp(p)]}")
    if problem := fsck(vault):
        result.fail(f"(c) git fsck after the recovery pass: {problem}")

    # (d) and the pass after it changes nothing and commits nothing.
    head = git_lines(vault, "rev-parse", "HEAD")[0]
    quiet = run_sync(env.config_path, oracle.git_env)
    report2 = _report(quiet, result, "second pass")
    if report2 is not None and report is not None:
        if report2["actions"] or report2["commits"] or report2["files_written"]:
            result.fail(f"(d) the second pass was not quiet: {report2['actions'][:5]} {report2['commits']}")
        if quiet.returncode != recovery.returncode:
            result.fail(f"(d) the second pass exited {quiet.returncode}, the recovery pass {recovery.returncode}")
    if git_lines(vault, "rev-parse", "HEAD")[0] != head:
        result.fail("(d) the second pass made a commit")
    if tree(env) != now:
        result.fail("(d) the second pass changed files")
    return result


def _report(outcome: Outcome, result: RunResult, which: str) -> dict[str, Any] | None:
    try:
        return outcome.report()
    except json.JSONDecodeError:
        result.fail(f"(d) the {which} exited {outcome.returncode} without a report: {outcome.stderr.strip()[-800:]}")
        return None


def build_oracle(root: Path, setenv: Callable[[str, str], Any]) -> Oracle:
    """Build the synced setup once, put the edits in place, and run the unkilled reference passes.

    Three reference passes run on three copies: the first is the oracle, the others must agree with it (else the
    oracle itself would be timing-dependent), and their median duration sets the window the kills fall in (the
    median, because a test machine under load makes one pass now and then several times slower).
    """
    isolate_git(setenv, root / "git-env")
    setup = root / "setup"
    shutil.copytree(EXAMPLE, setup / "mem")
    add_generated_entities(setup / "mem" / "life")
    # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
    init_vault(
        setup / "mem" / "workspace", setup / "mem" / "life", setup / "vault", setup / "config.toml", fact_text=False
    )
    first = Env(setup, configmod.load(setup / "config.toml")).sync()
    assert first.exit_code == 0 and not first.stopped, first.to_json()
    pending = clone(setup, root / "pending")
    edits = make_pending_edits(pending)
    genv = git_env(root / "child-git")
    references = []
    for k in range(3):
        ref = clone(pending.root, root / f"reference-{k}")
        outcome = run_sync(ref.config_path, genv)
        report = outcome.report()
        assert outcome.returncode == 1 and len(report["conflicts"]) == 1, (outcome.returncode, outcome.stdout)
        assert not [p for p in report["problems"] if p["severity"] == "error"], report["problems"]
        assert report["files_written"] > 100 and len(report["commits"]) == 2, report
        lost = [f"{e.what}: {m}" for e in edits if (m := e.check(ref))]
        assert not lost, lost
        references.append((ref, outcome.seconds))
    reference = tree(references[0][0])
    normalised = [{copy_slot(p): data for p, data in tree(ref).items()} for ref, _ in references]
    assert all(n == normalised[0] for n in normalised), "unkilled passes over the same setup disagree"
    return Oracle(
        pending=pending.root,
        edits=edits,
        before=tree(pending),
        reference=reference,
        base_before=base_units(pending.cfg.state_dir),
        base_reference=base_units(references[0][0].cfg.state_dir),
        duration=sorted(seconds for _, seconds in references)[1],
        git_env=genv,
    )


def kill_run(oracle: Oracle, root: Path, fraction: float, label: str, batch: int | None = None) -> RunResult:
    """A pass on a fresh copy, SIGKILLed ``fraction`` of an unkilled pass's duration after it started; with
    ``batch``, a full pass in batches of that many entities (the recovery pass reads everything at once)."""
    env = clone(oracle.pending, root)
    outcome = run_sync(env.config_path, oracle.git_env, kill_after=fraction * oracle.duration, batch=batch)
    return check_killed_run(oracle, env, RunResult(label, outcome))


def step_run(oracle: Oracle, root: Path, step: int, label: str, batch: int | None = None) -> RunResult:
    """A pass on a fresh copy that kills itself right before its ``step``-th file or git operation."""
    env = clone(oracle.pending, root)
    outcome = run_sync_crashing_at(env.config_path, oracle.git_env, MUTATIONS, step, batch=batch)
    return check_killed_run(oracle, env, RunResult(label, outcome))


@dataclass(frozen=True)
class Step:
    """One file or git operation of a pass, as the audit hook saw it; paths below the setup read ``<root>``."""

    number: int
    event: str
    text: str

    def writes_tree(self) -> bool:
        """A rename or delete in the memory tree or the vault (vaultsync's own state folder aside)."""
        return (
            self.event in (*RENAMES, "os.remove")
            and self.text.startswith("<root>/")
            and "/.vaultsync/" not in self.text
        )


def trace_pass(template: Path, root: Path, genv: dict[str, str], batch: int | None = None) -> list[Step]:
    """The file and git operations of an unkilled pass over a copy of ``template``: the points a kill can hit.

    The same setup makes the same operations in the same order, so a step number found here replays exactly.
    """
    env = clone(template, root)
    log = root.parent / f"{root.name}-steps.log"
    outcome = run_sync_crashing_at(env.config_path, genv, MUTATIONS, 0, log=log, batch=batch)
    assert not outcome.killed and outcome.returncode in (0, 1), outcome.stdout + outcome.stderr
    steps = []
    for line in log.read_text(encoding="utf-8").splitlines():
        number, event, text = line.split("\t", 2)
        steps.append(Step(int(number), event, text.replace(str(root), "<root>")))
    return steps
