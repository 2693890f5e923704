"""Help a person can use: every command's ``--help`` ends with two or three examples and the docs (pages the
package holds); ``vaultsync help [command]`` and a bare ``vaultsync`` print the help with exit 0; every example
runs as written on a temporary home; and the docs name only commands that exist.

An example "runs" when it exits 0, or 1 where 1 means done with something for the person to look at (review
findings, a link doctor names); a command that runs until stopped (serve, watch, service run) runs when it
starts, says so on its first line, and stops with 0 on SIGTERM.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import isolate_git

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
UNTIL_STOPPED = ("vaultsync serve", "vaultsync watch", "vaultsync service run")


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


def _home(tmp: Path) -> Path:
    """What the examples expect of a person's machine: OpenClaw's default workspace with its life/, a vault
    Obsidian lists, and the memory of the docs' other examples in ~/clawd and ~/life."""
    home = tmp / "home"
    workspace = home / ".openclaw" / "workspace"
    shutil.copytree(ROOT / "vault-example" / "workspace", workspace)
    shutil.copytree(ROOT / "vault-example" / "life", workspace / "life")
    shutil.copytree(ROOT / "vault-example" / "workspace", home / "clawd")
    shutil.copytree(ROOT / "vault-example" / "life", home / "life")
    (home / "Obsidian" / "Memory" / ".obsidian").mkdir(parents=True)
    (home / ".config" / "obsidian").mkdir(parents=True)
    listing = f'{{"vaults": {{"a1": {{"path": "{home / "Obsidian" / "Memory"}", "ts": 1}}}}}}'
    (home / ".config" / "obsidian" / "obsidian.json").write_text(listing, encoding="utf-8")
    return home


def _until_stopped(command: str, env: dict[str, str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {command}"], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # each says what it serves or watches first; blocks until it has started
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return code, first


@pytest.fixture
def saved_crontab() -> object:
    if shutil.which("crontab") is None:
        yield None
        return
    before = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    yield before
    if before.returncode == 0:
        subprocess.run(["crontab", "-"], input=before.stdout, text=True, check=True)
    else:
        subprocess.run(["crontab", "-r"], capture_output=True, check=False)


def test_every_example_in_the_help_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved_crontab: object) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    home = _home(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULTSYNC_", "XDG_", "OPENCLAW_"))}
    env |= {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", "NO_COLOR": "1"}
    needs_cron = ("vaultsync schedule", "vaultsync service")
    ran, skipped = 0, []
    try:
        for path, examples in cli_help.EXAMPLES.items():
            if path == "extract":  # its examples need the program [extract] names
                config = home / ".config/vaultsync/config.toml"
                text = config.read_text(encoding="utf-8")
                program = f"command = \"{sys.executable} -c 'print([])'\""
                config.write_text(text.replace('[extract]\ncommand = ""', f"[extract]\n{program}"), "utf-8")
            for command, _ in examples:
                if command.startswith(needs_cron) and saved_crontab is None:
                    skipped.append(command)
                    continue
                if command.startswith(UNTIL_STOPPED):
                    code, first = _until_stopped(command, env, home)
                    assert code == 0 and first.startswith("vaultsync: "), f"{path}: {command}: {code} {first}"
                else:
                    done = subprocess.run(
                        ["bash", "-euo", "pipefail", "-c", command],
                        cwd=home,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=300,
                        stdin=subprocess.DEVNULL,
                    )
                    assert done.returncode in (0, 1), f"{path}: {command}\n{done.stdout}\n{done.stderr}"
                ran += 1
    finally:
        subprocess.run(["bash", "-c", "vaultsync service remove"], cwd=home, env=env, capture_output=True, check=False)
    assert ran >= 40 - len(skipped), (ran, skipped)
    assert (home / "Obsidian/Memory/.obsidian/plugins/vaultsync/main.js").is_file()
