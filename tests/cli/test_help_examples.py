"""Every example a command's ``--help`` shows runs as written on a temporary home (tests/cli/test_help.py checks
that each help has them). An example "runs" when it exits 0, or 1 where 1 means done with something for the
person to look at (review findings, a link doctor names); a command that runs until stopped (serve, watch,
service run) runs when it starts, says so on its first line, and stops with 0 on SIGTERM. The schedule's and the
service's examples write the user's crontab, so this file's tests hold the crontab lock (tests/conftest.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import isolate_git

from vaultsync.cli import help as cli_help

ROOT = REPO
UNTIL_STOPPED = ("vaultsync serve", "vaultsync watch", "vaultsync service run")


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
