"""Dreaming is a concurrent writer: OpenClaw's nightly consolidation rewrites MEMORY.md, USER.md and daily notes on
its own, by a temporary file renamed over the original after an optimistic check (it hashes the file again just
before the rename and, when it changed, falls back to appending). Here a separate process does exactly that, over
and over, while passes run and the person adds lines to the same note in the vault. The writer's log is the
oracle: every entry it promoted is on both sides with its marker lines, every entry it superseded is gone from
both, and every line the person wrote is on both sides.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import pytest
from helpers.inputs import Env, first_pass_clean, make_env
from helpers.twoway import isolate_git

from vaultsync.model import ExitCode
from vaultsync.system import renames

TODAY = date(2026, 12, 8)
SEEDS = 12
ROUNDS = 40

# The dreaming writer, as memory-core's commitMemoryContent and replaceFileAtomic write: read the file, build the
# new content (supersede a seeded entry: drop it with its marker lines, then append a consolidated section naming
# its lineage), stage it in `<name>.dreaming.<pid>.<uuid>.tmp` beside the file, hash the file again right before the
# rename, and on a mismatch append the section to what the file holds now instead.
DREAMER = r"""
import hashlib, json, os, random, sys, time, uuid

path, rounds, seeds, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
log = []

def read():
    with open(path, "rb") as f:
        return f.read()

def commit(expected, content):
    tmp = os.path.join(os.path.dirname(path), f"{os.path.basename(path)}.dreaming.{os.getpid()}.{uuid.uuid4()}.tmp")
    with open(tmp, "wb") as f:
        f.write(content)
        f.flush()
        os.fsync(f.fileno())
    if hashlib.sha256(read()).digest() != hashlib.sha256(expected).digest():
        os.unlink(tmp)
        return False
    os.rename(tmp, path)
    return True

for i in range(rounds):
    block = (
        f"\n## Consolidated Memory (2026-12-{i % 28 + 1:02d})\n\n"
        f"<!-- openclaw-memory-lineage:seed-{i} -->\n"
        f"<!-- openclaw-memory-promotion:1764590400{i:03d}:{i:012x} -->\n"
        f"- dream-{i}: consolidated entry {i}. Source: memory/2026-12-01.md#L{i}-L{i} "
        f"<!-- trigger: round {i} --> <!-- importance: {3 + i % 7} -->\n"
    ).encode()
    old = read()
    lines = old.splitlines(keepends=True)
    entry = f"- seed-{i}: ".encode()
    at = next((n for n, line in enumerate(lines) if line.startswith(entry)), None)
    superseded = False
    if at is not None and i < seeds:
        new = b"".join(lines[: at - 2] + lines[at + 1 :]).rstrip(b"\n") + b"\n" + block
        superseded = commit(old, new)
    if not superseded:
        while True:  # the append-only fallback, with the same check
            old = read()
            if commit(old, old.rstrip(b"\n") + b"\n" + block):
                break
    log.append({"round": i, "superseded": superseded})
    time.sleep(rng.uniform(0.0, 0.06))
print(json.dumps(log))
"""


def seeded(kind: str) -> str:
    """A file of ``kind``'s shape holding ``SEEDS`` promoted entries, each with its lineage and promotion lines."""
    head = {"MEMORY.md": "# Long-Term Memory\n", "USER.md": "# USER.md\n", "daily": "# 2026-12-01\n"}[kind]
    out = [head, "\n## Seeds\n\n"]
    for i in range(SEEDS):
        out.append(f"<!-- openclaw-memory-lineage:seed-{i} -->\n<!-- openclaw-memory-promotion:seed:{i:04d} -->\n")
        out.append(f"- seed-{i}: first version of entry {i}. <!-- importance: 5 -->\n")
    out.append("\n## Standing facts [P0]\n\n- Nora runs the Atlas pilot from Lisbon.\n")
    return "".join(out)


@pytest.mark.parametrize(
    ("kind", "mem_rel", "note_rel"),
    [
        ("MEMORY.md", "MEMORY.md", "3 Resources/agent/MEMORY.md"),
        ("USER.md", "USER.md", "3 Resources/agent/USER.md"),
        ("daily", "memory/2026-12-01.md", "Daily/2026-12-01.md"),
    ],
)
def test_dreaming_rewrites_racing_passes_lose_neither_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, mem_rel: str, note_rel: str
) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env: Env = make_env(tmp_path)
    mem, note = env.workspace / mem_rel, env.vault / note_rel
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_text(seeded(kind))
    first_pass_clean(env)
    assert note.read_bytes() == mem.read_bytes()

    script = tmp_path / "dreamer.py"
    script.write_text(DREAMER)
    dreamer = subprocess.Popen(
        [sys.executable, str(script), str(mem), str(ROUNDS), str(SEEDS), "20261208"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    person: list[str] = []
    stop = threading.Event()

    def type_in_obsidian() -> None:
        """The person adds a line at the end of the note now and then (an append: the editor's own write)."""
        rng = random.Random(7)
        while not stop.is_set():
            line = f"- person-{len(person)}: noted in Obsidian.\n"
            with note.open("ab") as f:
                f.write(line.encode())
            person.append(line)
            time.sleep(rng.uniform(0.05, 0.2))

    typist = threading.Thread(target=type_in_obsidian)
    typist.start()
    passes = 0
    try:
        while dreamer.poll() is None:
            env.sync(today=TODAY)
            passes += 1
    finally:
        stop.set()
        typist.join()
        out, err = dreamer.communicate(timeout=60)
    assert dreamer.returncode == 0, err
    log = json.loads(out)
    assert passes >= 3 and len(person) >= 3

    reports = [env.sync(today=TODAY) for _ in range(4)]
    report = reports[-1]
    copies = {p.name: p.read_text() for p in env.vault.rglob("*.vaultsync-conflict-*")}
    assert not copies, (copies, mem.read_text(), [r.conflicts for r in reports])
    assert report.exit_code is ExitCode.CLEAN, [p.line() for p in report.problems]
    assert report.files_written == 0, report.actions
    final = mem.read_text()
    assert note.read_text() == final
    lines = final.splitlines(keepends=True)
    for entry in log:
        i = entry["round"]
        at = [n for n, line in enumerate(lines) if line.startswith(f"- dream-{i}: ")]
        assert len(at) == 1, (i, final)
        promotion = f"<!-- openclaw-memory-promotion:1764590400{i:03d}:{i:012x} -->\n"
        assert lines[at[0] - 2 : at[0]] == [f"<!-- openclaw-memory-lineage:seed-{i} -->\n", promotion], final
        seed_line = f"- seed-{i}: first version of entry {i}. <!-- importance: 5 -->\n"
        assert (seed_line in lines) is (i < SEEDS and not entry["superseded"]), (i, entry, final)
    for line in person:
        assert lines.count(line) == 1, (line, final)
    assert not [p for p in env.vault.rglob("*.vaultsync-conflict-*")]
    assert "- Nora runs the Atlas pilot from Lisbon.\n" in lines


def test_the_dreamer_alone_supersedes_every_seed(tmp_path: Path) -> None:
    """The writer alone, with no pass beside it: it supersedes every seed, so the race test's oracle has teeth."""
    path = tmp_path / "MEMORY.md"
    path.write_text(seeded("MEMORY.md"))
    script = tmp_path / "dreamer.py"
    script.write_text(DREAMER)
    done = subprocess.run(
        [sys.executable, str(script), str(path), str(SEEDS), str(SEEDS), "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(entry["superseded"] for entry in json.loads(done.stdout))
    assert "- seed-" not in path.read_text()
    assert path.read_text().count("<!-- openclaw-memory-lineage:seed-") == SEEDS


# Run in a child before vaultsync: the moment the pass swaps its new MEMORY.md in, rename ``theirs`` over it, as
# OpenClaw's dreaming does when its check of the file came just before the pass's write and its rename just after.
RENAME_OVER_BOOT = r"""
import os, sys, threading, time
note, theirs = sys.argv[1:3]
def rename_over(ours):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if os.stat(note).st_ino == ours:
                os.rename(theirs, note)
                return
        except FileNotFoundError:
            pass
def hook(event, args):
    if event == "vaultsync.exchange" and args[1] == note and os.path.exists(theirs):
        threading.Thread(target=rename_over, args=(os.stat(args[0]).st_ino,)).start()
sys.addaudithook(hook)
from vaultsync.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.skipif(renames.renameat2() is None, reason="no atomic exchange of names on this system")
def test_a_dreaming_rename_landing_just_after_the_pass_wrote_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window OpenClaw's own check leaves: it hashed MEMORY.md before the pass wrote the person's line into it
    and renames its rewrite in just after. The pass sees its write replaced, and the next pass merges the two."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    env: Env = make_env(tmp_path)
    mem, note = env.workspace / "MEMORY.md", env.vault / "3 Resources/agent/MEMORY.md"
    mem.write_text(seeded("MEMORY.md"))
    first_pass_clean(env)
    person_line = "- person: the pilot moves to Porto in March.\n"
    note.write_text(note.read_text() + person_line)
    old = mem.read_text()
    dreamed = old.replace(
        "<!-- openclaw-memory-lineage:seed-0 -->\n<!-- openclaw-memory-promotion:seed:0000 -->\n"
        "- seed-0: first version of entry 0. <!-- importance: 5 -->\n",
        "",
    ) + ("\n## Consolidated Memory (2026-12-08)\n\n<!-- openclaw-memory-lineage:seed-0 -->\n- dream-0: rewritten.\n")
    theirs = env.workspace / f"MEMORY.md.dreaming.{os.getpid()}.tmp"
    theirs.write_text(dreamed)

    run = subprocess.run(
        [
            sys.executable,
            "-c",
            RENAME_OVER_BOOT,
            str(mem),
            str(theirs),
            "sync",
            "--json",
            "--config",
            str(env.root / "config.toml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.stderr == "", run.stderr
    assert not theirs.exists(), "the rename never came"
    report = json.loads(run.stdout)
    assert [(p["path"], p["message"]) for p in report["problems"]] == [
        ("workspace/MEMORY.md", "changed while the pass ran; left as it is for the next pass")
    ], report
    assert mem.read_text() == dreamed

    merged = env.sync(today=TODAY)
    assert merged.exit_code is ExitCode.CLEAN and merged.conflicts == [], [p.line() for p in merged.problems]
    assert mem.read_text() == dreamed + person_line == note.read_text()
    assert env.sync(today=TODAY).actions == []
