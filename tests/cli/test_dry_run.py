"""A dry run writes nothing, on every command that has one: run as a person runs it (the real program in a
subprocess, on a synced vault), each leaves the vault, the memory, the state folder and git as they were, byte
for byte, while saying what a real run would do. The parser is read for the commands that offer ``--dry-run``,
so a new one is held to the same promise."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.e2e import run_vaultsync
from helpers.twoway import SARAH, SARAH_DIR, Env, set_prop

from vaultsync import config as configmod
from vaultsync.cli import help as cli_help
from vaultsync.cli import parser as cli_parser

# The run lock's file, which a dry run holds as a pass does (docs/cli.md), names the process holding it; it is
# the lock, not the vault's content, and the only file a dry run touches.
LOCK = "setup/vault/.vaultsync/lock"


def _everything(tmp_path: Path, env: Env) -> tuple[dict[str, bytes], str]:
    """Every file under the test's folder (vault, memory, state, config, home) but git's own, and git's history:
    every commit of every ref, its author and subject, and what git sees as uncommitted."""
    files = {}
    for path in sorted(tmp_path.rglob("*")):
        rel = path.relative_to(tmp_path).as_posix()
        if path.is_file() and "/.git/" not in f"/{rel}" and rel != LOCK:
            files[rel] = path.read_bytes()
    history = env.git("log", "--all", "--format=%H %an %s") + env.git("for-each-ref") + env.git("status", "-z")
    return files, history


def _duplicate_fact(env: Env, _: Path) -> None:
    """Sarah gains a duplicate of her first fact (synced): a finding for the review."""
    doc = json.loads(env.items_path(SARAH).read_bytes())
    doc.append({**doc[0], "id": "sarah-chen-090", "fact": doc[0]["fact"].upper(), "timestamp": "2026-11-01"})
    env.items_path(SARAH).write_text(json.dumps(doc, indent=2) + "\n")
    env.sync()


def _ticked_review(env: Env, tmp: Path) -> None:
    """A real review wrote its note; the person ticked its first fix."""
    _duplicate_fact(env, tmp)
    done = run_vaultsync("review", "--today", "2026-12-01", "--config", str(env.config_path))
    assert done.returncode == 1, done.stdout + done.stderr
    note = env.vault / "Reviews/2026-W49.md"
    note.write_text(note.read_text().replace("- [ ] supersede", "- [x] supersede", 1))


def _vault_edit(env: Env, _: Path) -> None:
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-001"), "category", "career")


def _extract_command(env: Env, tmp: Path) -> None:
    """``[extract] command`` is a script answering one proposal for Sarah from the newest daily note."""
    note = env.workspace / "memory/2026-12-01.md"
    line = next(n for n, text in enumerate(note.read_text().splitlines(), 1) if text.strip())
    answer = [{"entity": SARAH, "fact": "Sarah Chen presents the readout deck", "note": "memory/2026-12-01.md"}]
    answer[0]["source_line"] = line
    script = tmp / "propose.py"
    script.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(json.dumps(answer))})\n")
    command = f"{sys.executable} {script}"
    env.config_path.write_text(configmod.dumps(replace(env.cfg, extract=configmod.Extract(command=command))))


def _nothing(env: Env, tmp: Path) -> None:
    """No setup: the synced example as it is."""


Case = tuple[list[str], Callable[[Env, Path], None], list[str]]
CASES: dict[str, Case] = {
    "sync": (["sync", "--dry-run"], _vault_edit, ["memory: write life/areas/people/sarah-chen/items.json"]),
    "sync-json": (["sync", "-n", "--json"], _vault_edit, ['"dry_run": true']),
    "janitor": (["janitor", "--dry-run", "--today", "2026-12-01"], _nothing, ["would archive: MEMORY.md lines"]),
    "review": (
        ["review", "--dry-run", "--today", "2026-12-01"],
        _duplicate_fact,
        ["would write Reviews/2026-W49.md (", "would write Timeline.md", "duplicate-active: areas/people/sarah"],
    ),
    "review-json": (["review", "-n", "-j", "--today", "2026-12-01"], _duplicate_fact, ['"planned": [']),
    "review-fix": (
        ["review", "--fix", "--dry-run", "--today", "2026-12-01"],
        _ticked_review,
        [f"would apply {SARAH}: sarah-chen-090 superseded by sarah-chen-001", "would mark the applied fixes in"],
    ),
    "review-regenerate": (["review", "--regenerate", "sarah-chen", "-n"], _nothing, ["+<!-- vaultsync:generated"]),
    "review-all": (["review", "--all", "--dry-run"], _nothing, [f"a/{SARAH}/summary.md"]),
    "extract": (["extract", "--dry-run"], _extract_command, ["would propose: areas/people/sarah-chen sarah-chen-"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_dry_run_writes_nothing_and_says_what_it_would_do(env: Env, tmp_path: Path, case: str) -> None:
    args, setup, said = CASES[case]
    setup(env, tmp_path)
    before = _everything(tmp_path, env)
    done = run_vaultsync(*args, "--config", str(env.config_path))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    after = _everything(tmp_path, env)
    changed = sorted(k for k in before[0].keys() | after[0].keys() if before[0].get(k) != after[0].get(k))
    assert changed == [], done.stdout
    assert after[1] == before[1], "git changed"
    for words in said:
        assert words in done.stdout, done.stdout


def test_every_command_with_a_dry_run_is_held_to_it() -> None:
    offering = {
        path
        for path, parser in cli_help.parsers(cli_parser.build()).items()
        if any("--dry-run" in action.option_strings for action in parser._actions)  # argparse has no public list
    }
    covered = {CASES[case][0][0] for case in CASES}
    assert offering == covered
