"""The shell examples of README.md and docs/cli.md, run as written on a temporary home folder holding the
example memory (``~/clawd``, ``~/life``): a command the docs show must work.

A block is a shell example when its info string is ``sh`` (a script: every line runs) or ``console`` (a
transcript: the lines after ``$ `` run; the rest is sample output, not compared). A block marked ``no-run``
(``sh no-run``) is not run: installing the package, the crontab, a server or a watch that runs until stopped.
Blocks run in the order of the page, README first, so ``init`` comes before the commands that need a config.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import isolate_git

PAGES = ("README.md", "docs/cli.md")
FENCE = re.compile(r"(?ms)^```(sh|console)([^\n]*)\n(.*?)^```\s*$")


def examples(page: str) -> list[tuple[str, list[str]]]:
    """(where, commands) of each shell example of ``page`` that runs."""
    text = (REPO / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        kind, marks, body = match.groups()
        if "no-run" in marks.split():
            continue
        line = text[: match.start()].count("\n") + 1
        commands = [body] if kind == "sh" else [row[2:] for row in body.splitlines() if row.startswith("$ ")]
        found.append((f"{page}:{line}", commands))
    return found


def test_the_pages_have_examples_to_run() -> None:
    found = {page: examples(page) for page in PAGES}
    assert all(found.values()), found
    assert any("vaultsync init" in cmd for _, cmds in found["README.md"] for cmd in cmds)


def test_every_shell_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    home = tmp_path / "home"
    shutil.copytree(REPO / "vault-example" / "workspace", home / "clawd")
    shutil.copytree(REPO / "vault-example" / "life", home / "life")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULTSYNC_", "XDG_"))}
    env |= {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    env |= {"COLUMNS": "120", "NO_COLOR": "1"}
    ran = 0
    for page in PAGES:
        for where, commands in examples(page):
            for command in commands:
                done = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", command],
                    cwd=home,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert done.returncode == 0, f"{where}: {command}\n{done.stdout}\n{done.stderr}"
                ran += 1
    assert ran >= 10
    assert (home / "Obsidian/Memory/.git").is_dir()
    completion = home / ".local/share/bash-completion/completions/vaultsync"
    assert completion.read_text(encoding="utf-8").startswith("# vaultsync completion for bash")
