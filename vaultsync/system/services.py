"""The service managers, asked through their own commands: systemd's ``systemctl --user`` and launchd's
``launchctl``. Each call says what it got; none raises for a manager that is absent or does not answer, since
``service`` then prints the commands for the person to run instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Said:
    code: int  # 127: the command is not on PATH
    out: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def _run(argv: list[str], timeout: float = 30) -> Said:
    if shutil.which(argv[0]) is None:
        return Said(127, f"{argv[0]} is not on PATH")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Said(1, str(exc))
    return Said(done.returncode, (done.stdout + done.stderr).strip())


def systemctl(*args: str) -> Said:
    return _run(["systemctl", "--user", *args])


def systemd_present() -> bool:
    """Whether this machine runs systemd (its runtime folder exists) and has ``systemctl``."""
    return Path("/run/systemd/system").is_dir() and shutil.which("systemctl") is not None


def user_manager_up() -> bool:
    """Whether the user's systemd manager answers: without it (no login session, a container) units are only
    written, and the commands to enable them printed."""
    return systemd_present() and systemctl("show-environment").ok


def launchctl(*args: str) -> Said:
    return _run(["launchctl", *args])


def launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def launchd_present() -> bool:
    return sys.platform == "darwin" and shutil.which("launchctl") is not None
