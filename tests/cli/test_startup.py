"""The command line starting as a new user first runs it: a version, the config where XDG says, and a start on
systems without fcntl. Every case runs the real program in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO
from helpers.e2e import run_vaultsync

from vaultsync import __version__
from vaultsync.model import ExitCode


def test_version() -> None:
    done = run_vaultsync("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"vaultsync {__version__}"


def test_the_default_config_is_under_xdg_config_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg-config"
    config = xdg / "vaultsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[paths]\n", encoding="utf-8")  # invalid on purpose: the message names the file it read
    env = {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "home")}
    os.environ.pop("VAULTSYNC_CONFIG", None)
    done = run_vaultsync("status", env={**env, "VAULTSYNC_CONFIG": ""})
    assert done.returncode == ExitCode.USAGE
    assert str(config) in done.stderr, done.stderr


def test_the_cli_starts_where_fcntl_does_not_exist(tmp_path: Path) -> None:
    """Windows has no fcntl: importing the CLI and its lock must not need it."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['fcntl'] = None\n", encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = run_vaultsync("--help", env=env)
    assert done.returncode == 0, done.stderr
    probe = (
        "import vaultsync.system.lock, vaultsync.system.forked, vaultsync.engine.run, vaultsync.app.sync; print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, **env}, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr
