"""What a command cannot use is refused in words, never read as something else: a number out of range is a usage
error (exit 2) naming the option, however it is written; and a command asked for ``--json`` that fails prints one
JSON object on standard output (kind, message, hint, exit code) as well as its line on standard error, the same
for every command. The real program runs in a subprocess on a synced vault."""

from __future__ import annotations

import argparse
import fcntl
import json
import subprocess
from pathlib import Path

import pytest
from helpers.e2e import run_vaultsync
from helpers.twoway import Env

from vaultsync.cli import help as cli_help
from vaultsync.cli import parser as cli_parser
from vaultsync.model import ExitCode

REFUSED = [
    ("log", "--limit", "0"),
    ("log", "--limit", "-3"),
    ("recall", "tea", "--limit", "-1"),
    ("recall", "tea", "--limit", "0"),
    ("recall", "tea", "--limit", "ten"),
    ("sync", "--batch", "-5"),
    ("sync", "--batch", "1.5"),
    ("serve", "--port", "0"),
    ("serve", "--port", "70000"),
    ("service", "install", "--port", "-1"),
    ("service", "run", "--port", "65536"),
    ("service", "run", "--every", "7m"),
    ("service", "install", "--every", "0m"),
    ("schedule", "install", "--every", "90m"),
]


@pytest.mark.parametrize("argv", REFUSED, ids=" ".join)
def test_a_number_a_command_cannot_use_is_a_usage_error(env: Env, argv: tuple[str, ...]) -> None:
    done = run_vaultsync(*argv, "--config", str(env.config_path))
    option, value = argv[-2:]
    assert done.returncode == ExitCode.USAGE, done.stdout + done.stderr
    assert f"argument {option}: '{value}'" in done.stderr, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_the_smallest_numbers_that_mean_something_are_taken(env: Env) -> None:
    one = run_vaultsync("log", "--limit", "1", "--json", "--config", str(env.config_path))
    assert one.returncode == 0 and len(json.loads(one.stdout)["changes"]) == 1, one.stderr
    every = run_vaultsync("sync", "--batch", "0", "--json", "--config", str(env.config_path))  # 0: all at once
    assert every.returncode == 0, every.stderr


def test_no_option_takes_a_number_unchecked() -> None:
    """Every option holding a number (its default one) reads it through a checked type, never bare ``int``."""
    unchecked = []
    for path, parser in cli_help.parsers(cli_parser.build()).items():
        for action in parser._actions:  # argparse has no public list of a parser's options
            number = isinstance(action.default, int) and not isinstance(action.default, bool)
            if action.type is int or (number and action.type is None and action.nargs != 0):
                unchecked.append(f"{path} {'/'.join(action.option_strings)}")
            if isinstance(action, argparse._StoreAction) and action.metavar == "N" and action.type in (None, int):
                unchecked.append(f"{path} {'/'.join(action.option_strings)}")
    assert unchecked == []


def _one_document(stdout: str) -> dict[str, object]:
    document = json.loads(stdout)  # the whole of standard output is the one object
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize(
    ("argv", "kind", "words"),
    [
        (("log", "--limit", "0", "--json"), "usage", "argument --limit: '0'"),
        (("sync", "-nj", "--batch", "-5"), "usage", "argument --batch: '-5'"),
        (("recall", "tea", "--json", "--since", "soon"), "invalid", "--since: 'soon' is not a date"),
        (("recall", "tea", "-j", "--kind", "poems"), "invalid", "--kind poems: expected some of"),
        (("log", "nobody-at-all", "--json"), "not_found", "nobody-at-all"),
        (("extract", "--json"), "config", "no [extract] command in"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v,
)
def test_under_json_an_error_is_a_json_object_too(env: Env, argv: tuple[str, ...], kind: str, words: str) -> None:
    done = run_vaultsync(*argv, "--config", str(env.config_path))
    assert done.returncode == ExitCode.USAGE, done.stdout + done.stderr
    error = _one_document(done.stdout)
    assert set(error) == {"kind", "message", "hint", "exit_code"}
    assert error["kind"] == kind and error["exit_code"] == ExitCode.USAGE
    assert words in str(error["message"]) and error["hint"], error
    assert words in done.stderr  # the line on standard error stays


def test_without_json_an_error_is_the_line_alone(env: Env) -> None:
    done = run_vaultsync("recall", "tea", "--since", "soon", "--config", str(env.config_path))
    assert done.returncode == ExitCode.USAGE and done.stdout == ""
    assert done.stderr == "vaultsync: --since: 'soon' is not a date; use YYYY-MM-DD\n"


def test_a_missing_config_under_json_says_its_fix_as_the_hint(tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    done = run_vaultsync("status", "--json", "--config", str(missing))
    assert done.returncode == ExitCode.USAGE
    assert _one_document(done.stdout) == {
        "kind": "config",
        "message": f"{missing}: no config file",
        "hint": "create one with `vaultsync init`",
        "exit_code": 2,
    }
    assert done.stderr == f"vaultsync: {missing}: no config file; create one with `vaultsync init`\n"


@pytest.mark.parametrize("argv", [("sync", "--json"), ("status", "-j"), ("review", "--json"), ("janitor", "-j")])
def test_a_held_lock_under_json_is_a_busy_object(env: Env, argv: tuple[str, ...]) -> None:
    lock = env.cfg.state_dir / "lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = run_vaultsync(*argv, "--config", str(env.config_path))
    assert done.returncode == ExitCode.LOCKED, done.stdout + done.stderr
    error = _one_document(done.stdout)
    assert error["kind"] == "busy" and error["hint"] == "try again when it ends" and error["exit_code"] == 3
    assert "another pass is running (lock held); try again when it ends" in done.stderr


def test_a_crash_under_json_is_an_object_too(env: Env, tmp_path: Path) -> None:
    state = env.cfg.state_dir
    subprocess.run(["rm", "-rf", str(state)], check=True)
    state.write_text("a file where the state folder belongs\n", encoding="utf-8")
    done = run_vaultsync("sync", "--json", "--config", str(env.config_path), env={"XDG_STATE_HOME": str(tmp_path)})
    assert done.returncode == ExitCode.CRASH, done.stdout + done.stderr
    error = _one_document(done.stdout)
    assert error["kind"] == "crash" and str(error["message"]).startswith("crashed (")
    assert "please report it" in str(error["hint"]) and done.stderr.startswith("vaultsync: crashed (")
