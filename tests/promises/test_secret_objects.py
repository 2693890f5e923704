"""A note held back for a secret never reaches git's object store, on any pass (docs/safety.md, section 4).

A commit that leaves the note out is not enough: a loose blob in ``.git/objects`` travels with every copy of the
repository. These tests run real passes (first import, scoped, full) and read every object git holds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.inputs import Env, assert_exit, dumps, fact, make_env

from vaultsync.model import ExitCode

TOKEN = "ghp_" + "Q7w8E9r0" * 5  # assembled at run time, see tests/git/test_secrets.py
REL = "areas/people/dev"


def every_object(env: Env) -> bytes:
    """The content of every object in the vault's repository, loose or packed, reachable or not."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=env.vault, capture_output=True, check=True
    ).stdout


def synced(tmp_path: Path) -> Env:
    env = make_env(tmp_path)
    env.entity(REL, [fact("d1", "Dev runs the CI"), fact("d2", "Dev likes tea")], "# Dev\n")
    env.daily("2026-01-27.md", "# 2026-01-27\n\nSet up CI today.\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    return env


def held_back(env: Env) -> list[str]:
    report = env.sync()
    return sorted(p.path for p in report.problems if "holds a secret" in p.message)


def test_a_secret_the_agent_adds_later_never_becomes_an_object(tmp_path: Path) -> None:
    env = synced(tmp_path)
    (env.life / REL / "items.json").write_bytes(
        dumps([fact("d1", f"Dev's CI token is {TOKEN}"), fact("d2", "Dev likes tea")])
    )
    with (env.workspace / "memory/2026-01-27.md").open("a", encoding="utf-8") as handle:
        handle.write(f"Push token: {TOKEN}\n")

    assert held_back(env) == ["2 Areas/people/dev/facts/d1.md", "Daily/2026-01-27.md"]
    assert TOKEN in env.note("Daily/2026-01-27.md")
    assert TOKEN.encode() not in every_object(env)

    # The passes after it (scoped by what changed, and quick ones) keep it out too.
    (env.life / REL / "items.json").write_bytes(
        dumps([fact("d1", f"Dev's CI token is {TOKEN}"), fact("d2", "Dev likes green tea")])
    )
    held_back(env)
    env.sync()
    assert "green tea" in env.note("2 Areas/people/dev/facts/d2.md")
    assert TOKEN.encode() not in every_object(env)


def test_a_secret_the_person_types_never_becomes_an_object(tmp_path: Path) -> None:
    env = synced(tmp_path)
    note = env.vault / "Daily/2026-01-27.md"
    note.write_text(note.read_text(encoding="utf-8") + f"Token to rotate: {TOKEN}\n", encoding="utf-8")
    foreign = env.vault / "2 Areas/people/dev/scratch.md"  # a note of the person's, left alone by a pass
    foreign.write_text(f"key {TOKEN}\n", encoding="utf-8")

    assert "Daily/2026-01-27.md" in held_back(env)
    assert TOKEN in (env.workspace / "memory/2026-01-27.md").read_text(encoding="utf-8")
    env.sync()
    assert TOKEN.encode() not in every_object(env)
