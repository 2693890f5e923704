"""The documentation keeps up with the code: every command, option and exit code is in docs/cli.md, every page
the README links to exists, every link between the docs lands on a page and a heading that exist, and the two
explanatory pages stay short enough to read.

The command line is read the way a person reads it, from ``python -m vaultsync.cli --help`` and each command's
``--help``, so a command or option added later is picked up without touching this file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from helpers import REPO

from vaultsync.git import run as gitrun
from vaultsync.model import ExitCode

DOCS = REPO / "docs"
CLI_MD = DOCS / "cli.md"
MAX_BYTES = {"architecture.md": 15 * 1024, "performance.md": 15 * 1024}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _help(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTSYNC_")}
    # A wide, colourless help text: argparse wraps at $COLUMNS and colours its output on newer Pythons.
    env |= {"COLUMNS": "200", "NO_COLOR": "1", "PYTHON_COLORS": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _usage(text: str) -> str:
    """The usage paragraph of a help text (it may wrap over several lines; it lists every option)."""
    return text.split("\n\n", 1)[0]


@cache
def commands() -> tuple[str, ...]:
    """The commands, from the ``{init,sync,...}`` choice in the top-level usage."""
    found = re.search(r"\{([\w,-]+)\}", _usage(_help()))
    assert found, "no {command,...} choice in `vaultsync --help`"
    return tuple(found.group(1).split(","))


@cache
def options(command: str) -> tuple[str, ...]:
    """The long options of one command, from its help's list of options (``--help`` left out): the usage line
    shows the short form of an option that has one."""
    found = re.findall(r"(?m)^ {2}(?:-\w(?: [A-Z_]+)?, )?(--[a-z][\w-]*)", _help(command))
    return tuple(dict.fromkeys(o for o in found if o != "--help"))


def _cli_md() -> str:
    return CLI_MD.read_text(encoding="utf-8")


def _synopsis(command: str) -> str:
    """The line for ``command`` in the synopsis block at the top of docs/cli.md."""
    block = re.search(r"```\n(.*?)```", _cli_md(), re.S)
    assert block, "docs/cli.md has no synopsis block"
    lines = [line for line in block.group(1).splitlines() if re.match(rf"vaultsync\s+{re.escape(command)}\b", line)]
    assert lines, f"`vaultsync {command}` is missing from the synopsis at the top of docs/cli.md"
    return lines[0]


def _section(text: str, heading: str) -> str:
    """The text under a heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    found = re.search(rf"(?m)^{re.escape(heading)}\s*$", text)
    assert found, f"no heading {heading!r}"
    rest = text[found.end() :]
    end = re.search(rf"(?m)^#{{1,{level}}} ", rest)
    return rest[: end.start()] if end else rest


def test_the_command_line_is_read_from_its_help() -> None:
    # The parsing below finds what exists today; if it finds nothing, every other test here passes vacuously.
    assert {"init", "sync", "status"} <= set(commands())
    assert {"--config", "--dry-run", "--json", "--yes", "--batch"} <= set(options("sync"))


@pytest.mark.parametrize("command", commands())
def test_every_command_has_a_synopsis_line_and_a_section(command: str) -> None:
    _synopsis(command)
    assert re.search(rf"(?m)^## vaultsync {re.escape(command)}\s*$", _cli_md()), (
        f"docs/cli.md has no `## vaultsync {command}` section"
    )


@pytest.mark.parametrize("command", commands())
def test_every_option_is_in_the_synopsis_and_explained(command: str) -> None:
    synopsis = _synopsis(command)
    prose = _cli_md().replace(synopsis, "")
    for option in options(command):
        assert re.search(rf"{re.escape(option)}(?![\w-])", synopsis), (
            f"`vaultsync {command} {option}` is missing from the synopsis at the top of docs/cli.md"
        )
        # Explained: named in code (`--batch N`) or as a heading (### --batch N) somewhere besides the synopsis.
        assert re.search(rf"(?m)(`|^#+ ){re.escape(option)}(?![\w-])", prose), (
            f"`vaultsync {command} {option}` is in the synopsis of docs/cli.md but explained nowhere"
        )


def test_every_exit_code_is_in_the_table() -> None:
    table = _section(_cli_md(), "## Exit codes")
    documented = {int(code) for code in re.findall(r"(?m)^\|\s*(\d+)\s*\|", table)}
    missing = sorted(int(code) for code in ExitCode if int(code) not in documented)
    assert not missing, f"exit code(s) {missing} missing from the table under `## Exit codes` in docs/cli.md"
    unknown = sorted(documented - {int(code) for code in ExitCode})
    assert not unknown, f"docs/cli.md documents exit code(s) {unknown} that vaultsync.model.ExitCode does not have"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    return {_slug(h) for h in re.findall(r"(?m)^#{1,6} (.+)$", text)}


def _links(page: Path) -> list[tuple[Path, str]]:
    """Relative links of a markdown page, as (target path, anchor); web links are left out."""
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    found = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        path, _, anchor = target.partition("#")
        found.append(((page.parent / path).resolve() if path else page, anchor))
    return found


def test_every_page_the_readme_links_to_exists() -> None:
    readme = REPO / "README.md"
    linked = [path for path, _ in _links(readme)]
    assert any(path.parent == DOCS for path in linked), "README.md links to no page under docs/"
    missing = [str(path.relative_to(REPO)) for path in linked if not path.exists()]
    assert not missing, f"README.md links to missing page(s): {missing}"
    documented = {path for path in linked if path.parent == DOCS}
    unlisted = sorted(p.name for p in DOCS.glob("*.md") if p not in documented)
    assert not unlisted, f"docs page(s) not listed in README.md's Documentation: {unlisted}"


@pytest.mark.parametrize("page", ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md"))])
def test_links_between_the_docs_land(page: str) -> None:
    source = REPO / page
    broken = []
    for path, anchor in _links(source):
        if not path.exists():
            broken.append(f"{path.relative_to(REPO)} (no such file)")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{path.relative_to(REPO)}#{anchor} (no such heading)")
    assert not broken, f"{page} links to: {broken}"


@pytest.mark.parametrize("name", sorted(MAX_BYTES))
def test_the_explanations_stay_short(name: str) -> None:
    size = len((DOCS / name).read_bytes())
    assert size <= MAX_BYTES[name], (
        f"docs/{name} is {size} bytes, over {MAX_BYTES[name]}: explain the design there and move figures of "
        "single runs to benchmarks/ (see docs/contributing.md)"
    )


@pytest.mark.parametrize("page", ["docs/performance.md", "docs/architecture.md", "docs/contributing.md"])
def test_docs_name_no_path_of_one_machine(page: str) -> None:
    text = (REPO / page).read_text(encoding="utf-8")
    found = re.findall(r"(?<![\w.~])/(?:home|work|tmp|Users|root|opt|srv|mnt|var)/[^\s`)|]*", text)
    assert not found, f"{page} names absolute path(s) of one machine: {found}"


def _runner():
    """benchmarks/report.py, which writes the generated part of docs/performance.md for benchmarks/run.py."""
    if str(REPO / "benchmarks") not in sys.path:
        sys.path.insert(0, str(REPO / "benchmarks"))
    import report as run

    return run


def test_performance_md_keeps_its_text_around_the_generated_part() -> None:
    run = _runner()
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    assert text.count(run.DOC_BEGIN) == 1 and text.count(run.DOC_END) == 1, "the generated part's markers"
    head, rest = text.split(run.DOC_BEGIN)
    generated, tail = rest.split(run.DOC_END)
    assert "## Targets" in head and "## What makes it fast" in tail
    assert run.splice(text, generated) == text
    rewritten = run.splice(text, "## Latest results\n\nnew figures\n")
    assert rewritten == f"{head}{run.DOC_BEGIN}\n## Latest results\n\nnew figures\n{run.DOC_END}{tail}"
    # A doc without the markers loses nothing: the generated part goes at its end.
    assert run.splice("# Performance\n\nhand-written\n", "figures").startswith("# Performance\n\nhand-written\n")


def test_the_benchmark_command_is_shown_without_one_machines_folders() -> None:
    run = _runner()
    assert run.portable(str(REPO / ".venv" / "bin" / "python")) == ".venv/bin/python"
    assert run.portable(str(REPO / "benchmarks" / "run.py")) == "benchmarks/run.py"
    assert run.portable("/tmp/s14/runU.json") == "runU.json"
    assert run.portable("--json=/tmp/s14/runU.json") == "--json=runU.json"
    assert run.portable("--scale") == "--scale"


def _folder_map() -> dict[str, set[str]]:
    """The modules docs/architecture.md's folder map names, by folder ("" for the top of the package)."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"## The folder map\s+```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no folder map"
    named: dict[str, set[str]] = {}
    folder = ""
    for line in block.group(1).splitlines()[1:]:
        head = re.match(r"  (\S+)", line)
        if head:
            folder = head.group(1).rstrip("/") if head.group(1).endswith("/") else ""
        named.setdefault(folder, set()).update(re.findall(r"\b([a-z_]+)\.py\b", line))
    return named


def test_the_folder_map_names_what_is_there() -> None:
    package = REPO / "vaultsync"
    named = _folder_map()
    missing = sorted(
        f"vaultsync/{folder + '/' if folder else ''}{name}.py"
        for folder, names in named.items()
        for name in names
        if not (package / folder / f"{name}.py").is_file()
    )
    assert not missing, f"docs/architecture.md's folder map names modules that do not exist: {missing}"
    folders = sorted(p.name for p in package.iterdir() if (p / "__init__.py").is_file())
    unmapped = [f for f in folders if f not in named]
    assert not unmapped, f"docs/architecture.md's folder map leaves out vaultsync/{unmapped}"


def test_the_wait_for_a_git_lock_is_the_one_the_docs_state() -> None:
    """Tests of a stale lock shorten the wait (the ``short_lock_wait`` fixture), so the figure a person reads in
    safety.md and two-way.md is held to the code here."""
    sentences = {
        "safety.md": r"index\.lock`,\s+vaultsync\s+retries\s+for\s+up\s+to\s+(\d+)\s+seconds",
        "two-way.md": r"vaultsync\s+waits\s+up\s+to\s+(\d+)\s+seconds\s+for\s+another\s+git\s+process",
    }
    for page, sentence in sentences.items():
        stated = re.findall(sentence, (DOCS / page).read_text(encoding="utf-8"))
        assert [float(n) for n in stated] == [gitrun.LOCK_WAIT_SECONDS], (page, stated)
