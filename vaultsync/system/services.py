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


def run_command(argv: list[str], timeout: float = 30) -> Said:
    if shutil.which(argv[0]) is None:
        return Said(127, f"{argv[0]} is not on PATH")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Said(1, str(exc))
    return Said(done.returncode, (done.stdout + done.stderr).strip())


def systemctl(*args: str) -> Said:
    return run_command(["systemctl", "--user", *args])


def systemd_present() -> bool:
    """Whether this machine runs systemd (its runtime folder exists) and has ``systemctl``."""
    return Path("/run/systemd/system").is_dir() and shutil.which("systemctl") is not None


def user_manager_up() -> bool:
    """Whether the user's systemd manager answers: without it (no login session, a container) units are only
    written, and the commands to enable them printed."""
    return systemd_present() and systemctl("show-environment").ok


def launchctl(*args: str) -> Said:
    return run_command(["launchctl", *args])


def launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def launchd_present() -> bool:
    return sys.platform == "darwin" and shutil.which("launchctl") is not None


def http_get(url: str, token: str = "", timeout: float = 5) -> Said:
    """GET ``url`` (with the bearer token when given): the HTTP status and body, or code 0 and why nothing
    answered. Loopback only is what vaultsync serves, so no proxy is asked."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as answer:
            return Said(answer.status, answer.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        return Said(exc.code, exc.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return Said(0, f"nothing answers at {url} ({reason})")
