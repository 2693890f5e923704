"""``vaultsync completion``: the scripts come from the parser, and bash, given the script, completes commands,
sub-commands, options and option values the way a person pressing Tab would see them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from helpers import REPO


@cache
def _script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "completion", shell],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("VAULTSYNC_")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _complete(tmp_path: Path, *words: str) -> list[str]:
    """What bash offers for the command line ``words`` (the last one being typed), through the script."""
    script = tmp_path / "vaultsync.bash"
    script.write_text(_script("bash"), encoding="utf-8")
    line = " ".join(f"'{w}'" for w in ("vaultsync", *words))
    program = (
        f'source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _vaultsync; printf "%s\\n" "${{COMPREPLY[@]}}"'
    )
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, cwd=tmp_path, check=True)
    return sorted(filter(None, done.stdout.splitlines()))


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_and_values(tmp_path: Path) -> None:
    assert _complete(tmp_path, "sy") == ["sync"]
    assert _complete(tmp_path, "s") == ["schedule", "serve", "service", "status", "sync"]
    assert _complete(tmp_path, "schedule", "in") == ["install"]
    assert _complete(tmp_path, "sync", "--dr") == ["--dry-run"]
    assert _complete(tmp_path, "schedule", "install", "--sy") == ["--systemd"]
    assert _complete(tmp_path, "recall", "words", "--status", "") == ["active", "all"]
    assert _complete(tmp_path, "completion", "") == ["bash", "fish", "zsh"]
    assert _complete(tmp_path, "recall", "--limit", "") == [], "a number is typed, not picked"
    (tmp_path / "my-config.toml").write_text("", encoding="utf-8")
    assert _complete(tmp_path, "sync", "--config", "my-") == ["my-config.toml"]
    # install under schedule and under service are two commands with their own options
    assert "--systemd" in _complete(tmp_path, "schedule", "install", "--")
    assert "--systemd" not in _complete(tmp_path, "service", "install", "--")
    assert "--json" in _complete(tmp_path, "status", "--")
    assert "--json" in _complete(tmp_path, "schedule", "status", "--")


def test_every_command_is_in_each_script() -> None:
    """A command added to the parser later is completed without touching the scripts."""
    help_text = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "--help"], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout
    names = help_text.split("{", 1)[1].split("}", 1)[0].split(",")
    assert "completion" in names and "sync" in names
    fish = _script("fish")
    zsh = _script("zsh")
    assert zsh.startswith("# vaultsync completion for zsh") and "bashcompinit" in zsh
    for name in names:
        assert f"-a {name} " in fish, name
        assert f'"/{name}"' in zsh, name
    assert "complete -c vaultsync -n '__fish_seen_subcommand_from recall' -l status -x -a 'active all'" in fish
