"""Help a person can use: every command's ``--help`` ends with two or three examples and the docs (pages the
package holds); ``vaultsync help [command]`` and a bare ``vaultsync`` print the help with exit 0; and the docs
name only commands that exist. That every example runs is test_help_examples.py's: it writes the user's schedule,
so its tests run one at a time with the others that do (tests/conftest.py), and these need not wait for them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from vaultsync.cli import help as cli_help
from vaultsync.cli import parser as cli_parser

ROOT = REPO
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
# `vaultsync WORD` where a command line starts: a line (after a prompt, or a path to the program), or after a
# shell's `&&`, `|` or `$(`; `--config FILE` may come first
START = r"(?:^[ \t]*(?:\$[ \t]+)?(?:[\w./~-]*/)?|(?:&&|\||\$\()[ \t]*)"
COMMAND = re.compile(START + r"vaultsync[ \t]+(?:(?:--config|-c)[ \t]+\S+[ \t]+)?([a-z][a-z-]*)", re.M)
MISTYPED = {"snyc"}  # docs/cli.md's example of a mistyped command, and what vaultsync answers it
AUTHORS = {"agent", "api"}  # the commits' author names, `vaultsync agent` and `vaultsync api (openclaw)`
SAID = {"is", "refused"}  # the OpenClaw plugin's messages, `vaultsync is not reachable`, `vaultsync refused the token`


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        capture_output=True,
        text=True,
        env={**(env or os.environ), "COLUMNS": "120", "NO_COLOR": "1", "PYTHON_COLORS": "0"},
        timeout=60,
        check=False,
    )


def _commands() -> set[str]:
    return {path.split(" ")[0] for path in cli_help.parsers(cli_parser.build()) if path}


@pytest.mark.parametrize("path", sorted(cli_help.parsers(cli_parser.build())))
def test_every_help_ends_with_examples_and_the_docs(path: str) -> None:
    text = _run(*path.split(), "--help").stdout
    tail = text.rsplit("examples:\n", 1)
    assert len(tail) == 2, f"`vaultsync {path} --help` has no examples"
    lines = tail[1].rstrip("\n").split("\n")
    examples = [line for line in lines if line.startswith("  vaultsync")]
    assert 2 <= len(examples) <= 3, f"`vaultsync {path} --help`: {len(examples)} examples"
    assert lines[-2] == "" and lines[-1].startswith("docs: "), lines[-2:]
    for page in re.findall(r"(/\S+?\.md)", lines[-1]):
        assert Path(page).is_file(), f"`vaultsync {path} --help` names a page the package lacks: {page}"


def test_help_and_a_bare_vaultsync_print_the_help_with_exit_0() -> None:
    full = _run("--help")
    for args in ((), ("help",)):
        done = _run(*args)
        assert done.returncode == 0 and done.stdout == full.stdout, args
    assert _run("help", "schedule", "install").stdout == _run("schedule", "install", "--help").stdout
    wrong = _run("help", "snyc")
    assert wrong.returncode == 2 and "did you mean 'sync'?" in wrong.stderr


def _named(text: str) -> set[str]:
    """The word after ``vaultsync`` wherever a page shows a command: in code blocks and in code spans (prose
    such as "vaultsync renders" is not a command line)."""
    code = re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text)
    code += re.findall(r"`([^`\n]+)`", re.sub(r"(?ms)^```.*?^```", "", text))
    found = set()
    for piece in code:
        found |= set(COMMAND.findall(piece))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_the_docs_name_only_commands_that_exist(page: str) -> None:
    commands = _commands()
    named = _named((ROOT / page).read_text(encoding="utf-8"))
    unknown = sorted(named - commands - MISTYPED - AUTHORS - SAID)
    assert not unknown, f"{page} names `vaultsync {unknown[0]}`, which is no command (known: {sorted(commands)})"


def test_the_docs_name_check_can_fail() -> None:
    assert _named("run `vaultsync inbox` to review, as vaultsync says\n```sh\nvaultsync -c x sync\n```\n") == {
        "inbox",
        "sync",
    }
